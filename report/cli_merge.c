/* trlat merge FILE... -o OUT: one report from the reports of many ranks or
 * processes. Counts, sums and histograms add; percentiles are recomputed
 * from the merged histograms, never averaged. */
#include "report/cli.h"
#include "report/cli_fmt.h"
#include "report/cli_util.h"

#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SITES 8
#define OTHER_SITE "(other)"

static const char usage_text[] =
    "usage: trlat merge FILE... -o OUT\n"
    "\n"
    "Combines reports of many processes (e.g. all ranks of a torchrun job) into one\n"
    "trlat-report/1 document that report, diff, trace and merge read again.\n"
    "Kernels are matched by name; counts, sums and histograms are added and the\n"
    "percentiles recomputed from the merged histograms. \"merged_from\" lists the\n"
    "processes; events are kept, each with its process's \"pid\". Launch errors,\n"
    "the Python hook's call counts and the GPU counters are summed (GPU devices:\n"
    "the most any input saw).\n"
    "\n"
    "  -o, --output OUT  where to write the merged report ('-': standard output)\n";

/* Merge state: the input being folded in, for messages. A count that no
 * longer fits records the first message; merging runs on to the end (the
 * result is then dropped), which keeps every path free of early exits. */
struct mg {
    const char *path;
    char *err;
    size_t errlen;
    bool failed;
};

static __attribute__((format(printf, 2, 3))) void fail(struct mg *mg, const char *fmt, ...)
{
    if (mg->failed)
        return;
    mg->failed = true;
    int n = snprintf(mg->err, mg->errlen, "%s: ", mg->path);
    if (n < 0 || (size_t)n >= mg->errlen)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(mg->err + n, mg->errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

static void add(struct mg *mg, uint64_t *acc, uint64_t v, const char *what)
{
    if (!cli_add(acc, v))
        fail(mg, "%s add up to more than 2^63-1 when merged", what);
}

static void add_opt(struct mg *mg, struct cli_u64 *acc, const struct cli_u64 *v, const char *what)
{
    if (!v->set)
        return;
    acc->set = true;
    add(mg, &acc->v, v->v, what);
}

static void merge_stat(struct mg *mg, struct cli_stat *dst, const struct cli_stat *src, const char *kernel)
{
    if (!cli_stat_merge(dst, src))
        fail(mg, "kernel %.100s: counts add up to more than 2^63-1 when merged", kernel);
}

/* ---- name-keyed counts (call sites, fallback reasons) ---- */

static int cmp_count_name(const void *a, const void *b)
{
    return strcmp(((const struct cli_count *)a)->name, ((const struct cli_count *)b)->name);
}

/* Most first, then by name. */
static int cmp_count_n(const void *a, const void *b)
{
    const struct cli_count *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Sorts by name and folds equal names together; returns the new length. */
static size_t fold_counts(struct mg *mg, struct cli_count *c, size_t n)
{
    qsort(c, n, sizeof *c, cmp_count_name);
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        if (out && strcmp(c[out - 1].name, c[i].name) == 0)
            add(mg, &c[out - 1].n, c[i].n, "call site or fallback counts");
        else
            c[out++] = c[i];
    }
    qsort(c, out, sizeof *c, cmp_count_n);
    return out;
}

/* ---- kernels ---- */

struct ref {
    const struct cli_kernel *k;
    size_t input;
};

static int cmp_ref(const void *a, const void *b)
{
    const struct ref *x = a, *y = b;
    int c = strcmp(x->k->name, y->k->name);
    return c ? c : (x->input > y->input) - (x->input < y->input);
}

static void merge_fastpath(struct mg *mg, struct cli_fastpath *dst, const struct ref *g, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += g[i].k->fastpath.n_fallbacks;
    dst->fallbacks = cli_xcalloc(total, sizeof *dst->fallbacks);
    for (size_t i = 0; i < n; i++) {
        const struct cli_fastpath *fp = &g[i].k->fastpath;
        if (!fp->set)
            continue;
        dst->set = true;
        add(mg, &dst->hits, fp->hits, "fast-path hits");
        add(mg, &dst->misses, fp->misses, "fast-path misses");
        for (size_t j = 0; j < fp->n_fallbacks; j++)
            dst->fallbacks[dst->n_fallbacks++] = fp->fallbacks[j];
    }
    dst->n_fallbacks = fold_counts(mg, dst->fallbacks, dst->n_fallbacks);
}

/* Sites summed by name; the top MAX_SITES kept, the rest under "(other)". */
static void merge_sites(struct mg *mg, struct cli_kernel *dst, const struct ref *g, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += g[i].k->n_sites;
    struct cli_count *c = cli_xcalloc(total, sizeof *c);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < g[i].k->n_sites; j++)
            c[m++] = (struct cli_count){g[i].k->sites[j].site, g[i].k->sites[j].launches};
    m = fold_counts(mg, c, m);
    uint64_t other = 0;
    bool has_other = false;
    dst->sites = cli_xcalloc(m + 1, sizeof *dst->sites);
    for (size_t i = 0; i < m; i++) {
        if (strcmp(c[i].name, OTHER_SITE) == 0 || dst->n_sites == MAX_SITES) {
            add(mg, &other, c[i].n, "call site counts");
            has_other = true;
        } else {
            dst->sites[dst->n_sites++] = (struct cli_site){c[i].name, NULL, c[i].n};
        }
    }
    if (has_other)
        dst->sites[dst->n_sites++] = (struct cli_site){OTHER_SITE, "other", other};
    /* Each site keeps the kind an input gave it. */
    for (size_t s = 0; s < dst->n_sites; s++)
        for (size_t i = 0; i < n && !dst->sites[s].kind; i++)
            for (size_t j = 0; j < g[i].k->n_sites; j++)
                if (strcmp(g[i].k->sites[j].site, dst->sites[s].site) == 0 && g[i].k->sites[j].kind)
                    dst->sites[s].kind = g[i].k->sites[j].kind;
    free(c);
}

static void merge_kernel(struct mg *mg, const struct cli_report *const *in, struct cli_kernel *dst,
                         const struct ref *g, size_t n)
{
    dst->name = g[0].k->name;
    for (size_t i = 0; i < n; i++) {
        const struct cli_kernel *k = g[i].k;
        mg->path = in[g[i].input]->path;
        if (!dst->module)
            dst->module = k->module;
        add(mg, &dst->launches, k->launches, "launches");
        add(mg, &dst->src_driver, k->src_driver, "launches");
        add(mg, &dst->src_runtime, k->src_runtime, "launches");
        add(mg, &dst->errors, k->errors, "launch errors");
        merge_stat(mg, &dst->driver, &k->driver, k->name);
        merge_stat(mg, &dst->gap, &k->gap, k->name);
        merge_stat(mg, &dst->py, &k->py, k->name);
        merge_stat(mg, &dst->ret, &k->ret, k->name);
        merge_stat(mg, &dst->gpu, &k->gpu, k->name);
        add_opt(mg, &dst->starved, &k->starved, "starved times");
        add_opt(mg, &dst->starved_launches, &k->starved_launches, "starved launches");
    }
    merge_fastpath(mg, &dst->fastpath, g, n);
    merge_sites(mg, dst, g, n);
}

/* By total host time, descending, as the library orders them; then name. */
static int cmp_kernel(const void *a, const void *b)
{
    const struct cli_kernel *x = a, *y = b;
    uint64_t hx = cli_host_sum(x), hy = cli_host_sum(y);
    if (hx != hy)
        return hx > hy ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void merge_kernels(struct mg *mg, const struct cli_report *const *in, size_t n, struct cli_report *out)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += in[i]->n_kernels;
    struct ref *refs = cli_xcalloc(total, sizeof *refs);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < in[i]->n_kernels; j++)
            refs[m++] = (struct ref){&in[i]->kernels[j], i};
    qsort(refs, m, sizeof *refs, cmp_ref);
    out->kernels = cli_xcalloc(m, sizeof *out->kernels);
    for (size_t i = 0; i < m;) {
        size_t j = i + 1;
        while (j < m && strcmp(refs[j].k->name, refs[i].k->name) == 0)
            j++;
        out->n_kernels++;
        merge_kernel(mg, in, &out->kernels[out->n_kernels - 1], refs + i, j - i);
        i = j;
    }
    free(refs);
    qsort(out->kernels, out->n_kernels, sizeof *out->kernels, cmp_kernel);
}

/* ---- the rest of the document ---- */

static void merge_totals(struct mg *mg, const struct cli_report *const *in, size_t n, struct cli_report *out)
{
    for (size_t i = 0; i < n; i++) {
        const struct cli_report *r = in[i];
        mg->path = r->path;
        add_opt(mg, &out->totals.threads, &r->totals.threads, "thread counts");
        add_opt(mg, &out->totals.gpu_busy_ns, &r->totals.gpu_busy_ns, "GPU busy times");
        add_opt(mg, &out->totals.dropped_records, &r->totals.dropped_records, "dropped records");
        add_opt(mg, &out->totals.unnamed_launches, &r->totals.unnamed_launches, "unnamed launches");
        out->totals.py_to_driver_ns.set |= r->totals.py_to_driver_ns.set;
        out->totals.gpu_ns.set |= r->totals.gpu_ns.set;
        out->totals.starved_ns.set |= r->totals.starved_ns.set;
    }
    mg->path = "merge: totals";
    out->totals.kernels = out->n_kernels;
    for (size_t i = 0; i < out->n_kernels; i++) {
        const struct cli_kernel *k = &out->kernels[i];
        add(mg, &out->totals.launches, k->launches, "launches");
        add(mg, &out->totals.driver_ns, k->driver.s.sum, "driver times");
        struct cli_u64 py = {k->py.set, k->py.s.sum}, gpu = {k->gpu.set, k->gpu.s.sum};
        add_opt(mg, &out->totals.py_to_driver_ns, &py, "py->drv times");
        add_opt(mg, &out->totals.gpu_ns, &gpu, "GPU times");
        add_opt(mg, &out->totals.starved_ns, &k->starved, "starved times");
    }
}

static void merge_origins(const struct cli_report *const *in, size_t n, struct cli_report *out)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        struct cli_origin *o;
        total += cli_origins(in[i], &o);
        free(o);
    }
    out->merged_from = cli_xcalloc(total, sizeof *out->merged_from);
    for (size_t i = 0; i < n; i++) {
        struct cli_origin *o;
        size_t m = cli_origins(in[i], &o);
        memcpy(out->merged_from + out->n_merged, o, m * sizeof *o);
        out->n_merged += m;
        free(o);
    }
}

static void merge_events(const struct cli_report *const *in, size_t n, struct cli_report *out)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += in[i]->n_events;
    out->events = cli_xcalloc(total, sizeof *out->events);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < in[i]->n_events; j++) {
            struct cli_event e = in[i]->events[j];
            if (!e.pid.set)
                e.pid = (struct cli_u64){true, in[i]->pid};
            out->events[out->n_events++] = e;
        }
}

/* The value all inputs agree on, else NULL (or "mixed" when mixed). */
static const char *common(const char *const *v, size_t n, const char *mixed)
{
    for (size_t i = 1; i < n; i++)
        if (!v[0] != !v[i] || (v[0] && strcmp(v[0], v[i]) != 0))
            return mixed;
    return v[0];
}

#define COMMON_STR(field, mixed)                                                                                \
    do {                                                                                                        \
        for (size_t i = 0; i < n; i++)                                                                          \
            s[i] = in[i]->field;                                                                                \
        out->field = common(s, n, mixed);                                                                       \
    } while (0)

/* Counts summed over the inputs that have a "python" object; hook and
 * triton_version kept when those inputs agree, else "mixed"; reason kept
 * when they agree, else null. */
static void merge_python(struct mg *mg, const struct cli_report *const *in, size_t n, struct cli_report *out)
{
    const char **hook = cli_xcalloc(n, sizeof *hook), **version = cli_xcalloc(n, sizeof *version);
    const char **reason = cli_xcalloc(n, sizeof *reason);
    size_t m = 0;
    struct cli_python *py = &out->python;
    for (size_t i = 0; i < n; i++) {
        const struct cli_python *p = &in[i]->python;
        if (!p->set)
            continue;
        mg->path = in[i]->path;
        hook[m] = p->hook;
        version[m] = p->triton_version;
        reason[m++] = p->reason;
        for (size_t c = 0; c < CLI_PY_COUNTS; c++)
            add(mg, &py->n[c], p->n[c], "Python call counts");
    }
    if (m) {
        py->set = true;
        py->hook = common(hook, m, "mixed");
        py->triton_version = common(version, m, "mixed");
        py->reason = common(reason, m, NULL);
    }
    free(hook);
    free(version);
    free(reason);
}

/* Counters summed over the inputs that have a "gpu" object, but devices:
 * the processes may share GPUs, so the most any input saw. */
static void merge_gpu(struct mg *mg, const struct cli_report *const *in, size_t n, struct cli_report *out)
{
    struct cli_gpu *gpu = &out->gpu;
    for (size_t i = 0; i < n; i++) {
        const struct cli_gpu *g = &in[i]->gpu;
        if (!g->set)
            continue;
        mg->path = in[i]->path;
        gpu->set = true;
        for (size_t c = 0; c < CLI_GPU_COUNTERS; c++) {
            if (c != CLI_GPU_DEVICES)
                add(mg, &gpu->n[c], g->n[c], "GPU counters");
            else if (g->n[c] > gpu->n[c])
                gpu->n[c] = g->n[c];
        }
    }
}

static void merge_header(const struct cli_report *const *in, size_t n, struct cli_report *out)
{
    const char **s = cli_xcalloc(n, sizeof *s);
    COMMON_STR(trlat_version, TRLAT_VERSION);
    COMMON_STR(host, NULL);
    COMMON_STR(argv0, NULL);
    COMMON_STR(config.cupti, "mixed");
    COMMON_STR(config.cupti_reason, NULL);
    COMMON_STR(config.fastpath, "mixed");
    COMMON_STR(config.timing, "mixed");
    free(s);
    out->pid = 0;
    out->clock = in[0]->clock;
    out->config.stacks = -1;
    out->world_size = in[0]->world_size;
    for (size_t i = 0; i < n; i++) {
        const struct cli_report *r = in[i];
        if (r->wall_ns.set && (!out->wall_ns.set || r->wall_ns.v > out->wall_ns.v))
            out->wall_ns = r->wall_ns;
        if (r->config.stacks > out->config.stacks)
            out->config.stacks = r->config.stacks;
        if (r->config.trace.set && (!out->config.trace.set || r->config.trace.v > out->config.trace.v))
            out->config.trace = r->config.trace;
        if (r->world_size.set != out->world_size.set || r->world_size.v != out->world_size.v)
            out->world_size = (struct cli_u64){false, 0};
    }
}

int cli_merge(const struct cli_report *const *in, size_t n, struct cli_report *out, char *err, size_t errlen)
{
    struct mg mg = {.err = err, .errlen = errlen, .path = "merge"};
    memset(out, 0, sizeof *out);
    merge_header(in, n, out);
    merge_origins(in, n, out);
    merge_kernels(&mg, in, n, out);
    merge_totals(&mg, in, n, out);
    merge_python(&mg, in, n, out);
    merge_gpu(&mg, in, n, out);
    merge_events(in, n, out);
    out->path = "merged report";
    if (!mg.failed)
        return 0;
    cli_one_line(err);
    cli_report_free(out);
    return -1;
}

int cli_merge_main(int argc, char **argv)
{
    const char *outpath = cli_parse_output_only("merge", usage_text, argc, argv);
    if (optind >= argc)
        cli_usage_fail("merge", "no report files given");
    if (!outpath)
        cli_usage_fail("merge", "no output given (-o OUT)");
    size_t n = (size_t)(argc - optind);
    struct cli_report *reports = cli_xcalloc(n, sizeof *reports);
    const struct cli_report **in = cli_xcalloc(n, sizeof *in);
    for (size_t i = 0; i < n; i++) {
        cli_load(&reports[i], argv[optind + i]);
        in[i] = &reports[i];
    }
    struct cli_report merged;
    char err[512];
    int rc = cli_merge(in, n, &merged, err, sizeof err);
    if (rc == 0) {
        json_t *doc = cli_report_to_json(&merged);
        FILE *f = cli_open_out(outpath);
        cli_json_dump(f, doc);
        cli_close_out(f, outpath);
        json_decref(doc);
        cli_report_free(&merged);
    } else {
        fprintf(stderr, "trlat: %s\n", err);
    }
    for (size_t i = 0; i < n; i++)
        cli_report_free(&reports[i]);
    free(reports);
    free(in);
    return rc == 0 ? 0 : CLI_EXIT_BAD_INPUT;
}
