#include "report/cli_load.h"
#include "report/cli_util.h"

#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define CLI_HIST_SCHEME TRLAT_HIST_SCHEME

const char *const cli_python_counts[CLI_PY_COUNTS] = {"calls", "nested_calls", "calls_one_launch",
                                                      "calls_multi_launch", "warmup", "error", "other"};
const char *const cli_gpu_counters[CLI_GPU_COUNTERS] = {"kernel_records",     "devices",
                                                        "busy_ns",            "starved_ns",
                                                        "starved_launches",   "stream_starved_ns",
                                                        "dropped_records",    "untimed_records",
                                                        "late_records",       "unjoined_records",
                                                        "joined_by_trlat_id", "other_kernel_records"};

/* Loader state: the JSON path of the value being read, for messages, and
 * where a failure jumps to (every allocation hangs off the report, so
 * cli_report_free releases a half-built one). */
struct ld {
    jmp_buf jmp;
    char *err;
    size_t errlen;
    char path[192];
    size_t plen;
};

static _Noreturn __attribute__((format(printf, 2, 3))) void fail(struct ld *ld, const char *fmt, ...)
{
    int n = ld->plen ? snprintf(ld->err, ld->errlen, "%s: ", ld->path) : 0;
    if (n < 0 || (size_t)n >= ld->errlen)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ld->err + n, ld->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    longjmp(ld->jmp, 1);
}

/* Path bookkeeping: push returns the mark that pop restores. */
static size_t push_key(struct ld *ld, const char *key)
{
    size_t mark = ld->plen;
    int n = snprintf(ld->path + mark, sizeof ld->path - mark, "%s%s", mark ? "." : "", key);
    if (n > 0)
        ld->plen = mark + (size_t)n < sizeof ld->path ? mark + (size_t)n : sizeof ld->path - 1;
    return mark;
}

static size_t push_index(struct ld *ld, size_t i)
{
    size_t mark = ld->plen;
    int n = snprintf(ld->path + mark, sizeof ld->path - mark, "[%zu]", i);
    if (n > 0)
        ld->plen = mark + (size_t)n < sizeof ld->path ? mark + (size_t)n : sizeof ld->path - 1;
    return mark;
}

static void pop(struct ld *ld, size_t mark)
{
    ld->plen = mark;
    ld->path[mark] = 0;
}

static const char *describe(const json_t *v)
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

/* Type checks of the value at the current path. */
static uint64_t as_u64(struct ld *ld, const json_t *v)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        fail(ld, "expected a whole number from 0 to 2^63-1, got %s", describe(v));
    return (uint64_t)json_integer_value(v);
}

static const char *as_str(struct ld *ld, const json_t *v)
{
    if (!json_is_string(v))
        fail(ld, "expected a string, got %s", describe(v));
    return json_string_value(v);
}

static void need(struct ld *ld, const json_t *v, json_type type, const char *what)
{
    if (!v || json_typeof(v) != type)
        fail(ld, "expected %s, got %s", what, v ? describe(v) : "nothing");
}

/* Field access. A missing required field fails; an optional one and null
 * read as NULL. */
enum { REQ = 1, OPT = 0 };

static const json_t *field(struct ld *ld, const json_t *obj, const char *key, int req)
{
    const json_t *v = json_object_get(obj, key);
    if (!v && req)
        fail(ld, "missing field \"%s\"", key);
    return (v && !json_is_null(v)) ? v : NULL;
}

static uint64_t get_u64(struct ld *ld, const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    if (!v)
        fail(ld, "missing field \"%s\"", key);
    size_t mark = push_key(ld, key);
    uint64_t x = as_u64(ld, v);
    pop(ld, mark);
    return x;
}

static struct cli_u64 get_opt_u64(struct ld *ld, const json_t *obj, const char *key)
{
    struct cli_u64 r = {false, 0};
    const json_t *v = field(ld, obj, key, OPT);
    if (v) {
        size_t mark = push_key(ld, key);
        r.v = as_u64(ld, v);
        r.set = true;
        pop(ld, mark);
    }
    return r;
}

static const char *get_str(struct ld *ld, const json_t *obj, const char *key, int req)
{
    const json_t *v = field(ld, obj, key, req);
    size_t mark = push_key(ld, key);
    if (!v && req)
        fail(ld, "expected a string, got null");
    const char *s = v ? as_str(ld, v) : NULL;
    pop(ld, mark);
    return s;
}

static void load_hist(struct ld *ld, const json_t *hist, struct trlat_stat *s)
{
    need(ld, hist, JSON_ARRAY, "an array of [bucket, count] pairs");
    uint64_t total = 0;
    long prev = -1;
    for (size_t i = 0; i < json_array_size(hist); i++) {
        size_t mark = push_index(ld, i);
        const json_t *pair = json_array_get(hist, i);
        if (!json_is_array(pair) || json_array_size(pair) != 2)
            fail(ld, "expected a [bucket, count] pair, got %s", describe(pair));
        uint64_t idx = as_u64(ld, json_array_get(pair, 0));
        uint64_t n = as_u64(ld, json_array_get(pair, 1));
        if (idx >= TRLAT_HIST_BUCKETS)
            fail(ld, "bucket %llu is outside the %s scheme (0 to %u)", (unsigned long long)idx,
                 CLI_HIST_SCHEME, TRLAT_HIST_BUCKETS - 1);
        if ((long)idx <= prev)
            fail(ld, "buckets are not in ascending order");
        if (!cli_add(&total, n))
            fail(ld, "bucket counts add up to more than 2^63-1");
        s->hist[idx] = n;
        prev = (long)idx;
        pop(ld, mark);
    }
}

static void load_stat(struct ld *ld, const json_t *obj, const char *key, int req, struct cli_stat *st)
{
    const json_t *v = field(ld, obj, key, req);
    size_t mark = push_key(ld, key);
    if (!v && req)
        fail(ld, "expected a STATS object, got null");
    if (v) {
        need(ld, v, JSON_OBJECT, "a STATS object");
        struct trlat_stat *s = &st->s;
        s->count = get_u64(ld, v, "count");
        s->sum = get_u64(ld, v, "sum");
        s->min = get_u64(ld, v, "min");
        s->max = get_u64(ld, v, "max");
        get_opt_u64(ld, v, "p50");
        get_opt_u64(ld, v, "p90");
        get_opt_u64(ld, v, "p99");
        if (s->count && s->min > s->max)
            fail(ld, "min is greater than max");
        size_t m2 = push_key(ld, "hist");
        load_hist(ld, field(ld, v, "hist", REQ), s);
        pop(ld, m2);
        st->set = true;
    }
    pop(ld, mark);
}

static void load_sources(struct ld *ld, const json_t *k, struct cli_kernel *kn)
{
    const json_t *v = field(ld, k, "sources", REQ);
    size_t mark = push_key(ld, "sources");
    need(ld, v, JSON_OBJECT, "an object");
    kn->src_driver = get_u64(ld, v, "driver");
    kn->src_runtime = get_u64(ld, v, "runtime");
    pop(ld, mark);
}

static void load_fastpath(struct ld *ld, const json_t *k, struct cli_fastpath *fp)
{
    const json_t *v = field(ld, k, "fastpath", OPT);
    if (!v)
        return;
    size_t mark = push_key(ld, "fastpath");
    need(ld, v, JSON_OBJECT, "an object or null");
    fp->set = true;
    fp->hits = get_u64(ld, v, "hits");
    fp->misses = get_u64(ld, v, "misses");
    const json_t *fb = field(ld, v, "fallbacks", OPT);
    if (fb) {
        size_t m2 = push_key(ld, "fallbacks");
        need(ld, fb, JSON_OBJECT, "an object");
        fp->fallbacks = cli_xcalloc(json_object_size(fb), sizeof *fp->fallbacks);
        const char *reason;
        const json_t *n;
        json_object_foreach((json_t *)fb, reason, n) {
            struct cli_count *c = &fp->fallbacks[fp->n_fallbacks++];
            c->name = reason;
            c->n = get_u64(ld, fb, reason);
        }
        pop(ld, m2);
    }
    pop(ld, mark);
}

static void load_sites(struct ld *ld, const json_t *k, struct cli_kernel *kn)
{
    const json_t *v = field(ld, k, "call_sites", OPT);
    if (!v)
        return;
    size_t mark = push_key(ld, "call_sites");
    need(ld, v, JSON_ARRAY, "an array");
    kn->sites = cli_xcalloc(json_array_size(v), sizeof *kn->sites);
    for (size_t i = 0; i < json_array_size(v); i++) {
        size_t m2 = push_index(ld, i);
        const json_t *s = json_array_get(v, i);
        need(ld, s, JSON_OBJECT, "an object");
        struct cli_site *site = &kn->sites[kn->n_sites++];
        site->site = get_str(ld, s, "site", REQ);
        site->kind = get_str(ld, s, "kind", OPT);
        site->launches = get_u64(ld, s, "launches");
        pop(ld, m2);
    }
    pop(ld, mark);
}

static void load_kernel(struct ld *ld, const json_t *k, struct cli_kernel *kn)
{
    need(ld, k, JSON_OBJECT, "an object");
    kn->name = get_str(ld, k, "name", REQ);
    kn->module = get_str(ld, k, "module", OPT);
    kn->launches = get_u64(ld, k, "launches");
    load_sources(ld, k, kn);
    kn->errors = get_opt_u64(ld, k, "errors").v;
    load_stat(ld, k, "driver_ns", REQ, &kn->driver);
    load_stat(ld, k, "gap_ns", OPT, &kn->gap);
    load_stat(ld, k, "py_to_driver_ns", OPT, &kn->py);
    load_stat(ld, k, "py_return_ns", OPT, &kn->ret); /* reports since 6199f00 have it */
    load_stat(ld, k, "gpu_ns", OPT, &kn->gpu);
    kn->starved = get_opt_u64(ld, k, "starved_ns");
    kn->starved_launches = get_opt_u64(ld, k, "starved_launches");
    load_fastpath(ld, k, &kn->fastpath);
    load_sites(ld, k, kn);
}

static void load_kernels(struct ld *ld, const json_t *root, struct cli_report *r)
{
    const json_t *v = field(ld, root, "kernels", REQ);
    size_t mark = push_key(ld, "kernels");
    need(ld, v, JSON_ARRAY, "an array");
    r->n_kernels = json_array_size(v);
    r->kernels = cli_xcalloc(r->n_kernels, sizeof *r->kernels);
    for (size_t i = 0; i < r->n_kernels; i++) {
        size_t m2 = push_index(ld, i);
        load_kernel(ld, json_array_get(v, i), &r->kernels[i]);
        pop(ld, m2);
    }
    pop(ld, mark);
}

static void load_dims(struct ld *ld, const json_t *ev, const char *key, uint64_t out[3])
{
    const json_t *v = field(ld, ev, key, REQ);
    size_t mark = push_key(ld, key);
    if (!json_is_array(v) || json_array_size(v) != 3)
        fail(ld, "expected an array of 3 whole numbers");
    for (size_t i = 0; i < 3; i++) {
        size_t m2 = push_index(ld, i);
        out[i] = as_u64(ld, json_array_get(v, i));
        pop(ld, m2);
    }
    pop(ld, mark);
}

static void load_launch_event(struct ld *ld, const json_t *ev, struct cli_event *e)
{
    e->tid = get_opt_u64(ld, ev, "tid");
    e->py = get_opt_u64(ld, ev, "py_ns");
    e->corr = get_opt_u64(ld, ev, "corr");
    const json_t *stream = field(ld, ev, "stream", OPT);
    if (stream) {
        size_t mark = push_key(ld, "stream");
        e->stream_handle = as_str(ld, stream);
        pop(ld, mark);
    }
    if (field(ld, ev, "grid", OPT) || field(ld, ev, "block", OPT)) {
        load_dims(ld, ev, "grid", e->grid);
        load_dims(ld, ev, "block", e->block);
        e->has_dims = true;
    }
}

/* Returns false for an event of a kind this version does not know. */
static bool load_event(struct ld *ld, const json_t *ev, struct cli_event *e)
{
    need(ld, ev, JSON_OBJECT, "an object");
    const char *kind = get_str(ld, ev, "kind", REQ);
    if (strcmp(kind, "launch") == 0)
        e->kind = CLI_EV_LAUNCH;
    else if (strcmp(kind, "gpu") == 0)
        e->kind = CLI_EV_GPU;
    else if (strcmp(kind, "starved") == 0)
        e->kind = CLI_EV_STARVED;
    else
        return false;
    e->kernel = get_str(ld, ev, "kernel", REQ);
    e->start = get_u64(ld, ev, "start_ns");
    e->end = get_u64(ld, ev, "end_ns");
    e->pid = get_opt_u64(ld, ev, "pid");
    if (e->kind == CLI_EV_LAUNCH) {
        load_launch_event(ld, ev, e);
        return true;
    }
    e->device = get_opt_u64(ld, ev, "device");
    e->stream = get_opt_u64(ld, ev, "stream");
    if (e->kind == CLI_EV_GPU) {
        e->corr = get_opt_u64(ld, ev, "corr");
        e->cupti_corr = get_opt_u64(ld, ev, "cupti_corr");
        e->source = get_str(ld, ev, "source", OPT);
    } else {
        e->scope = get_str(ld, ev, "scope", OPT);
    }
    return true;
}

static void load_events(struct ld *ld, const json_t *root, struct cli_report *r)
{
    const json_t *v = field(ld, root, "events", OPT);
    if (!v)
        return;
    size_t mark = push_key(ld, "events");
    need(ld, v, JSON_ARRAY, "an array");
    r->events = cli_xcalloc(json_array_size(v), sizeof *r->events);
    for (size_t i = 0; i < json_array_size(v); i++) {
        size_t m2 = push_index(ld, i);
        if (load_event(ld, json_array_get(v, i), &r->events[r->n_events]))
            r->n_events++;
        pop(ld, m2);
    }
    pop(ld, mark);
}

static void load_clock(struct ld *ld, const json_t *obj, struct cli_clock *c)
{
    const json_t *v = field(ld, obj, "clock", OPT);
    if (!v)
        return;
    size_t mark = push_key(ld, "clock");
    need(ld, v, JSON_OBJECT, "an object");
    c->source = get_str(ld, v, "source", REQ);
    c->epoch_mono = get_opt_u64(ld, v, "epoch_monotonic_ns");
    c->epoch_real = get_opt_u64(ld, v, "epoch_realtime_ns");
    pop(ld, mark);
}

static void load_config(struct ld *ld, const json_t *root, struct cli_report *r)
{
    r->config.stacks = -1;
    const json_t *v = field(ld, root, "config", OPT);
    if (!v)
        return;
    size_t mark = push_key(ld, "config");
    need(ld, v, JSON_OBJECT, "an object");
    r->config.cupti = get_str(ld, v, "cupti", OPT);
    r->config.cupti_reason = get_str(ld, v, "cupti_reason", OPT);
    r->config.fastpath = get_str(ld, v, "fastpath", OPT);
    r->config.timing = get_str(ld, v, "timing", OPT);
    const json_t *stacks = field(ld, v, "stacks", OPT);
    if (stacks) {
        size_t m2 = push_key(ld, "stacks");
        if (!json_is_boolean(stacks))
            fail(ld, "expected true or false, got %s", describe(stacks));
        r->config.stacks = json_is_true(stacks);
        pop(ld, m2);
    }
    r->config.trace = get_opt_u64(ld, v, "trace");
    pop(ld, mark);
}

static void load_totals(struct ld *ld, const json_t *root, struct cli_report *r)
{
    const json_t *v = field(ld, root, "totals", REQ);
    size_t mark = push_key(ld, "totals");
    need(ld, v, JSON_OBJECT, "an object");
    r->totals.launches = get_u64(ld, v, "launches");
    r->totals.kernels = get_u64(ld, v, "kernels");
    r->totals.driver_ns = get_u64(ld, v, "driver_ns");
    r->totals.threads = get_opt_u64(ld, v, "threads");
    r->totals.py_to_driver_ns = get_opt_u64(ld, v, "py_to_driver_ns");
    r->totals.gpu_ns = get_opt_u64(ld, v, "gpu_ns");
    r->totals.gpu_busy_ns = get_opt_u64(ld, v, "gpu_busy_ns");
    r->totals.starved_ns = get_opt_u64(ld, v, "starved_ns");
    r->totals.dropped_records = get_opt_u64(ld, v, "dropped_records");
    r->totals.unnamed_launches = get_opt_u64(ld, v, "unnamed_launches");
    pop(ld, mark);
}

/* An optional top-level object: NULL when null or absent, else checked to
 * be an object with the path pushed (*mark restores it). */
static const json_t *open_object(struct ld *ld, const json_t *root, const char *key, size_t *mark)
{
    const json_t *v = field(ld, root, key, OPT);
    if (!v)
        return NULL;
    *mark = push_key(ld, key);
    need(ld, v, JSON_OBJECT, "an object or null");
    return v;
}

static void load_python(struct ld *ld, const json_t *root, struct cli_python *py)
{
    size_t mark;
    const json_t *v = open_object(ld, root, "python", &mark);
    if (!v)
        return;
    py->set = true;
    py->hook = get_str(ld, v, "hook", REQ);
    py->triton_version = get_str(ld, v, "triton_version", OPT);
    py->reason = get_str(ld, v, "reason", OPT);
    for (size_t i = 0; i < CLI_PY_NO_LAUNCH_WARMUP; i++)
        py->n[i] = get_u64(ld, v, cli_python_counts[i]);
    const json_t *without = field(ld, v, "calls_without_launch", REQ);
    size_t m2 = push_key(ld, "calls_without_launch");
    need(ld, without, JSON_OBJECT, "an object");
    for (size_t i = CLI_PY_NO_LAUNCH_WARMUP; i < CLI_PY_COUNTS; i++)
        py->n[i] = get_u64(ld, without, cli_python_counts[i]);
    pop(ld, m2);
    pop(ld, mark);
}

static void load_gpu(struct ld *ld, const json_t *root, struct cli_gpu *gpu)
{
    size_t mark;
    const json_t *v = open_object(ld, root, "gpu", &mark);
    if (!v)
        return;
    gpu->set = true;
    for (size_t i = 0; i < CLI_GPU_COUNTERS; i++)
        gpu->n[i] = get_u64(ld, v, cli_gpu_counters[i]);
    pop(ld, mark);
}

static void load_origin(struct ld *ld, const json_t *o, struct cli_origin *org)
{
    need(ld, o, JSON_OBJECT, "an object");
    org->pid = get_u64(ld, o, "pid");
    org->rank = get_opt_u64(ld, o, "rank");
    org->host = get_str(ld, o, "host", OPT);
    org->argv0 = get_str(ld, o, "argv0", OPT);
    load_clock(ld, o, &org->clock);
}

static void load_merged_from(struct ld *ld, const json_t *root, struct cli_report *r)
{
    const json_t *v = field(ld, root, "merged_from", OPT);
    if (!v)
        return;
    size_t mark = push_key(ld, "merged_from");
    need(ld, v, JSON_ARRAY, "an array");
    if (json_array_size(v) == 0)
        fail(ld, "is empty");
    r->merged_from = cli_xcalloc(json_array_size(v), sizeof *r->merged_from);
    r->n_merged = json_array_size(v);
    for (size_t i = 0; i < r->n_merged; i++) {
        size_t m2 = push_index(ld, i);
        load_origin(ld, json_array_get(v, i), &r->merged_from[i]);
        pop(ld, m2);
    }
    pop(ld, mark);
}

static void check_schema(struct ld *ld, const json_t *root)
{
    const json_t *schema = json_object_get(root, "schema");
    if (!json_is_string(schema))
        fail(ld, "not a trlat report (no \"schema\": \"%s\")", CLI_SCHEMA);
    if (strcmp(json_string_value(schema), CLI_SCHEMA) != 0)
        fail(ld, "schema \"%.64s\" is not supported (expected %s)", json_string_value(schema), CLI_SCHEMA);
    const char *scheme = get_str(ld, root, "hist_scheme", REQ);
    if (strcmp(scheme, CLI_HIST_SCHEME) != 0)
        fail(ld, "histogram scheme \"%.64s\" is not supported (expected %s)", scheme, CLI_HIST_SCHEME);
}

static void load_root(struct ld *ld, const json_t *root, struct cli_report *r)
{
    check_schema(ld, root);
    r->trlat_version = get_str(ld, root, "trlat_version", OPT);
    r->pid = get_u64(ld, root, "pid");
    r->rank = get_opt_u64(ld, root, "rank");
    r->local_rank = get_opt_u64(ld, root, "local_rank");
    r->world_size = get_opt_u64(ld, root, "world_size");
    r->host = get_str(ld, root, "host", OPT);
    r->argv0 = get_str(ld, root, "argv0", OPT);
    r->wall_ns = get_opt_u64(ld, root, "wall_ns");
    load_clock(ld, root, &r->clock);
    load_config(ld, root, r);
    load_totals(ld, root, r);
    load_python(ld, root, &r->python);
    load_gpu(ld, root, &r->gpu);
    load_kernels(ld, root, r);
    load_events(ld, root, r);
    load_merged_from(ld, root, r);
}

static void parse_error(struct ld *ld, const json_error_t *je, size_t len)
{
    if (len == 0)
        fail(ld, "file is empty");
    if (json_error_code(je) == json_error_invalid_utf8)
        fail(ld, "not a JSON report (invalid UTF-8 at byte %d)", je->position);
    if (json_error_code(je) == json_error_numeric_overflow)
        fail(ld, "line %d, column %d: number out of range (whole numbers go from 0 to 2^63-1)", je->line,
             je->column);
    fail(ld, "not valid JSON (line %d, column %d: %s)", je->line, je->column, je->text);
}

int cli_load_buffer(struct cli_report *r, const char *path, const char *buf, size_t len, char *err,
                    size_t errlen)
{
    struct ld ld = {.err = err, .errlen = errlen};
    memset(r, 0, sizeof *r);
    r->path = path;
    if (setjmp(ld.jmp)) {
        cli_one_line(err);
        cli_report_free(r);
        r->path = path;
        return -1;
    }
    json_error_t je;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        parse_error(&ld, &je, len);
    r->json = root;
    need(&ld, root, JSON_OBJECT, "a JSON object");
    load_root(&ld, root, r);
    return 0;
}

static char *read_all(FILE *f, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = cli_xmalloc(cap);
    for (;;) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        buf = cli_xrealloc(buf, cap, 2);
        cap *= 2;
    }
    *len = n;
    return buf;
}

void cli_load(struct cli_report *r, const char *path)
{
    int from_stdin = strcmp(path, "-") == 0;
    FILE *f = from_stdin ? stdin : fopen(path, "rb");
    if (!f)
        cli_fail(path, "cannot open: %s", strerror(errno));
    size_t len;
    char *buf = read_all(f, &len);
    int err_no = ferror(f) ? errno : 0;
    if (!from_stdin)
        fclose(f);
    char err[512];
    int rc = err_no ? -1 : cli_load_buffer(r, path, buf, len, err, sizeof err);
    free(buf);
    if (err_no)
        cli_fail(path, "cannot read: %s", strerror(err_no));
    if (rc != 0)
        cli_fail(path, "%s", err);
}

static void free_kernel(struct cli_kernel *k)
{
    free(k->fastpath.fallbacks);
    free(k->sites);
}

void cli_report_free(struct cli_report *r)
{
    for (size_t i = 0; i < r->n_kernels && r->kernels; i++)
        free_kernel(&r->kernels[i]);
    free(r->kernels);
    free(r->events);
    free(r->merged_from);
    json_decref(r->json);
    memset(r, 0, sizeof *r);
}

size_t cli_origins(const struct cli_report *r, struct cli_origin **out)
{
    size_t n = r->n_merged ? r->n_merged : 1;
    *out = cli_xcalloc(n, sizeof **out);
    if (r->n_merged) {
        memcpy(*out, r->merged_from, n * sizeof **out);
        return n;
    }
    (*out)[0] = (struct cli_origin){r->pid, r->rank, r->host, r->argv0, r->clock};
    return 1;
}
