#include "report/json.h"

#include <inttypes.h>

static void sep(struct trlat_json *j, const char *key);

/* Length of a valid UTF-8 sequence at p (1..4), or 0. */
static int utf8_len(const unsigned char *p)
{
    int n = *p >= 0xf0 && *p <= 0xf4 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc2 && *p < 0xe0 ? 2 : 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* Kernel names and paths are not guaranteed UTF-8: invalid bytes become
 * U+FFFD so strict parsers accept the report. */
static void put_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p >= 0x80) {
            int n = utf8_len(p);
            if (n == 0) {
                fputs("\\ufffd", o);
            } else {
                fwrite(p, 1, (size_t)n, o);
                p += n - 1;
            }
            continue;
        }
        switch (*p) {
        case '"': fputs("\\\"", o); break;
        case '\\': fputs("\\\\", o); break;
        case '\n': fputs("\\n", o); break;
        case '\t': fputs("\\t", o); break;
        case '\r': fputs("\\r", o); break;
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

void trlat_json_obj(struct trlat_json *j, const char *key) { open_(j, key, '{'); }
void trlat_json_arr(struct trlat_json *j, const char *key) { open_(j, key, '['); }
void trlat_json_end_obj(struct trlat_json *j) { close_(j, '}'); }
void trlat_json_end_arr(struct trlat_json *j) { close_(j, ']'); }

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
