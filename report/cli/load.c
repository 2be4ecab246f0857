#include "report/cli/check.h"
#include "report/cli/util.h"

#include <stdlib.h>
#include <string.h>

#define CLI_HIST_SCHEME TRLAT_HIST_SCHEME

const char *const cli_python_counts[CLI_PY_COUNTS] = {
    "calls", "nested_calls", "calls_one_launch", "calls_multi_launch", "warmup", "error", "other"};
const char *const cli_gpu_counters[CLI_GPU_COUNTERS] = {"kernel_records",
                                                        "devices",
                                                        "busy_ns",
                                                        "starved_ns",
                                                        "starved_launches",
                                                        "stream_starved_ns",
                                                        "dropped_records",
                                                        "untimed_records",
                                                        "late_records",
                                                        "unjoined_records",
                                                        "joined_by_trlat_id",
                                                        "other_kernel_records"};

static void load_hist(struct ld *ld, const json_t *hist, struct trlat_stat *s)
{
    ld_need(ld, hist, JSON_ARRAY, "an array of [bucket, count] pairs");
    uint64_t total = 0;
    long prev = -1;
    for (size_t i = 0; i < json_array_size(hist); i++) {
        size_t mark = ld_push_index(ld, i);
        const json_t *pair = json_array_get(hist, i);
        if (!json_is_array(pair) || json_array_size(pair) != 2)
            ld_fail(ld, "expected a [bucket, count] pair, got %s", ld_describe(pair));
        uint64_t idx = ld_as_u64(ld, json_array_get(pair, 0));
        uint64_t n = ld_as_u64(ld, json_array_get(pair, 1));
        if (idx >= TRLAT_HIST_BUCKETS)
            ld_fail(ld, "bucket %llu is outside the %s scheme (0 to %u)", (unsigned long long)idx, CLI_HIST_SCHEME,
                    TRLAT_HIST_BUCKETS - 1);
        if ((long)idx <= prev)
            ld_fail(ld, "buckets are not in ascending order");
        if (!cli_add(&total, n))
            ld_fail(ld, "bucket counts add up to more than 2^63-1");
        s->hist[idx] = n;
        prev = (long)idx;
        ld_pop(ld, mark);
    }
}

static void load_stat(struct ld *ld, const json_t *obj, const char *key, int req, struct cli_stat *st)
{
    const json_t *v = ld_field(ld, obj, key, req);
    size_t mark = ld_push_key(ld, key);
    if (!v && req)
        ld_fail(ld, "expected a STATS object, got null");
    if (v) {
        ld_need(ld, v, JSON_OBJECT, "a STATS object");
        struct trlat_stat *s = &st->s;
        s->count = ld_get_u64(ld, v, "count");
        s->sum = ld_get_u64(ld, v, "sum");
        s->min = ld_get_u64(ld, v, "min");
        s->max = ld_get_u64(ld, v, "max");
        ld_get_opt_u64(ld, v, "p50");
        ld_get_opt_u64(ld, v, "p90");
        ld_get_opt_u64(ld, v, "p99");
        if (s->count && s->min > s->max)
            ld_fail(ld, "min is greater than max");
        size_t m2 = ld_push_key(ld, "hist");
        load_hist(ld, ld_field(ld, v, "hist", LD_REQ), s);
        ld_pop(ld, m2);
        st->set = true;
    }
    ld_pop(ld, mark);
}

static void load_sources(struct ld *ld, const json_t *k, struct cli_kernel *kn)
{
    const json_t *v = ld_field(ld, k, "sources", LD_REQ);
    size_t mark = ld_push_key(ld, "sources");
    ld_need(ld, v, JSON_OBJECT, "an object");
    kn->src_driver = ld_get_u64(ld, v, "driver");
    kn->src_runtime = ld_get_u64(ld, v, "runtime");
    ld_pop(ld, mark);
}

static void load_fastpath(struct ld *ld, const json_t *k, struct cli_fastpath *fp)
{
    const json_t *v = ld_field(ld, k, "fastpath", LD_OPT);
    if (!v)
        return;
    size_t mark = ld_push_key(ld, "fastpath");
    ld_need(ld, v, JSON_OBJECT, "an object or null");
    fp->set = true;
    fp->hits = ld_get_u64(ld, v, "hits");
    fp->misses = ld_get_u64(ld, v, "misses");
    if ((fp->has_library = ld_field(ld, v, "library_hits", LD_OPT) != NULL)) /* newer reports */
        fp->library_hits = ld_get_u64(ld, v, "library_hits");
    const json_t *fb = ld_field(ld, v, "fallbacks", LD_OPT);
    if (fb) {
        size_t m2 = ld_push_key(ld, "fallbacks");
        ld_need(ld, fb, JSON_OBJECT, "an object");
        fp->fallbacks = cli_xcalloc(json_object_size(fb), sizeof *fp->fallbacks);
        const char *reason;
        const json_t *n;
        json_object_foreach((json_t *)fb, reason, n)
        {
            struct cli_count *c = &fp->fallbacks[fp->n_fallbacks++];
            c->name = reason;
            c->n = ld_get_u64(ld, fb, reason);
        }
        ld_pop(ld, m2);
    }
    ld_pop(ld, mark);
}

static void load_sites(struct ld *ld, const json_t *k, struct cli_kernel *kn)
{
    const json_t *v = ld_field(ld, k, "call_sites", LD_OPT);
    if (!v)
        return;
    size_t mark = ld_push_key(ld, "call_sites");
    ld_need(ld, v, JSON_ARRAY, "an array");
    kn->sites = cli_xcalloc(json_array_size(v), sizeof *kn->sites);
    for (size_t i = 0; i < json_array_size(v); i++) {
        size_t m2 = ld_push_index(ld, i);
        const json_t *s = json_array_get(v, i);
        ld_need(ld, s, JSON_OBJECT, "an object");
        struct cli_site *site = &kn->sites[kn->n_sites++];
        site->site = ld_get_str(ld, s, "site", LD_REQ);
        site->kind = ld_get_str(ld, s, "kind", LD_OPT);
        site->user = ld_get_str(ld, s, "user_site", LD_OPT);
        site->launches = ld_get_u64(ld, s, "launches");
        site->gap_ns = ld_get_opt_u64(ld, s, "gap_ns");
        site->triton_ns = ld_get_opt_u64(ld, s, "triton_ns");
        site->library_ns = ld_get_opt_u64(ld, s, "library_ns");
        ld_pop(ld, m2);
    }
    ld_pop(ld, mark);
}

const char *const cli_phase_keys[CLI_PHASES] = {"before_launcher", "launcher", "bind", "cache_grid", "launch_metadata"};

static void load_phases(struct ld *ld, const json_t *k, struct cli_phases *ph)
{
    const json_t *v = ld_field(ld, k, "py_phases_ns", LD_OPT);
    if (!v)
        return;
    size_t mark = ld_push_key(ld, "py_phases_ns");
    ld_need(ld, v, JSON_OBJECT, "an object");
    ph->set = true;
    ph->calls = ld_get_u64(ld, v, "calls");
    ph->split_calls = ld_get_u64(ld, v, "split_calls");
    for (int i = 0; i < CLI_PHASES; i++)
        ph->ns[i] = ld_get_u64(ld, v, cli_phase_keys[i]);
    ld_pop(ld, mark);
}

static void load_library(struct ld *ld, const json_t *k, struct cli_library *lib)
{
    const json_t *v = ld_field(ld, k, "py_library_ns", LD_OPT);
    if (!v)
        return;
    size_t mark = ld_push_key(ld, "py_library_ns");
    ld_need(ld, v, JSON_OBJECT, "an object");
    lib->set = true;
    lib->calls = ld_get_u64(ld, v, "calls");
    lib->ns = ld_get_u64(ld, v, "sum");
    ld_pop(ld, mark);
}

static void load_kernel(struct ld *ld, const json_t *k, struct cli_kernel *kn)
{
    ld_need(ld, k, JSON_OBJECT, "an object");
    kn->name = ld_get_str(ld, k, "name", LD_REQ);
    kn->module = ld_get_str(ld, k, "module", LD_OPT);
    kn->launches = ld_get_u64(ld, k, "launches");
    load_sources(ld, k, kn);
    kn->errors = ld_get_opt_u64(ld, k, "errors").v;
    load_stat(ld, k, "driver_ns", LD_REQ, &kn->driver);
    load_stat(ld, k, "gap_ns", LD_OPT, &kn->gap);
    load_stat(ld, k, "py_to_driver_ns", LD_OPT, &kn->py);
    load_stat(ld, k, "py_return_ns", LD_OPT, &kn->ret); /* reports since 6199f00 have it */
    load_stat(ld, k, "gpu_ns", LD_OPT, &kn->gpu);
    kn->starved = ld_get_opt_u64(ld, k, "starved_ns");
    kn->starved_launches = ld_get_opt_u64(ld, k, "starved_launches");
    load_fastpath(ld, k, &kn->fastpath);
    load_phases(ld, k, &kn->phases);
    load_library(ld, k, &kn->library);
    load_sites(ld, k, kn);
}

static void load_kernels(struct ld *ld, const json_t *root, struct cli_report *r)
{
    const json_t *v = ld_field(ld, root, "kernels", LD_REQ);
    size_t mark = ld_push_key(ld, "kernels");
    ld_need(ld, v, JSON_ARRAY, "an array");
    r->n_kernels = json_array_size(v);
    r->kernels = cli_xcalloc(r->n_kernels, sizeof *r->kernels);
    for (size_t i = 0; i < r->n_kernels; i++) {
        size_t m2 = ld_push_index(ld, i);
        load_kernel(ld, json_array_get(v, i), &r->kernels[i]);
        ld_pop(ld, m2);
    }
    ld_pop(ld, mark);
}

/* The events stay in the text (or, when the scanner left them in the
 * document, in the tree); they are read one at a time (cli_events), here
 * to check and count them unless the caller reads them all later. */
static void load_events(struct ld *ld, const json_t *root, struct cli_report *r, int flags)
{
    const json_t *v = ld_field(ld, root, "events", LD_OPT);
    if (v) {
        size_t mark = ld_push_key(ld, "events");
        ld_need(ld, v, JSON_ARRAY, "an array");
        ld_pop(ld, mark);
    }
    r->events_json = r->layout.split ? NULL : v;
    if (flags & CLI_LOAD_EVENTS_LATER)
        return;
    struct cli_events it;
    struct cli_event e;
    int got;
    cli_events_open(&it, r);
    while ((got = cli_events_next(&it, &e, ld->err, ld->errlen)) > 0)
        r->n_events++;
    cli_events_close(&it);
    if (got < 0)
        longjmp(ld->jmp, 1);
}

static void load_clock(struct ld *ld, const json_t *obj, struct cli_clock *c)
{
    const json_t *v = ld_field(ld, obj, "clock", LD_OPT);
    if (!v)
        return;
    size_t mark = ld_push_key(ld, "clock");
    ld_need(ld, v, JSON_OBJECT, "an object");
    c->source = ld_get_str(ld, v, "source", LD_REQ);
    c->epoch_mono = ld_get_opt_u64(ld, v, "epoch_monotonic_ns");
    c->epoch_real = ld_get_opt_u64(ld, v, "epoch_realtime_ns");
    ld_pop(ld, mark);
}

static void load_config(struct ld *ld, const json_t *root, struct cli_report *r)
{
    r->config.stacks = -1;
    const json_t *v = ld_field(ld, root, "config", LD_OPT);
    if (!v)
        return;
    size_t mark = ld_push_key(ld, "config");
    ld_need(ld, v, JSON_OBJECT, "an object");
    r->config.cupti = ld_get_str(ld, v, "cupti", LD_OPT);
    r->config.cupti_reason = ld_get_str(ld, v, "cupti_reason", LD_OPT);
    r->config.fastpath = ld_get_str(ld, v, "fastpath", LD_OPT);
    r->config.fastpath_state = ld_get_str(ld, v, "fastpath_state", LD_OPT);
    r->config.fastpath_reason = ld_get_str(ld, v, "fastpath_reason", LD_OPT);
    r->config.timing = ld_get_str(ld, v, "timing", LD_OPT);
    const json_t *stacks = ld_field(ld, v, "stacks", LD_OPT);
    if (stacks) {
        size_t m2 = ld_push_key(ld, "stacks");
        if (!json_is_boolean(stacks))
            ld_fail(ld, "expected true or false, got %s", ld_describe(stacks));
        r->config.stacks = json_is_true(stacks);
        ld_pop(ld, m2);
    }
    r->config.trace = ld_get_opt_u64(ld, v, "trace");
    ld_pop(ld, mark);
}

static void load_totals(struct ld *ld, const json_t *root, struct cli_report *r)
{
    const json_t *v = ld_field(ld, root, "totals", LD_REQ);
    size_t mark = ld_push_key(ld, "totals");
    ld_need(ld, v, JSON_OBJECT, "an object");
    r->totals.launches = ld_get_u64(ld, v, "launches");
    r->totals.kernels = ld_get_u64(ld, v, "kernels");
    r->totals.driver_ns = ld_get_u64(ld, v, "driver_ns");
    r->totals.threads = ld_get_opt_u64(ld, v, "threads");
    r->totals.py_to_driver_ns = ld_get_opt_u64(ld, v, "py_to_driver_ns");
    r->totals.gpu_ns = ld_get_opt_u64(ld, v, "gpu_ns");
    r->totals.gpu_busy_ns = ld_get_opt_u64(ld, v, "gpu_busy_ns");
    r->totals.starved_ns = ld_get_opt_u64(ld, v, "starved_ns");
    r->totals.dropped_records = ld_get_opt_u64(ld, v, "dropped_records");
    r->totals.unnamed_launches = ld_get_opt_u64(ld, v, "unnamed_launches");
    r->totals.trace_lost = ld_get_opt_u64(ld, v, "trace_lost");
    ld_pop(ld, mark);
}

/* An optional top-level object: NULL when null or absent, else checked to
 * be an object with the path pushed (*mark restores it). */
static const json_t *open_object(struct ld *ld, const json_t *root, const char *key, size_t *mark)
{
    const json_t *v = ld_field(ld, root, key, LD_OPT);
    if (!v)
        return NULL;
    *mark = ld_push_key(ld, key);
    ld_need(ld, v, JSON_OBJECT, "an object or null");
    return v;
}

static void load_python(struct ld *ld, const json_t *root, struct cli_python *py)
{
    size_t mark;
    const json_t *v = open_object(ld, root, "python", &mark);
    if (!v)
        return;
    py->set = true;
    py->hook = ld_get_str(ld, v, "hook", LD_REQ);
    py->triton_version = ld_get_str(ld, v, "triton_version", LD_OPT);
    py->reason = ld_get_str(ld, v, "reason", LD_OPT);
    for (size_t i = 0; i < CLI_PY_NO_LAUNCH_WARMUP; i++)
        py->n[i] = ld_get_u64(ld, v, cli_python_counts[i]);
    const json_t *without = ld_field(ld, v, "calls_without_launch", LD_REQ);
    size_t m2 = ld_push_key(ld, "calls_without_launch");
    ld_need(ld, without, JSON_OBJECT, "an object");
    for (size_t i = CLI_PY_NO_LAUNCH_WARMUP; i < CLI_PY_COUNTS; i++)
        py->n[i] = ld_get_u64(ld, without, cli_python_counts[i]);
    ld_pop(ld, m2);
    ld_pop(ld, mark);
}

static void load_gpu(struct ld *ld, const json_t *root, struct cli_gpu *gpu)
{
    size_t mark;
    const json_t *v = open_object(ld, root, "gpu", &mark);
    if (!v)
        return;
    gpu->set = true;
    for (size_t i = 0; i < CLI_GPU_COUNTERS; i++)
        gpu->n[i] = ld_get_u64(ld, v, cli_gpu_counters[i]);
    ld_pop(ld, mark);
}

static void load_regions(struct ld *ld, const json_t *root, struct cli_report *r)
{
    const json_t *v = ld_field(ld, root, "regions", LD_OPT);
    if (!v)
        return;
    size_t mark = ld_push_key(ld, "regions");
    ld_need(ld, v, JSON_ARRAY, "an array");
    r->regions = cli_xcalloc(json_array_size(v) + 1, sizeof *r->regions);
    for (size_t i = 0; i < json_array_size(v); i++) {
        size_t m2 = ld_push_index(ld, i);
        const json_t *o = json_array_get(v, i);
        ld_need(ld, o, JSON_OBJECT, "an object");
        struct cli_region *g = &r->regions[r->n_regions++];
        g->name = ld_get_str(ld, o, "name", LD_REQ);
        g->launches = ld_get_u64(ld, o, "launches");
        g->driver_ns = ld_get_u64(ld, o, "driver_ns");
        g->py_ns = ld_get_u64(ld, o, "py_to_driver_ns");
        g->ret_ns = ld_get_u64(ld, o, "py_return_ns");
        g->gap_ns = ld_get_u64(ld, o, "gap_ns");
        ld_pop(ld, m2);
    }
    ld_pop(ld, mark);
}

static void load_origin(struct ld *ld, const json_t *o, struct cli_origin *org)
{
    ld_need(ld, o, JSON_OBJECT, "an object");
    org->pid = ld_get_u64(ld, o, "pid");
    org->rank = ld_get_opt_u64(ld, o, "rank");
    org->host = ld_get_str(ld, o, "host", LD_OPT);
    org->argv0 = ld_get_str(ld, o, "argv0", LD_OPT);
    load_clock(ld, o, &org->clock);
}

static void load_merged_from(struct ld *ld, const json_t *root, struct cli_report *r)
{
    const json_t *v = ld_field(ld, root, "merged_from", LD_OPT);
    if (!v)
        return;
    size_t mark = ld_push_key(ld, "merged_from");
    ld_need(ld, v, JSON_ARRAY, "an array");
    if (json_array_size(v) == 0)
        ld_fail(ld, "is empty");
    r->merged_from = cli_xcalloc(json_array_size(v), sizeof *r->merged_from);
    r->n_merged = json_array_size(v);
    for (size_t i = 0; i < r->n_merged; i++) {
        size_t m2 = ld_push_index(ld, i);
        load_origin(ld, json_array_get(v, i), &r->merged_from[i]);
        ld_pop(ld, m2);
    }
    ld_pop(ld, mark);
}

static void check_schema(struct ld *ld, const json_t *root)
{
    const json_t *schema = json_object_get(root, "schema");
    if (!json_is_string(schema))
        ld_fail(ld, "not a trlat report (no \"schema\": \"%s\")", CLI_SCHEMA);
    if (strcmp(json_string_value(schema), CLI_SCHEMA) != 0)
        ld_fail(ld, "schema \"%.64s\" is not supported (expected %s)", json_string_value(schema), CLI_SCHEMA);
    const char *scheme = ld_get_str(ld, root, "hist_scheme", LD_REQ);
    if (strcmp(scheme, CLI_HIST_SCHEME) != 0)
        ld_fail(ld, "histogram scheme \"%.64s\" is not supported (expected %s)", scheme, CLI_HIST_SCHEME);
}

static void load_root(struct ld *ld, const json_t *root, struct cli_report *r, int flags)
{
    check_schema(ld, root);
    r->trlat_version = ld_get_str(ld, root, "trlat_version", LD_OPT);
    r->pid = ld_get_u64(ld, root, "pid");
    r->rank = ld_get_opt_u64(ld, root, "rank");
    r->local_rank = ld_get_opt_u64(ld, root, "local_rank");
    r->world_size = ld_get_opt_u64(ld, root, "world_size");
    r->host = ld_get_str(ld, root, "host", LD_OPT);
    r->argv0 = ld_get_str(ld, root, "argv0", LD_OPT);
    r->wall_ns = ld_get_opt_u64(ld, root, "wall_ns");
    load_clock(ld, root, &r->clock);
    load_config(ld, root, r);
    load_totals(ld, root, r);
    load_python(ld, root, &r->python);
    load_gpu(ld, root, &r->gpu);
    load_regions(ld, root, r);
    load_kernels(ld, root, r);
    load_events(ld, root, r, flags);
    load_merged_from(ld, root, r);
}

/* ---- the document but its events, through jansson ---- */

/* What jansson reads: the text with "[]" in place of the events array. */
struct feed {
    struct cli_rd rd;
    const struct cli_layout *lay;
    size_t placeholder; /* bytes of "[]" given; 2: past the array */
};

static size_t feed(void *buffer, size_t buflen, void *data)
{
    struct feed *f = data;
    char *out = buffer;
    size_t n = 0;
    while (n < buflen) {
        uint64_t at = cli_rd_tell(&f->rd);
        if (f->lay->split && f->placeholder < 2 && at >= f->lay->at) {
            out[n++] = "[]"[f->placeholder++];
            if (f->placeholder == 2)
                cli_rd_seek(&f->rd, f->lay->end);
            continue;
        }
        if (f->rd.pos == f->rd.lim && !cli_rd_fill(&f->rd))
            break;
        size_t k = f->rd.lim - f->rd.pos;
        if (k > buflen - n)
            k = buflen - n;
        if (f->lay->split && f->placeholder < 2 && f->lay->at - at < k)
            k = (size_t)(f->lay->at - at);
        memcpy(out + n, f->rd.b + f->rd.pos, k);
        f->rd.pos += k;
        n += k;
    }
    return f->rd.err ? (size_t)-1 : n;
}

/* Where in the text jansson's byte pos of the fed document lies. */
static uint64_t unsplice(const struct cli_layout *lay, uint64_t pos)
{
    if (!lay->split || pos <= lay->at + 1)
        return pos;
    return pos - 2 + (lay->end - lay->at);
}

static json_t *parse(struct ld *ld, struct cli_report *r)
{
    const struct cli_text *t = &r->text;
    if (t->size == 0)
        ld_fail(ld, "file is empty");
    cli_scan_layout(t, &r->layout);
    const struct cli_layout *lay = &r->layout;
    if (lay->read_err)
        ld_fail(ld, "cannot read: %s", strerror(lay->read_err));
    int line, col;
    if (lay->bad[0]) {
        cli_text_linecol(t, lay->bad_at, &line, &col);
        ld_fail(ld, "not valid JSON (line %d, column %d: %s)", line, col, lay->bad);
    }
    struct feed f = {.lay = lay};
    cli_rd_open(&f.rd, t, 0);
    json_error_t je;
    memset(&je, 0, sizeof je);
    cli_json_parsing();
    json_t *root = json_load_callback(feed, &f, JSON_REJECT_DUPLICATES, &je);
    int read_err = f.rd.err;
    cli_rd_close(&f.rd);
    if (read_err)
        ld_fail(ld, "cannot read: %s", strerror(read_err));
    if (root)
        return root;
    uint64_t fed = je.position > 0 ? (uint64_t)je.position : 0, pos = unsplice(lay, fed);
    line = je.line;
    col = je.column;
    if (pos != fed) /* past the events: jansson counted without them */
        cli_text_linecol(t, pos, &line, &col);
    ld_json_error(ld, t, &je, pos, line, col, lay->opens);
}

/* Every allocation hangs off the report, so cli_report_free releases a
 * half-built one. */
int cli_load_text(struct cli_report *r, const char *path, struct cli_text *t, int flags, char *err, size_t errlen)
{
    struct ld ld = {.err = err, .errlen = errlen};
    memset(r, 0, sizeof *r);
    r->path = path;
    r->text = *t;
    memset(t, 0, sizeof *t);
    t->fd = -1;
    cli_oom_context(path, r->text.size);
    if (setjmp(ld.jmp)) {
        cli_one_line(err);
        cli_report_free(r);
        r->path = path;
        cli_oom_context(NULL, 0);
        return -1;
    }
    json_t *root = parse(&ld, r);
    r->json = root;
    ld_need(&ld, root, JSON_OBJECT, "a JSON object");
    load_root(&ld, root, r, flags);
    cli_oom_context(NULL, 0);
    return 0;
}

int cli_load_buffer(struct cli_report *r, const char *path, const char *buf, size_t len, char *err, size_t errlen)
{
    struct cli_text t;
    cli_text_memory(&t, buf, len);
    return cli_load_text(r, path, &t, 0, err, errlen);
}

int cli_load_path(struct cli_report *r, const char *path, int flags, char *err, size_t errlen)
{
    struct cli_text t;
    if (cli_text_open(&t, path, err, errlen) != 0) {
        cli_one_line(err);
        memset(r, 0, sizeof *r);
        r->path = path;
        return -1;
    }
    return cli_load_text(r, path, &t, flags, err, errlen);
}

void cli_load(struct cli_report *r, const char *path)
{
    char err[512];
    if (cli_load_path(r, path, 0, err, sizeof err) != 0)
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
    free(r->regions);
    free(r->merged_from);
    json_decref(r->json);
    cli_text_close(&r->text);
    memset(r, 0, sizeof *r);
    r->text.fd = -1;
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
