#include "report/cli/scan.h"

#include <stdio.h>
#include <string.h>

/* Deeper than jansson's JSON_PARSER_MAX_DEPTH (2048): what the scanner
 * refuses for its depth, jansson refuses too. */
#define MAX_DEPTH 4096

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_delim(int c)
{
    return is_ws((char)c) || (c && strchr(",:[]{}\"", c));
}

void cli_scan_ws(struct cli_rd *r)
{
    for (;;) {
        const char *p = r->b + r->pos, *e = r->b + r->lim;
        while (p < e && is_ws(*p))
            p++;
        r->pos = (size_t)(p - r->b);
        if (p < e || !cli_rd_fill(r))
            return;
    }
}

/* From after the opening quote to past the closing one. */
static int skip_string(struct cli_rd *r)
{
    for (;;) {
        const char *p = r->b + r->pos, *e = r->b + r->lim;
        while (p < e && *p != '"' && *p != '\\')
            p++;
        r->pos = (size_t)(p - r->b);
        if (p == e) {
            if (!cli_rd_fill(r))
                return CLI_SCAN_END;
            continue;
        }
        r->pos++;
        if (*p == '"')
            return CLI_SCAN_OK;
        if (cli_rd_get(r) < 0) /* the escaped byte */
            return CLI_SCAN_END;
    }
}

/* An object or array, from its opening bracket; brackets must match. */
static int skip_nested(struct cli_rd *r, const char **what)
{
    char closer[MAX_DEPTH];
    size_t depth = 0;
    for (;;) {
        if (r->pos == r->lim && !cli_rd_fill(r))
            return CLI_SCAN_END;
        char c = r->b[r->pos++];
        switch (c) {
        case '"':
            if (skip_string(r) != CLI_SCAN_OK)
                return CLI_SCAN_END;
            break;
        case '{':
        case '[':
            if (depth == MAX_DEPTH) {
                *what = "maximum parsing depth reached";
                return CLI_SCAN_BAD;
            }
            closer[depth++] = c == '{' ? '}' : ']';
            break;
        case '}':
        case ']':
            if (closer[depth - 1] != c) {
                *what = c == '}' ? "unexpected '}'" : "unexpected ']'";
                return CLI_SCAN_BAD;
            }
            if (--depth == 0)
                return CLI_SCAN_OK;
            break;
        default:
            break;
        }
    }
}

static const char *unexpected(int c)
{
    switch (c) {
    case ',':
        return "unexpected ','";
    case ':':
        return "unexpected ':'";
    case ']':
        return "unexpected ']'";
    default:
        return "unexpected '}'";
    }
}

int cli_scan_value(struct cli_rd *r, const char **what)
{
    int c = cli_rd_peek(r);
    if (c < 0)
        return CLI_SCAN_END;
    if (c == '"') {
        r->pos++;
        return skip_string(r);
    }
    if (c == '{' || c == '[')
        return skip_nested(r, what);
    size_t n = 0;
    while ((c = cli_rd_peek(r)) >= 0 && !is_delim(c)) {
        r->pos++;
        n++;
    }
    if (n)
        return CLI_SCAN_OK;
    r->pos++;
    *what = unexpected(c);
    return CLI_SCAN_BAD;
}

/* From after a key's opening quote to past its closing one. *events: the
 * key is "events" written plainly (an escaped spelling stays in the
 * document, for jansson). */
static int read_key(struct cli_rd *r, bool *events)
{
    char k[6];
    size_t n = 0;
    bool plain = true;
    for (;;) {
        int c = cli_rd_get(r);
        if (c < 0)
            return CLI_SCAN_END;
        if (c == '"')
            break;
        if (c == '\\') {
            plain = false;
            if (cli_rd_get(r) < 0)
                return CLI_SCAN_END;
            continue;
        }
        if (n < sizeof k)
            k[n] = (char)c;
        n++;
    }
    *events = plain && n == sizeof k && memcmp(k, "events", sizeof k) == 0;
    return CLI_SCAN_OK;
}

static void bad(struct cli_layout *lay, const struct cli_rd *r, const char *what)
{
    lay->bad_at = cli_rd_tell(r);
    snprintf(lay->bad, sizeof lay->bad, "%s", what);
}

/* The events array, from its '['. */
static void scan_events(struct cli_rd *r, struct cli_layout *lay)
{
    const char *what;
    lay->split = true;
    lay->at = cli_rd_tell(r);
    lay->end = r->t->size; /* unless its ']' comes */
    r->pos++;
    cli_scan_ws(r);
    if (cli_rd_peek(r) == ']') {
        r->pos++;
        lay->end = cli_rd_tell(r);
        return;
    }
    for (;;) {
        cli_scan_ws(r);
        int s = cli_scan_value(r, &what);
        if (s == CLI_SCAN_BAD)
            bad(lay, r, what);
        if (s != CLI_SCAN_OK)
            return;
        cli_scan_ws(r);
        int c = cli_rd_get(r);
        if (c == ']')
            lay->end = cli_rd_tell(r);
        else if (c >= 0 && c != ',')
            bad(lay, r, "',' or ']' expected after an event");
        if (c != ',')
            return;
    }
}

void cli_scan_layout(const struct cli_text *t, struct cli_layout *lay)
{
    memset(lay, 0, sizeof *lay);
    struct cli_rd r;
    cli_rd_open(&r, t, 0);
    cli_scan_ws(&r);
    int c = cli_rd_get(&r);
    lay->opens = c == '{' || c == '[';
    cli_scan_ws(&r);
    /* The members up to "events"; whatever is amiss before it, jansson
     * finds and says. */
    bool more = c == '{' && cli_rd_peek(&r) != '}';
    while (more) {
        bool events;
        const char *what;
        cli_scan_ws(&r);
        if (cli_rd_get(&r) != '"' || read_key(&r, &events) != CLI_SCAN_OK)
            break;
        cli_scan_ws(&r);
        if (cli_rd_get(&r) != ':')
            break;
        cli_scan_ws(&r);
        if (events && cli_rd_peek(&r) == '[') {
            scan_events(&r, lay);
            break;
        }
        if (cli_scan_value(&r, &what) != CLI_SCAN_OK)
            break;
        cli_scan_ws(&r);
        more = cli_rd_get(&r) == ',';
    }
    lay->read_err = r.err;
    cli_rd_close(&r);
}
