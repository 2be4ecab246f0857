/* The merge itself: reports folded into a cli_merger one at a time (it
 * copies what it keeps, so each report can go before the next is read),
 * and a report's events appended to a merged report being written. Counts,
 * sums and histograms add; percentiles are recomputed from the merged
 * histograms, never averaged. */
#include "report/cli/cli.h"
#include "report/cli/fmt.h"
#include "report/cli/util.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SITES 8
#define OTHER_SITE "(other)"

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
    va_list ap;
    va_start(ap, fmt);
    cli_format_error(mg->err, mg->errlen, mg->path, fmt, ap);
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

/* ---- the merger ---- */

struct site {
    const char *name, *kind, *user;
    uint64_t n;
    struct cli_u64 gap_ns, triton_ns, library_ns; /* set when an input gave them */
};

/* A merged kernel: its call sites and fallback reasons summed by name, all
 * of them, until cli_merger_finish keeps the busiest. */
struct mkernel {
    struct cli_kernel k;
    struct cli_count *fallbacks;
    size_t n_fallbacks, cap_fallbacks;
    struct site *sites;
    size_t n_sites, cap_sites;
};

/* A string the inputs may agree on. */
struct common {
    bool seen, mixed;
    const char *v;
};

enum {
    C_VERSION,
    C_HOST,
    C_ARGV0,
    C_CUPTI,
    C_CUPTI_REASON,
    C_FASTPATH,
    C_TIMING,
    C_HOOK,
    C_TRITON,
    C_REASON,
    C_FP_STATE,
    C_FP_REASON,
    C_N
};

struct cli_merger {
    json_t *strings; /* every string kept: its keys (jansson's hashtable keeps them in place) */
    json_t *index;   /* kernel name -> index in kernels */
    struct mkernel *kernels;
    size_t n_kernels, cap_kernels;
    struct cli_report acc; /* header, totals, python, gpu, regions and merged_from so far */
    size_t cap_merged, cap_regions;
    struct common common[C_N];
    size_t n_inputs;
    struct mg mg;
    char err[512];
};

static const char *intern(struct cli_merger *m, const char *s)
{
    if (!s)
        return NULL;
    void *it = json_object_iter_at(m->strings, s);
    if (!it) {
        json_object_set_new_nocheck(m->strings, s, json_null());
        it = json_object_iter_at(m->strings, s);
    }
    if (!it)
        cli_out_of_memory();
    return json_object_iter_key(it);
}

/* Room for one more of *n items in *p. */
static void *room(void *p, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return p;
    *cap = *cap ? 2 * *cap : 8;
    return cli_xrealloc(p, *cap, size);
}

static void common_add(struct cli_merger *m, struct common *c, const char *s)
{
    if (!c->seen) {
        c->seen = true;
        c->v = intern(m, s);
    } else if (!c->v != !s || (s && strcmp(c->v, s) != 0)) {
        c->mixed = true;
    }
}

/* The value all inputs agree on, else mixed. */
static const char *common_value(const struct common *c, const char *mixed)
{
    return c->mixed ? mixed : c->v;
}

struct cli_merger *cli_merger_new(void)
{
    struct cli_merger *m = cli_xcalloc(1, sizeof *m);
    m->strings = json_object();
    m->index = json_object();
    if (!m->strings || !m->index)
        cli_out_of_memory();
    m->acc.config.stacks = -1;
    m->mg = (struct mg){.path = "merge", .err = m->err, .errlen = sizeof m->err};
    return m;
}

void cli_merger_free(struct cli_merger *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_kernels; i++) {
        free(m->kernels[i].fallbacks);
        free(m->kernels[i].sites);
    }
    free(m->kernels);
    free(m->acc.merged_from);
    free(m->acc.regions);
    json_decref(m->strings);
    json_decref(m->index);
    free(m);
}

static void fold_header(struct cli_merger *m, const struct cli_report *r)
{
    struct cli_report *out = &m->acc;
    const char *const s[] = {r->trlat_version,   r->host,         r->argv0, r->config.cupti, r->config.cupti_reason,
                             r->config.fastpath, r->config.timing};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        common_add(m, &m->common[i], s[i]);
    common_add(m, &m->common[C_FP_STATE], r->config.fastpath_state);
    common_add(m, &m->common[C_FP_REASON], r->config.fastpath_reason);
    if (m->n_inputs == 0) {
        out->clock = r->clock;
        out->clock.source = intern(m, r->clock.source);
        out->world_size = r->world_size;
    }
    if (r->wall_ns.set && (!out->wall_ns.set || r->wall_ns.v > out->wall_ns.v))
        out->wall_ns = r->wall_ns;
    if (r->config.stacks > out->config.stacks)
        out->config.stacks = r->config.stacks;
    if (r->config.trace.set && (!out->config.trace.set || r->config.trace.v > out->config.trace.v))
        out->config.trace = r->config.trace;
    if (r->world_size.set != out->world_size.set || r->world_size.v != out->world_size.v)
        out->world_size = (struct cli_u64){false, 0};
}

static void fold_origins(struct cli_merger *m, const struct cli_report *r)
{
    struct cli_origin *o;
    size_t n = cli_origins(r, &o);
    for (size_t i = 0; i < n; i++) {
        m->acc.merged_from = room(m->acc.merged_from, m->acc.n_merged, &m->cap_merged, sizeof *o);
        struct cli_origin *d = &m->acc.merged_from[m->acc.n_merged++];
        *d = o[i];
        d->host = intern(m, o[i].host);
        d->argv0 = intern(m, o[i].argv0);
        d->clock.source = intern(m, o[i].clock.source);
    }
    free(o);
}

static struct mkernel *find_kernel(struct cli_merger *m, const char *name)
{
    const json_t *i = json_object_get(m->index, name);
    if (i)
        return &m->kernels[json_integer_value(i)];
    m->kernels = room(m->kernels, m->n_kernels, &m->cap_kernels, sizeof *m->kernels);
    struct mkernel *k = &m->kernels[m->n_kernels];
    memset(k, 0, sizeof *k);
    k->k.name = intern(m, name);
    if (json_object_set_new_nocheck(m->index, name, json_integer((json_int_t)m->n_kernels)) != 0)
        cli_out_of_memory();
    m->n_kernels++;
    return k;
}

static void fold_fastpath(struct cli_merger *m, struct mkernel *d, const struct cli_fastpath *fp)
{
    if (!fp->set)
        return;
    d->k.fastpath.set = true;
    add(&m->mg, &d->k.fastpath.hits, fp->hits, "fast-path hits");
    add(&m->mg, &d->k.fastpath.misses, fp->misses, "fast-path misses");
    d->k.fastpath.has_library |= fp->has_library;
    add(&m->mg, &d->k.fastpath.library_hits, fp->library_hits, "fast-path library hits");
    for (size_t i = 0; i < fp->n_fallbacks; i++) {
        size_t j = 0;
        while (j < d->n_fallbacks && strcmp(d->fallbacks[j].name, fp->fallbacks[i].name) != 0)
            j++;
        if (j == d->n_fallbacks) {
            d->fallbacks = room(d->fallbacks, d->n_fallbacks, &d->cap_fallbacks, sizeof *d->fallbacks);
            d->fallbacks[d->n_fallbacks++] = (struct cli_count){intern(m, fp->fallbacks[i].name), 0};
        }
        add(&m->mg, &d->fallbacks[j].n, fp->fallbacks[i].n, "call site or fallback counts");
    }
}

/* Sites summed by name and user site, each with the first kind an input
 * gave it. */
static void fold_sites(struct cli_merger *m, struct mkernel *d, const struct cli_kernel *k)
{
    for (size_t i = 0; i < k->n_sites; i++) {
        const struct cli_site *s = &k->sites[i];
        size_t j = 0;
        while (j < d->n_sites &&
               !(strcmp(d->sites[j].name, s->site) == 0 && cli_strcmp_opt(d->sites[j].user, s->user) == 0))
            j++;
        if (j == d->n_sites) {
            d->sites = room(d->sites, d->n_sites, &d->cap_sites, sizeof *d->sites);
            d->sites[d->n_sites++] =
                (struct site){intern(m, s->site), NULL, s->user ? intern(m, s->user) : NULL, 0, {0}, {0}, {0}};
        }
        if (!d->sites[j].kind)
            d->sites[j].kind = intern(m, s->kind);
        add(&m->mg, &d->sites[j].n, s->launches, "call site or fallback counts");
        add_opt(&m->mg, &d->sites[j].gap_ns, &s->gap_ns, "call site times");
        add_opt(&m->mg, &d->sites[j].triton_ns, &s->triton_ns, "call site times");
        add_opt(&m->mg, &d->sites[j].library_ns, &s->library_ns, "call site times");
    }
}

static void fold_kernel(struct cli_merger *m, const struct cli_kernel *k)
{
    struct mg *mg = &m->mg;
    struct mkernel *mk = find_kernel(m, k->name);
    struct cli_kernel *d = &mk->k;
    if (!d->module)
        d->module = intern(m, k->module);
    add(mg, &d->launches, k->launches, "launches");
    add(mg, &d->src_driver, k->src_driver, "launches");
    add(mg, &d->src_runtime, k->src_runtime, "launches");
    add(mg, &d->errors, k->errors, "launch errors");
    merge_stat(mg, &d->driver, &k->driver, k->name);
    merge_stat(mg, &d->gap, &k->gap, k->name);
    merge_stat(mg, &d->py, &k->py, k->name);
    merge_stat(mg, &d->ret, &k->ret, k->name);
    merge_stat(mg, &d->gpu, &k->gpu, k->name);
    add_opt(mg, &d->starved, &k->starved, "starved times");
    add_opt(mg, &d->starved_launches, &k->starved_launches, "starved launches");
    fold_fastpath(m, mk, &k->fastpath);
    if (k->phases.set) {
        d->phases.set = true;
        add(mg, &d->phases.calls, k->phases.calls, "phase counts");
        add(mg, &d->phases.split_calls, k->phases.split_calls, "phase counts");
        for (int i = 0; i < CLI_PHASES; i++)
            add(mg, &d->phases.ns[i], k->phases.ns[i], "phase times");
    }
    if (k->library.set) {
        d->library.set = true;
        add(mg, &d->library.calls, k->library.calls, "library counts");
        add(mg, &d->library.ns, k->library.ns, "library times");
    }
    fold_sites(m, mk, k);
}

static void fold_totals(struct cli_merger *m, const struct cli_report *r)
{
    struct cli_report *out = &m->acc;
    add_opt(&m->mg, &out->totals.threads, &r->totals.threads, "thread counts");
    add_opt(&m->mg, &out->totals.gpu_busy_ns, &r->totals.gpu_busy_ns, "GPU busy times");
    add_opt(&m->mg, &out->totals.dropped_records, &r->totals.dropped_records, "dropped records");
    add_opt(&m->mg, &out->totals.unnamed_launches, &r->totals.unnamed_launches, "unnamed launches");
    add_opt(&m->mg, &out->totals.trace_lost, &r->totals.trace_lost, "lost trace events");
    out->totals.py_to_driver_ns.set |= r->totals.py_to_driver_ns.set;
    out->totals.gpu_ns.set |= r->totals.gpu_ns.set;
    out->totals.starved_ns.set |= r->totals.starved_ns.set;
}

/* Counts summed over the inputs that have a "python" object; hook and
 * triton_version kept when those inputs agree, else "mixed"; reason kept
 * when they agree, else null. */
static void fold_python(struct cli_merger *m, const struct cli_report *r)
{
    const struct cli_python *p = &r->python;
    if (!p->set)
        return;
    m->acc.python.set = true;
    common_add(m, &m->common[C_HOOK], p->hook);
    common_add(m, &m->common[C_TRITON], p->triton_version);
    common_add(m, &m->common[C_REASON], p->reason);
    for (size_t c = 0; c < CLI_PY_COUNTS; c++)
        add(&m->mg, &m->acc.python.n[c], p->n[c], "Python call counts");
}

/* Counters summed over the inputs that have a "gpu" object, but devices:
 * the processes may share GPUs, so the most any input saw. */
static void fold_gpu(struct cli_merger *m, const struct cli_report *r)
{
    const struct cli_gpu *g = &r->gpu;
    struct cli_gpu *gpu = &m->acc.gpu;
    if (!g->set)
        return;
    gpu->set = true;
    for (size_t c = 0; c < CLI_GPU_COUNTERS; c++) {
        if (c != CLI_GPU_DEVICES)
            add(&m->mg, &gpu->n[c], g->n[c], "GPU counters");
        else if (g->n[c] > gpu->n[c])
            gpu->n[c] = g->n[c];
    }
}

/* Regions summed by name, in the order the inputs first name them. */
static void fold_regions(struct cli_merger *m, const struct cli_report *r)
{
    struct cli_report *a = &m->acc;
    if (!r->regions)
        return;
    if (!a->regions)
        a->regions = room(NULL, 0, &m->cap_regions, sizeof *a->regions);
    for (size_t i = 0; i < r->n_regions; i++) {
        const struct cli_region *g = &r->regions[i];
        size_t j = 0;
        while (j < a->n_regions && strcmp(a->regions[j].name, g->name) != 0)
            j++;
        if (j == a->n_regions) {
            a->regions = room(a->regions, a->n_regions, &m->cap_regions, sizeof *a->regions);
            a->regions[a->n_regions++] = (struct cli_region){intern(m, g->name), 0, 0, 0, 0, 0};
        }
        struct cli_region *d = &a->regions[j];
        add(&m->mg, &d->launches, g->launches, "region launches");
        add(&m->mg, &d->driver_ns, g->driver_ns, "region times");
        add(&m->mg, &d->py_ns, g->py_ns, "region times");
        add(&m->mg, &d->ret_ns, g->ret_ns, "region times");
        add(&m->mg, &d->gap_ns, g->gap_ns, "region times");
    }
}

void cli_merger_add(struct cli_merger *m, const struct cli_report *r)
{
    m->mg.path = r->path;
    fold_header(m, r);
    fold_origins(m, r);
    for (size_t i = 0; i < r->n_kernels; i++)
        fold_kernel(m, &r->kernels[i]);
    fold_totals(m, r);
    fold_python(m, r);
    fold_gpu(m, r);
    fold_regions(m, r);
    m->n_inputs++;
}

/* ---- the result ---- */

/* Most first, then by name. */
static int cmp_count_n(const void *a, const void *b)
{
    const struct cli_count *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int cmp_site_n(const void *a, const void *b)
{
    const struct site *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    int c = strcmp(x->name, y->name);
    return c ? c : cli_strcmp_opt(x->user, y->user);
}

/* The busiest MAX_SITES sites kept, the rest under "(other)". */
static void finish_sites(struct mg *mg, struct mkernel *mk, struct cli_kernel *dst)
{
    if (mk->n_sites)
        qsort(mk->sites, mk->n_sites, sizeof *mk->sites, cmp_site_n);
    struct cli_site other = {OTHER_SITE, "other", NULL, 0, {0}, {0}, {0}};
    bool has_other = false;
    dst->sites = cli_xcalloc(mk->n_sites + 1, sizeof *dst->sites);
    for (size_t i = 0; i < mk->n_sites; i++) {
        const struct site *s = &mk->sites[i];
        if (strcmp(s->name, OTHER_SITE) == 0 || dst->n_sites == MAX_SITES) {
            add(mg, &other.launches, s->n, "call site counts");
            add_opt(mg, &other.gap_ns, &s->gap_ns, "call site times");
            add_opt(mg, &other.triton_ns, &s->triton_ns, "call site times");
            add_opt(mg, &other.library_ns, &s->library_ns, "call site times");
            has_other = true;
        } else {
            dst->sites[dst->n_sites++] =
                (struct cli_site){s->name, s->kind, s->user, s->n, s->gap_ns, s->triton_ns, s->library_ns};
        }
    }
    if (has_other)
        dst->sites[dst->n_sites++] = other;
}

static void finish_kernel(struct mg *mg, struct mkernel *mk, struct cli_kernel *dst)
{
    *dst = mk->k;
    dst->fastpath.fallbacks = cli_xcalloc(mk->n_fallbacks, sizeof *dst->fastpath.fallbacks);
    if (mk->n_fallbacks) {
        qsort(mk->fallbacks, mk->n_fallbacks, sizeof *mk->fallbacks, cmp_count_n);
        memcpy(dst->fastpath.fallbacks, mk->fallbacks, mk->n_fallbacks * sizeof *mk->fallbacks);
    }
    dst->fastpath.n_fallbacks = mk->n_fallbacks;
    finish_sites(mg, mk, dst);
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

/* Totals recomputed from the merged kernels. */
static void finish_totals(struct mg *mg, struct cli_report *out)
{
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

int cli_merger_finish(struct cli_merger *m, struct cli_report *out, char *err, size_t errlen)
{
    *out = m->acc;
    out->text.fd = -1;
    out->merged_from = cli_xcalloc(m->acc.n_merged, sizeof *out->merged_from);
    if (m->acc.n_merged)
        memcpy(out->merged_from, m->acc.merged_from, m->acc.n_merged * sizeof *out->merged_from);
    if (m->acc.regions) {
        out->regions = cli_xcalloc(m->acc.n_regions + 1, sizeof *out->regions);
        memcpy(out->regions, m->acc.regions, m->acc.n_regions * sizeof *out->regions);
    }
    const struct common *c = m->common;
    out->trlat_version = common_value(&c[C_VERSION], TRLAT_VERSION);
    out->host = common_value(&c[C_HOST], NULL);
    out->argv0 = common_value(&c[C_ARGV0], NULL);
    out->config.cupti = common_value(&c[C_CUPTI], "mixed");
    out->config.cupti_reason = common_value(&c[C_CUPTI_REASON], NULL);
    out->config.fastpath = common_value(&c[C_FASTPATH], "mixed");
    out->config.timing = common_value(&c[C_TIMING], "mixed");
    out->config.fastpath_state = common_value(&c[C_FP_STATE], "mixed");
    out->config.fastpath_reason = common_value(&c[C_FP_REASON], NULL);
    out->python.hook = common_value(&c[C_HOOK], "mixed");
    out->python.triton_version = common_value(&c[C_TRITON], "mixed");
    out->python.reason = common_value(&c[C_REASON], NULL);
    m->mg.path = "merge";
    out->kernels = cli_xcalloc(m->n_kernels, sizeof *out->kernels);
    for (size_t i = 0; i < m->n_kernels; i++)
        finish_kernel(&m->mg, &m->kernels[i], &out->kernels[out->n_kernels++]);
    qsort(out->kernels, out->n_kernels, sizeof *out->kernels, cmp_kernel);
    finish_totals(&m->mg, out);
    out->path = "merged report";
    if (!m->mg.failed)
        return 0;
    snprintf(err, errlen, "%s", m->err);
    cli_one_line(err);
    cli_report_free(out);
    return -1;
}

int cli_merge_events(FILE *f, const struct cli_report *r, size_t *n, char *err, size_t errlen)
{
    struct cli_events it;
    struct cli_event e;
    int got;
    cli_events_open(&it, r);
    while ((got = cli_events_next(&it, &e, err, errlen)) > 0) {
        if (!e.pid.set)
            e.pid = (struct cli_u64){true, r->pid};
        json_t *ev = cli_event_to_json(&e);
        int rc = ev ? cli_json_item(f, ev, n) : -1;
        json_decref(ev);
        if (rc != 0) {
            snprintf(err, errlen, "write error");
            got = -1;
            break;
        }
    }
    cli_events_close(&it);
    return got;
}
