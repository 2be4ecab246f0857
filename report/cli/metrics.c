#include "report/cli/metrics.h"
#include "report/cli/fmt.h"
#include "report/cli/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const cli_sort_names[] = {"host", "launches", "py", "driver", "gpu", "starved", NULL};

double cli_mean(const struct cli_stat *s)
{
    return (s->set && s->s.count) ? (double)s->s.sum / (double)s->s.count : NAN;
}

double cli_pct(const struct cli_stat *s, double q)
{
    return (s->set && s->s.count) ? (double)trlat_stat_quantile(&s->s, q) : NAN;
}

uint64_t cli_host_sum(const struct cli_kernel *k)
{
    return cli_add_sat(k->driver.s.sum, k->py.set ? k->py.s.sum : 0);
}

double cli_host_mean(const struct cli_kernel *k)
{
    return k->driver.s.count ? (double)cli_host_sum(k) / (double)k->driver.s.count : NAN;
}

/* p50(driver) + p50(py->drv): the reports keep no joint histogram. */
static double host_p50(const struct cli_stat *driver, const struct cli_stat *py)
{
    double p = cli_pct(driver, 0.5), q = cli_pct(py, 0.5);
    return isnan(q) ? p : p + q;
}

double cli_host_p50(const struct cli_kernel *k)
{
    return host_p50(&k->driver, &k->py);
}

double cli_hit_rate(uint64_t hits, uint64_t misses)
{
    double n = (double)hits + (double)misses;
    return n > 0 ? (double)hits / n : NAN;
}

bool cli_stat_merge(struct cli_stat *dst, const struct cli_stat *src)
{
    if (!src->set)
        return true;
    const struct trlat_stat *s = &src->s;
    uint64_t count = dst->s.count, sum = dst->s.sum, in_hist = 0;
    if (!cli_add(&count, s->count) || !cli_add(&sum, s->sum))
        return false;
    /* The merged buckets must also add up to at most 2^63-1, as the loader
     * requires of every histogram. */
    for (unsigned i = 0; i < TRLAT_HIST_BUCKETS; i++)
        if (!cli_add(&in_hist, dst->s.hist[i]) || !cli_add(&in_hist, s->hist[i]))
            return false;
    trlat_stat_merge(&dst->s, s);
    dst->set = true;
    return true;
}

void cli_aggregate(const struct cli_report *r, struct cli_agg *a)
{
    memset(a, 0, sizeof *a);
    for (size_t i = 0; i < r->n_kernels; i++) {
        const struct cli_kernel *k = &r->kernels[i];
        a->launches = cli_add_sat(a->launches, k->launches);
        a->errors = cli_add_sat(a->errors, k->errors);
        a->host_sum = cli_add_sat(a->host_sum, cli_host_sum(k));
        /* Absurd inputs can overflow a merge; the kernel is then left out. */
        (void)cli_stat_merge(&a->driver, &k->driver);
        (void)cli_stat_merge(&a->py, &k->py);
        (void)cli_stat_merge(&a->gpu, &k->gpu);
        if (k->starved.set)
            a->starved = (struct cli_u64){true, cli_add_sat(a->starved.v, k->starved.v)};
        if (k->fastpath.set) {
            a->fastpath = true;
            a->hits = cli_add_sat(a->hits, k->fastpath.hits);
            a->misses = cli_add_sat(a->misses, k->fastpath.misses);
        }
    }
}

double cli_agg_host_mean(const struct cli_agg *a)
{
    return a->driver.s.count ? (double)a->host_sum / (double)a->driver.s.count : NAN;
}

double cli_agg_host_p50(const struct cli_agg *a)
{
    return host_p50(&a->driver, &a->py);
}

/* One launch of s holds at least half of its sum and 1 ms. */
static bool one_launch(const struct cli_stat *s)
{
    return s->set && s->s.count > 1 && s->s.max >= 1000000 && s->s.max >= s->s.sum / 2;
}

void cli_trimmed(const struct cli_stat *s, uint64_t *sum, uint64_t *count)
{
    *sum = *count = 0;
    if (s->set && s->s.count > 1) {
        *sum = s->s.sum - s->s.max;
        *count = s->s.count - 1;
    }
}

void cli_host_trimmed(const struct cli_kernel *k, uint64_t *sum, uint64_t *count)
{
    uint64_t pysum = 0, pyn;
    cli_trimmed(&k->driver, sum, count);
    if (*count && k->py.set && k->py.s.count)
        cli_trimmed(&k->py, &pysum, &pyn);
    *sum = cli_add_sat(*sum, pysum);
}

bool cli_outlier_note(const struct cli_kernel *k, char *buf, size_t len)
{
    buf[0] = '\0';
    bool py = one_launch(&k->py);
    const struct cli_stat *s = py ? &k->py : one_launch(&k->driver) ? &k->driver : NULL;
    if (!s)
        return false;
    char one[CLI_FMT_LEN], sum[CLI_FMT_LEN], p50[CLI_FMT_LEN], name[64];
    snprintf(name, sizeof name, "%s", k->name);
    if (strlen(k->name) >= sizeof name)
        memcpy(name + sizeof name - 4, "...", 4);
    snprintf(buf, len, "%s: one launch took %s of its %s %s (%s); the columns show the median, %s", name,
             cli_fmt_ns(one, (double)s->s.max), cli_fmt_ns(sum, (double)s->s.sum), py ? "py→drv" : "driver",
             py ? "often a kernel's first call, which compiles or loads it" : "often a first launch loading its module",
             cli_fmt_ns(p50, cli_pct(s, 0.5)));
    return true;
}

bool cli_library_note(const struct cli_report *r, char *buf, size_t len)
{
    uint64_t calls = 0, lib = 0, kernels = 0, in_c = 0;
    double py = 0;
    for (size_t i = 0; i < r->n_kernels; i++) {
        const struct cli_kernel *k = &r->kernels[i];
        if (!k->library.set || !k->library.calls)
            continue;
        kernels++;
        calls += k->library.calls;
        lib += k->library.ns;
        in_c += k->fastpath.library_hits;
        if (k->py.set && k->py.s.count) /* the part is of the calls' py->driver; the kernel's mean stands for it */
            py += (double)k->py.s.sum / (double)k->py.s.count * (double)k->library.calls;
    }
    if (!calls)
        return false;
    char n[CLI_FMT_LEN], nk[CLI_FMT_LEN], t[CLI_FMT_LEN], per[CLI_FMT_LEN], share[32] = "", nc[CLI_FMT_LEN],
                                                                            served[160] = "";
    if (py > 0)
        snprintf(share, sizeof share, ", %.0f%% of their py→drv", 100.0 * (double)lib / py);
    if (in_c) /* the fast path ran that run() itself: its part is then the Python the model calls */
        snprintf(served, sizeof served, "; the fast path ran %s of these run() calls in C (library_hits)",
                 cli_fmt_count(nc, in_c));
    snprintf(buf, len,
             "%s calls of %s kernel%s came through a library's own KernelInterface.run (FlagGems' LibEntry, Inductor's "
             "CachingAutotuner), whose Python took %s (%s a call%s) before it called Triton's "
             "(py_library_ns)%s",
             cli_fmt_count(n, calls), cli_fmt_count(nk, kernels), kernels == 1 ? "" : "s", cli_fmt_ns(t, (double)lib),
             cli_fmt_ns(per, (double)lib / (double)calls), share, served);
    return true;
}

double cli_gpu_busy(const struct cli_report *r)
{
    const struct cli_u64 *busy = r->totals.gpu_busy_ns.set ? &r->totals.gpu_busy_ns : &r->totals.gpu_ns;
    return busy->set ? (double)busy->v : NAN;
}

double cli_starved_share(const struct cli_report *r)
{
    double busy = cli_gpu_busy(r);
    if (!r->totals.starved_ns.set || isnan(busy))
        return NAN;
    double active = busy + (double)r->totals.starved_ns.v;
    return active > 0 ? (double)r->totals.starved_ns.v / active : NAN;
}

struct sort_item {
    uint64_t key;
    size_t index;
};

static uint64_t sort_key(const struct cli_kernel *k, enum cli_sort sort)
{
    switch (sort) {
    case CLI_SORT_LAUNCHES:
        return k->launches;
    case CLI_SORT_PY:
        return k->py.set ? k->py.s.sum : 0;
    case CLI_SORT_DRIVER:
        return k->driver.s.sum;
    case CLI_SORT_GPU:
        return k->gpu.set ? k->gpu.s.sum : 0;
    case CLI_SORT_STARVED:
        return k->starved.set ? k->starved.v : 0;
    default:
        return cli_host_sum(k);
    }
}

/* Descending by key; equal keys keep the report's order. */
static int cmp_items(const void *a, const void *b)
{
    const struct sort_item *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The report's kernels ordered by sort (caller frees). */
static struct sort_item *sorted(const struct cli_report *r, enum cli_sort sort)
{
    struct sort_item *items = cli_xcalloc(r->n_kernels, sizeof *items);
    for (size_t i = 0; i < r->n_kernels; i++)
        items[i] = (struct sort_item){sort_key(&r->kernels[i], sort), i};
    qsort(items, r->n_kernels, sizeof *items, cmp_items);
    return items;
}

void cli_view_init(struct cli_view *v, const struct cli_report *r, enum cli_sort sort, size_t top)
{
    memset(v, 0, sizeof *v);
    v->r = r;
    v->n_all = r->n_kernels;
    v->n = (top && top < r->n_kernels) ? top : r->n_kernels;
    struct sort_item *items = sorted(r, sort);
    v->kernels = cli_xcalloc(r->n_kernels, sizeof *v->kernels);
    for (size_t i = 0; i < r->n_kernels; i++)
        v->kernels[i] = &r->kernels[items[i].index];
    free(items);
    cli_aggregate(r, &v->all);
    cli_diagnose(r, &v->all, v->diagnosis, sizeof v->diagnosis);
}

void cli_view_free(struct cli_view *v)
{
    free(v->kernels);
    v->kernels = NULL;
}

/* How many kernels, largest first by sort key, make up 90% of total;
 * *covered gets their share. 0 when total is 0. */
static size_t kernels_for_90(const struct cli_report *r, enum cli_sort sort, uint64_t total, double *covered)
{
    if (total == 0)
        return 0;
    struct sort_item *items = sorted(r, sort);
    double cum = 0;
    size_t n = 0;
    while (n < r->n_kernels && cum < 0.9 * (double)total)
        cum += (double)items[n++].key;
    free(items);
    *covered = cum / (double)total;
    return n;
}

static void append(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t n = strlen(buf);
    if (n + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, len - n, fmt, ap);
    va_end(ap);
}

static void append_concentration(char *buf, size_t len, const struct cli_report *r, enum cli_sort sort, uint64_t total)
{
    double covered;
    size_t n = kernels_for_90(r, sort, total, &covered);
    if (n == 0 || r->n_kernels < 2)
        return;
    append(buf, len, "; %zu kernel%s account%s for %.0f%% of it", n, n == 1 ? "" : "s", n == 1 ? "s" : "",
           floor(covered * 100.0));
}

static void diagnose_gpu(const struct cli_report *r, double share, char *buf, size_t len)
{
    char waited[CLI_FMT_LEN], busy[CLI_FMT_LEN];
    cli_fmt_ns(waited, (double)r->totals.starved_ns.v);
    cli_fmt_ns(busy, cli_gpu_busy(r));
    if (r->totals.starved_ns.v == 0 && r->gpu.n[CLI_GPU_UNJOINED_RECORDS]) {
        /* A kernel not joined to its launch cannot be judged starved. */
        char unjoined[CLI_FMT_LEN], records[CLI_FMT_LEN];
        snprintf(buf, len, "GPU starvation unknown: %s of %s GPU records were not joined to a launch (busy %s).",
                 cli_fmt_count(unjoined, r->gpu.n[CLI_GPU_UNJOINED_RECORDS]),
                 cli_fmt_count(records, r->gpu.n[CLI_GPU_KERNEL_RECORDS]), busy);
        return;
    }
    if (r->totals.starved_ns.v == 0) {
        snprintf(buf, len, "GPU never waited for the host (busy %s): launch overhead is hidden behind GPU work.", busy);
        return;
    }
    snprintf(buf, len, "GPU starved %.0f%% of the time (waited %s for launches, busy %s)", share * 100.0, waited, busy);
    uint64_t kernel_total = 0;
    for (size_t i = 0; i < r->n_kernels; i++)
        if (r->kernels[i].starved.set)
            kernel_total = cli_add_sat(kernel_total, r->kernels[i].starved.v);
    append_concentration(buf, len, r, CLI_SORT_STARVED, kernel_total);
    append(buf, len, ".");
}

static void diagnose_host(const struct cli_report *r, const struct cli_agg *a, char *buf, size_t len)
{
    char why[160], p50[CLI_FMT_LEN], sum[CLI_FMT_LEN], count[CLI_FMT_LEN];
    const char *cupti = r->config.cupti;
    if (cupti && strcmp(cupti, "unavailable") == 0 && r->config.cupti_reason)
        snprintf(why, sizeof why, "CUPTI unavailable: %.100s", r->config.cupti_reason);
    else if (cupti && strcmp(cupti, "on") != 0)
        snprintf(why, sizeof why, "CUPTI %.100s", cupti);
    else
        snprintf(why, sizeof why, "no CUPTI figures");
    /* The median: a kernel's first call (its compile) would dominate a mean.
     * Sampled hits (TRLAT_TIMING=sampled) make the sum an estimate. */
    bool est = r->config.timing && strcmp(r->config.timing, "sampled") == 0;
    snprintf(buf, len,
             "No GPU timing (%s); host launch overhead %s per launch at the median "
             "(%s%s in all over %s launches%s)",
             why, cli_fmt_ns(p50, cli_agg_host_p50(a)), est ? "~" : "", cli_fmt_ns(sum, (double)a->host_sum),
             cli_fmt_count(count, a->launches), est ? ", fast-path hits timed 1 in 16" : "");
    append_concentration(buf, len, r, CLI_SORT_HOST, a->host_sum);
    append(buf, len, ".");
}

void cli_diagnose(const struct cli_report *r, const struct cli_agg *a, char *buf, size_t len)
{
    double share = cli_starved_share(r);
    if (a->launches == 0 && a->driver.s.count == 0)
        snprintf(buf, len, "No kernel launches were recorded.");
    else if (!isnan(share))
        diagnose_gpu(r, share, buf, len);
    else if (a->driver.s.count == 0 && r->config.timing && strcmp(r->config.timing, "all") != 0)
        snprintf(buf, len, "Launches were counted, not timed (TRLAT_TIMING=%s).", r->config.timing);
    else if (a->driver.s.count == 0)
        snprintf(buf, len, "No host launch times were recorded (launches seen only through CUPTI).");
    else
        diagnose_host(r, a, buf, len);
    cli_one_line(buf);
}

/* "ranks 0, 1, 2" or "pids 11, 12, 13", at most 8 listed. */
static void list_origins(const struct cli_origin *o, size_t n, char *buf, size_t len)
{
    bool ranks = true;
    for (size_t i = 0; i < n; i++)
        ranks = ranks && o[i].rank.set;
    append(buf, len, "%s ", ranks ? "ranks" : "pids");
    for (size_t i = 0; i < n && i < 8; i++)
        append(buf, len, "%s%llu", i ? ", " : "", (unsigned long long)(ranks ? o[i].rank.v : o[i].pid));
    if (n > 8)
        append(buf, len, ", ...");
}

static const char *common_host(const struct cli_origin *o, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (!o[i].host || !o[0].host || strcmp(o[i].host, o[0].host) != 0)
            return NULL;
    return o[0].host;
}

void cli_describe_process(const struct cli_report *r, char *buf, size_t len)
{
    buf[0] = 0;
    if (r->n_merged) {
        const char *host = common_host(r->merged_from, r->n_merged);
        append(buf, len, "merged from %zu process%s: ", r->n_merged, r->n_merged == 1 ? "" : "es");
        list_origins(r->merged_from, r->n_merged, buf, len);
        if (host)
            append(buf, len, "; host %s", host);
    } else {
        append(buf, len, "%s, pid %llu", r->argv0 ? r->argv0 : "?", (unsigned long long)r->pid);
        if (r->rank.set)
            append(buf, len, ", rank %llu", (unsigned long long)r->rank.v);
        if (r->rank.set && r->world_size.set)
            append(buf, len, " of %llu", (unsigned long long)r->world_size.v);
        if (r->host)
            append(buf, len, ", host %s", r->host);
    }
    cli_one_line(buf);
}

void cli_describe_config(const struct cli_report *r, char *buf, size_t len)
{
    buf[0] = 0;
    if (r->config.cupti)
        append(buf, len, "cupti %s", r->config.cupti);
    if (r->config.cupti_reason)
        append(buf, len, " (%s)", r->config.cupti_reason);
    if (r->config.fastpath)
        append(buf, len, "%sfastpath %s", buf[0] ? ", " : "", r->config.fastpath);
    if (r->config.fastpath_state && strcmp(r->config.fastpath_state, "stood_aside") == 0)
        append(buf, len, " (stood aside%s%s)", r->config.fastpath_reason ? ": " : "",
               r->config.fastpath_reason ? r->config.fastpath_reason : "");
    if (r->config.stacks >= 0)
        append(buf, len, "%sstacks %s", buf[0] ? ", " : "", r->config.stacks ? "on" : "off");
    if (r->config.trace.set)
        append(buf, len, "%strace %llu", buf[0] ? ", " : "", (unsigned long long)r->config.trace.v);
    if (r->config.timing)
        append(buf, len, "%stiming %s", buf[0] ? ", " : "", r->config.timing);
    if (!buf[0])
        append(buf, len, "not recorded");
    cli_one_line(buf);
}

bool cli_describe_python(const struct cli_report *r, char *buf, size_t len)
{
    const struct cli_python *py = &r->python;
    char n[CLI_FMT_LEN];
    buf[0] = 0;
    if (!py->set)
        return false;
    append(buf, len, "hook %s", py->hook);
    if (py->triton_version)
        append(buf, len, " (Triton %s)", py->triton_version);
    if (py->reason)
        append(buf, len, ": %s", py->reason);
    uint64_t without = 0;
    for (size_t i = CLI_PY_NO_LAUNCH_WARMUP; i < CLI_PY_COUNTS; i++)
        without = cli_add_sat(without, py->n[i]);
    append(buf, len, "; %s calls", cli_fmt_count(n, py->n[CLI_PY_CALLS]));
    append(buf, len, ", %s without a launch", cli_fmt_count(n, without));
    const char *sep = " (";
    for (size_t i = CLI_PY_NO_LAUNCH_WARMUP; i < CLI_PY_COUNTS && without; i++) {
        if (!py->n[i])
            continue;
        append(buf, len, "%s%s %s", sep, cli_fmt_count(n, py->n[i]), cli_python_counts[i]);
        sep = ", ";
    }
    if (without)
        append(buf, len, ")");
    cli_one_line(buf);
    return true;
}
