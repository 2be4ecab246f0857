#include "report/cli/check.h"
#include "report/cli/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ld_fail(struct ld *ld, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_format_error(ld->err, ld->errlen, ld->plen ? ld->path : NULL, fmt, ap);
    va_end(ap);
    longjmp(ld->jmp, 1);
}

/* Appends the n bytes at s to the path (cut where it is full). A copy, not
 * snprintf: every field of every event is pushed. */
static void append(struct ld *ld, const char *s, size_t n)
{
    size_t room = sizeof ld->path - 1 - ld->plen;
    n = n < room ? n : room;
    memcpy(ld->path + ld->plen, s, n);
    ld->plen += n;
    ld->path[ld->plen] = 0;
}

size_t ld_push_key(struct ld *ld, const char *key)
{
    size_t mark = ld->plen;
    if (mark)
        append(ld, ".", 1);
    append(ld, key, strlen(key));
    return mark;
}

size_t ld_push_index(struct ld *ld, size_t i)
{
    size_t mark = ld->plen;
    char digits[24], *p = digits + sizeof digits;
    *--p = ']';
    do
        *--p = (char)('0' + i % 10);
    while (i /= 10);
    *--p = '[';
    append(ld, p, (size_t)(digits + sizeof digits - p));
    return mark;
}

void ld_pop(struct ld *ld, size_t mark)
{
    ld->plen = mark;
    ld->path[mark] = 0;
}

const char *ld_describe(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return json_integer_value(v) < 0 ? "a negative number" : "a number";
    case JSON_REAL:
        return "a fractional number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    default:
        return "null";
    }
}

uint64_t ld_as_u64(struct ld *ld, const json_t *v)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        ld_fail(ld, "expected a whole number from 0 to 2^63-1, got %s", ld_describe(v));
    return (uint64_t)json_integer_value(v);
}

const char *ld_as_str(struct ld *ld, const json_t *v)
{
    if (!json_is_string(v))
        ld_fail(ld, "expected a string, got %s", ld_describe(v));
    return json_string_value(v);
}

void ld_need(struct ld *ld, const json_t *v, json_type type, const char *what)
{
    if (!v || json_typeof(v) != type)
        ld_fail(ld, "expected %s, got %s", what, v ? ld_describe(v) : "nothing");
}

const json_t *ld_field(struct ld *ld, const json_t *obj, const char *key, int req)
{
    const json_t *v = json_object_get(obj, key);
    if (!v && req)
        ld_fail(ld, "missing field \"%s\"", key);
    return (v && !json_is_null(v)) ? v : NULL;
}

uint64_t ld_get_u64(struct ld *ld, const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    if (!v)
        ld_fail(ld, "missing field \"%s\"", key);
    size_t mark = ld_push_key(ld, key);
    uint64_t x = ld_as_u64(ld, v);
    ld_pop(ld, mark);
    return x;
}

struct cli_u64 ld_get_opt_u64(struct ld *ld, const json_t *obj, const char *key)
{
    struct cli_u64 r = {false, 0};
    const json_t *v = ld_field(ld, obj, key, LD_OPT);
    if (v) {
        size_t mark = ld_push_key(ld, key);
        r.v = ld_as_u64(ld, v);
        r.set = true;
        ld_pop(ld, mark);
    }
    return r;
}

const char *ld_get_str(struct ld *ld, const json_t *obj, const char *key, int req)
{
    const json_t *v = ld_field(ld, obj, key, req);
    size_t mark = ld_push_key(ld, key);
    if (!v && req)
        ld_fail(ld, "expected a string, got null");
    const char *s = v ? ld_as_str(ld, v) : NULL;
    ld_pop(ld, mark);
    return s;
}

static bool json_oom;

static void *json_malloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        json_oom = true;
    return p;
}

void cli_json_parsing(void)
{
    static bool installed;
    if (!installed)
        json_set_alloc_funcs(json_malloc, free);
    installed = true;
    json_oom = false;
}

void ld_json_error(struct ld *ld, const struct cli_text *t, const json_error_t *je, uint64_t pos, int line, int col,
                   bool whole)
{
    unsigned long long size = t->size;
    char human[32];
    if (json_oom || json_error_code(je) == json_error_out_of_memory || !je->text[0])
        ld_fail(ld, "out of memory reading this report (%s)", cli_fmt_size(human, sizeof human, size));
    switch (json_error_code(je)) {
    case json_error_premature_end_of_input:
        if (whole)
            ld_fail(ld, "truncated at byte %llu (not valid JSON)", size);
        break;
    case json_error_invalid_utf8:
        ld_fail(ld, "not a JSON report (invalid UTF-8 at byte %llu)", (unsigned long long)pos);
    case json_error_numeric_overflow:
        ld_fail(ld, "line %d, column %d: number out of range (whole numbers go from 0 to 2^63-1)", line, col);
    default:
        break;
    }
    ld_fail(ld, "not valid JSON (line %d, column %d: %s)", line, col, je->text);
}
