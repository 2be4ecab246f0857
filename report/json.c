#include "report/json.h"

#include <inttypes.h>

static void sep(struct trlat_json *j, const char *key);

/* The UTF-8 sequence at p: its length (1..4) when valid, else minus the
 * length of its maximal subpart (the lead byte and the continuation bytes
 * that could still begin a valid sequence; Unicode's recommended unit for
 * one U+FFFD), at least 1. Overlong forms, surrogates (U+D800..DFFF) and
 * code points above U+10FFFF are invalid. Never reads past a NUL. */
static int utf8_seq(const unsigned char *p)
{
    unsigned char c = p[0], lo = 0x80, hi = 0xbf; /* the second byte's range */
    int n;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    else
        return -1; /* a continuation byte, C0, C1, F5..FF */
    for (int i = 1; i < n; i++, lo = 0x80, hi = 0xbf)
        if (p[i] < lo || p[i] > hi)
            return -i;
    return n;
}

/* Kernel names and paths are not guaranteed UTF-8: each invalid sequence
 * becomes one U+FFFD so strict parsers accept the report. */
static void put_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p >= 0x80) {
            int n = utf8_seq(p);
            if (n < 0)
                fputs("\\ufffd", o);
            else
                fwrite(p, 1, (size_t)n, o);
            p += (n < 0 ? -n : n) - 1;
            continue;
        }
        switch (*p) {
        case '"':
            fputs("\\\"", o);
            break;
        case '\\':
            fputs("\\\\", o);
            break;
        case '\n':
            fputs("\\n", o);
            break;
        case '\t':
            fputs("\\t", o);
            break;
        case '\r':
            fputs("\\r", o);
            break;
        default:
            if (*p < 0x20)
                fprintf(o, "\\u%04x", *p);
            else
                fputc(*p, o);
        }
    }
    fputc('"', o);
}

static void sep(struct trlat_json *j, const char *key)
{
    if (j->depth > 0 && j->need_comma[j->depth])
        fputc(',', j->out);
    if (j->depth > 0)
        j->need_comma[j->depth] = 1;
    if (key) {
        put_str(j->out, key);
        fputc(':', j->out);
    }
}

static void open_(struct trlat_json *j, const char *key, char c)
{
    sep(j, key);
    fputc(c, j->out);
    if (j->depth < (int)sizeof j->need_comma - 1)
        j->depth++;
    j->need_comma[j->depth] = 0;
}

static void close_(struct trlat_json *j, char c)
{
    fputc(c, j->out);
    if (j->depth > 0)
        j->depth--;
    if (j->depth == 0)
        fputc('\n', j->out);
}

void trlat_json_begin(struct trlat_json *j, FILE *out)
{
    j->out = out;
    j->depth = 0;
}

void trlat_json_obj(struct trlat_json *j, const char *key)
{
    open_(j, key, '{');
}
void trlat_json_arr(struct trlat_json *j, const char *key)
{
    open_(j, key, '[');
}
void trlat_json_end_obj(struct trlat_json *j)
{
    close_(j, '}');
}
void trlat_json_end_arr(struct trlat_json *j)
{
    close_(j, ']');
}

void trlat_json_str(struct trlat_json *j, const char *key, const char *v)
{
    sep(j, key);
    if (v)
        put_str(j->out, v);
    else
        fputs("null", j->out);
}

void trlat_json_u64(struct trlat_json *j, const char *key, uint64_t v)
{
    sep(j, key);
    fprintf(j->out, "%" PRIu64, v);
}

void trlat_json_i64(struct trlat_json *j, const char *key, int64_t v)
{
    sep(j, key);
    fprintf(j->out, "%" PRId64, v);
}

void trlat_json_bool(struct trlat_json *j, const char *key, int v)
{
    sep(j, key);
    fputs(v ? "true" : "false", j->out);
}

void trlat_json_null(struct trlat_json *j, const char *key)
{
    sep(j, key);
    fputs("null", j->out);
}
