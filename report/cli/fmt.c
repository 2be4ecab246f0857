#include "report/cli/fmt.h"
#include "report/cli/util.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Three significant digits of v followed by unit. */
static char *sig3(char buf[CLI_FMT_LEN], double v, const char *unit)
{
    int decimals = v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
    snprintf(buf, CLI_FMT_LEN, "%.*f %s", decimals, v, unit);
    return buf;
}

char *cli_fmt_ns(char buf[CLI_FMT_LEN], double ns)
{
    if (isnan(ns))
        return strcpy(buf, "-");
    if (ns < 999.5) {
        snprintf(buf, CLI_FMT_LEN, "%.0f ns", ns);
        return buf;
    }
    if (ns < 999.5e3)
        return sig3(buf, ns / 1e3, "µs");
    if (ns < 999.5e6)
        return sig3(buf, ns / 1e6, "ms");
    if (ns < 999.5e9)
        return sig3(buf, ns / 1e9, "s");
    snprintf(buf, CLI_FMT_LEN, "%.0f s", ns / 1e9);
    return buf;
}

char *cli_fmt_count(char buf[CLI_FMT_LEN], uint64_t n)
{
    char digits[24];
    int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n);
    char *p = buf;
    for (int i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0)
            *p++ = ',';
        *p++ = digits[i];
    }
    *p = 0;
    return buf;
}

char *cli_fmt_pct(char buf[CLI_FMT_LEN], double frac)
{
    if (isnan(frac))
        return strcpy(buf, "-");
    snprintf(buf, CLI_FMT_LEN, "%.1f%%", frac * 100.0);
    return buf;
}

char *cli_fmt_change(char buf[CLI_FMT_LEN], double frac)
{
    if (isnan(frac))
        return strcpy(buf, "-");
    if (isinf(frac))
        return strcpy(buf, frac > 0 ? "+inf" : "-inf");
    snprintf(buf, CLI_FMT_LEN, "%+.1f%%", frac * 100.0);
    return buf;
}

void cli_put_text(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(((unsigned char)*s < 0x20 || *s == 0x7f) ? '?' : *s, f);
}

size_t cli_text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

/* Rule rows hold this cell (compared by content: cells are copies). */
static const char rule_cell[] = "\x01";

void cli_table_init(struct cli_table *t, const char *align)
{
    *t = (struct cli_table){.align = align, .ncols = strlen(align)};
}

void cli_table_add(struct cli_table *t, const char *cell)
{
    if (t->ncells == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->cells = cli_xrealloc(t->cells, t->cap, sizeof *t->cells);
    }
    char *copy = cli_xstrdup(cell ? cell : "-");
    if (copy[0] != rule_cell[0])
        cli_one_line(copy); /* names may hold control characters */
    t->cells[t->ncells++] = copy;
}

void cli_table_row(struct cli_table *t, ...)
{
    va_list ap;
    va_start(ap, t);
    for (size_t i = 0; i < t->ncols; i++)
        cli_table_add(t, va_arg(ap, const char *));
    va_end(ap);
}

void cli_table_rule(struct cli_table *t)
{
    for (size_t i = 0; i < t->ncols; i++)
        cli_table_add(t, rule_cell);
}

int cli_table_is_rule(const struct cli_table *t, size_t i)
{
    return strcmp(t->cells[i], rule_cell) == 0;
}

static void print_rule(FILE *f, size_t width)
{
    for (size_t i = 0; i < width; i++)
        fputc('-', f);
}

void cli_table_print(const struct cli_table *t, FILE *f, const char *indent)
{
    size_t *width = cli_xcalloc(t->ncols, sizeof *width);
    for (size_t i = 0; i < t->ncells; i++) {
        size_t w = cli_table_is_rule(t, i) ? 0 : cli_text_width(t->cells[i]);
        if (w > width[i % t->ncols])
            width[i % t->ncols] = w;
    }
    for (size_t i = 0; i < t->ncells; i++) {
        size_t col = i % t->ncols;
        size_t pad = width[col] - cli_text_width(t->cells[i]);
        int last = col == t->ncols - 1;
        if (col == 0)
            fputs(indent, f);
        else if (!last || t->cells[i][0])
            fputs("  ", f);
        if (cli_table_is_rule(t, i)) {
            print_rule(f, width[col]);
            if (last)
                fputc('\n', f);
            continue;
        }
        if (t->align[col] == 'r')
            fprintf(f, "%*s", (int)pad, "");
        fputs(t->cells[i], f);
        if (t->align[col] != 'r' && !last)
            fprintf(f, "%*s", (int)pad, "");
        if (last)
            fputc('\n', f);
    }
    free(width);
}

void cli_table_free(struct cli_table *t)
{
    for (size_t i = 0; i < t->ncells; i++)
        free(t->cells[i]);
    free(t->cells);
    t->cells = NULL;
    t->ncells = t->cap = 0;
}

void cli_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void cli_json_us(FILE *f, uint64_t ns)
{
    fprintf(f, "%llu.%03u", (unsigned long long)(ns / 1000), (unsigned)(ns % 1000));
}

#define DUMP_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))

static int dump_compact(FILE *f, const json_t *v)
{
    return json_dumpf(v, f, DUMP_FLAGS | JSON_ENCODE_ANY);
}

static int dump_array(FILE *f, const json_t *a)
{
    size_t n = json_array_size(a);
    if (n == 0 || !json_is_object(json_array_get(a, 0)))
        return dump_compact(f, a);
    fputs("[\n", f);
    for (size_t i = 0; i < n; i++) {
        fputs("    ", f);
        if (dump_compact(f, json_array_get(a, i)) != 0)
            return -1;
        fputs(i + 1 < n ? ",\n" : "\n", f);
    }
    fputs("  ]", f);
    return 0;
}

int cli_json_dump_with(FILE *f, const void *json, const char *streamed, int (*write)(FILE *, void *), void *ctx)
{
    const json_t *root = json;
    if (!json_is_object(root))
        return dump_compact(f, root);
    const char *key;
    json_t *v;
    size_t i = 0, n = json_object_size(root);
    fputs("{\n", f);
    json_object_foreach((json_t *)root, key, v)
    {
        fputs("  ", f);
        cli_json_str(f, key);
        fputs(": ", f);
        int rc = streamed && strcmp(key, streamed) == 0 ? write(f, ctx)
                 : json_is_array(v)                     ? dump_array(f, v)
                                                        : dump_compact(f, v);
        if (rc != 0)
            return -1;
        fputs(++i < n ? ",\n" : "\n", f);
    }
    fputs("}\n", f);
    return ferror(f) ? -1 : 0;
}

int cli_json_dump(FILE *f, const void *json)
{
    return cli_json_dump_with(f, json, NULL, NULL, NULL);
}

int cli_json_item(FILE *f, const void *item, size_t *n)
{
    fputs((*n)++ ? ",\n    " : "[\n    ", f);
    return dump_compact(f, item);
}

void cli_json_items_end(FILE *f, size_t n)
{
    fputs(n ? "\n  ]" : "[]", f);
}
