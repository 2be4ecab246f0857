/* trlat diff BASE NEW: what changed between two reports, readable in a CI
 * log; exit 1 when a tracked figure regressed past the threshold. */
#include "report/cli/cli.h"
#include "report/cli/fmt.h"
#include "report/cli/util.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FAIL_LISTED 5

static const char usage_text[] =
    "usage: trlat diff BASE NEW [--threshold PCT] [--metric LIST] [--min-launches N] [--all]\n"
    "\n"
    "Compares two reports kernel by kernel (matched by name) and in total. Exit\n"
    "status: 1 when a tracked figure regressed by more than the threshold, 0\n"
    "otherwise, 2 for bad input. Kernels in only one report are listed, not failed;\n"
    "so are changes of launch errors (launches the driver refused).\n"
    "\n"
    "  --threshold PCT    allowed change in percent (default 10); for the starved\n"
    "                     share, in percentage points\n"
    "  --metric LIST      comma-separated figures to track: host, driver, py, gpu,\n"
    "                     starved, all. Each of host, driver, py, gpu tracks the mean\n"
    "                     and p50 per launch of every kernel and the mean per launch\n"
    "                     of all kernels; starved tracks the GPU's starved share.\n"
    "                     Default: host (per kernel and total), the total of driver,\n"
    "                     and starved.\n"
    "  --min-launches N   gate a kernel only when it has at least N launches in both\n"
    "                     reports (default 2: a kernel launched once has only its\n"
    "                     first launch)\n"
    "  --all              list every compared figure, not only those past the threshold\n"
    "\n"
    "host time per launch is py->drv + driver; its p50 is p50(driver) + p50(py->drv)\n"
    "(reports keep no joint histogram). Means leave out each kernel's slowest launch:\n"
    "a Triton kernel's first call compiles it (or loads it from Triton's cache), a\n"
    "first launch may load its module, and one such launch can be most of a mean.\n";

enum metric { M_HOST, M_DRIVER, M_PY, M_GPU, M_STARVED, M_COUNT };
static const char *const metric_names[] = {"host", "driver", "py", "gpu", "starved", "all", NULL};
enum { PER_KERNEL = 1, TOTAL = 2 };

enum status { ST_NA, ST_SAME, ST_IMPROVED, ST_REGRESSED };

struct options {
    const char *base, *now;
    double threshold;
    unsigned track[M_COUNT];
    uint64_t min_launches;
    bool all;
};

/* One compared figure. */
struct fig {
    const char *kernel, *label;
    double base, now;
    bool share, gated;
    enum status st;
    double change;
};

struct diff {
    const struct options *o;
    struct fig *figs;
    size_t n, cap;
};

/* ---- figures ---- */

static void judge(struct fig *f, double threshold)
{
    if (isnan(f->base) || isnan(f->now)) {
        f->st = ST_NA;
        f->change = NAN;
        return;
    }
    if (f->share)
        f->change = f->now - f->base;
    else if (f->base > 0)
        f->change = (f->now - f->base) / f->base;
    else
        f->change = f->now > 0 ? INFINITY : 0;
    double pct = f->change * 100.0;
    f->st = pct > threshold ? ST_REGRESSED : pct < -threshold ? ST_IMPROVED : ST_SAME;
}

static void add_fig(struct diff *d, const char *kernel, const char *label, double base, double now, bool share,
                    bool gated)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 32;
        d->figs = cli_xrealloc(d->figs, d->cap, sizeof *d->figs);
    }
    struct fig *f = &d->figs[d->n++];
    *f = (struct fig){kernel, label, base, now, share, gated, ST_NA, NAN};
    judge(f, d->o->threshold);
}

/* Means leave out the slowest launch (cli_trimmed): a first call's
 * compile, cold in one run and cached in the other, would be the change. */
static void kernel_trimmed(const struct cli_kernel *k, enum metric m, uint64_t *sum, uint64_t *count)
{
    if (m == M_HOST)
        cli_host_trimmed(k, sum, count);
    else
        cli_trimmed(m == M_DRIVER ? &k->driver : m == M_PY ? &k->py : &k->gpu, sum, count);
}

static double kernel_mean(const struct cli_kernel *k, enum metric m)
{
    uint64_t sum, n;
    kernel_trimmed(k, m, &sum, &n);
    return n ? (double)sum / (double)n : NAN;
}

static double kernel_p50(const struct cli_kernel *k, enum metric m)
{
    return m == M_HOST     ? cli_host_p50(k)
           : m == M_DRIVER ? cli_pct(&k->driver, 0.5)
           : m == M_PY     ? cli_pct(&k->py, 0.5)
                           : cli_pct(&k->gpu, 0.5);
}

static double total_mean(const struct cli_report *r, enum metric m)
{
    uint64_t sum = 0, n = 0;
    for (size_t i = 0; i < r->n_kernels; i++) {
        uint64_t ks, kn;
        kernel_trimmed(&r->kernels[i], m, &ks, &kn);
        sum = cli_add_sat(sum, ks);
        n = cli_add_sat(n, kn);
    }
    return n ? (double)sum / (double)n : NAN;
}

static const char *const mean_labels[] = {"host mean", "driver mean", "py→drv mean", "gpu mean"};
static const char *const p50_labels[] = {"host p50", "driver p50", "py→drv p50", "gpu p50"};
static const char *const total_labels[] = {"host / launch", "driver / launch", "py→drv / launch", "gpu / launch"};

static void compare_kernel(struct diff *d, const struct cli_kernel *b, const struct cli_kernel *n)
{
    bool gated = b->launches >= d->o->min_launches && n->launches >= d->o->min_launches;
    for (enum metric m = M_HOST; m < M_STARVED; m++) {
        if (!(d->o->track[m] & PER_KERNEL))
            continue;
        add_fig(d, b->name, mean_labels[m], kernel_mean(b, m), kernel_mean(n, m), false, gated);
        add_fig(d, b->name, p50_labels[m], kernel_p50(b, m), kernel_p50(n, m), false, gated);
    }
}

static void compare_totals(struct diff *d, const struct cli_report *b, const struct cli_report *n)
{
    for (enum metric m = M_HOST; m < M_STARVED; m++)
        if (d->o->track[m] & TOTAL)
            add_fig(d, NULL, total_labels[m], total_mean(b, m), total_mean(n, m), false, true);
    if (d->o->track[M_STARVED])
        add_fig(d, NULL, "starved share", cli_starved_share(b), cli_starved_share(n), true, true);
}

/* ---- kernel matching ---- */

static int cmp_name(const void *a, const void *b)
{
    return strcmp((*(const struct cli_kernel *const *)a)->name, (*(const struct cli_kernel *const *)b)->name);
}

/* The report's kernels sorted by name, for lookups. */
static const struct cli_kernel **by_name(const struct cli_report *r)
{
    const struct cli_kernel **v = cli_xcalloc(r->n_kernels, sizeof *v);
    for (size_t i = 0; i < r->n_kernels; i++)
        v[i] = &r->kernels[i];
    qsort(v, r->n_kernels, sizeof *v, cmp_name);
    return v;
}

static const struct cli_kernel *lookup(const struct cli_kernel **sorted, size_t n, const struct cli_kernel *k)
{
    const struct cli_kernel *const *hit = bsearch(&k, sorted, n, sizeof *sorted, cmp_name);
    return hit ? *hit : NULL;
}

/* Kernels of a only: "added" or "removed" lines. */
static size_t list_unmatched(FILE *f, const struct cli_report *a, const struct cli_kernel **b_sorted, size_t nb,
                             const char *what)
{
    size_t n = 0;
    char count[CLI_FMT_LEN];
    for (size_t i = 0; i < a->n_kernels; i++) {
        if (lookup(b_sorted, nb, &a->kernels[i]))
            continue;
        fprintf(f, "%s ", what);
        cli_put_text(f, a->kernels[i].name);
        fprintf(f, " (%s launches)\n", cli_fmt_count(count, a->kernels[i].launches));
        n++;
    }
    return n;
}

/* ---- output ---- */

static void fmt_value(char buf[CLI_FMT_LEN], const struct fig *f, double v)
{
    if (f->share)
        cli_fmt_pct(buf, v);
    else
        cli_fmt_ns(buf, v);
}

static void fmt_change(char buf[CLI_FMT_LEN], const struct fig *f)
{
    if (f->share && !isnan(f->change))
        snprintf(buf, CLI_FMT_LEN, "%+.1f pts", f->change * 100.0);
    else
        cli_fmt_change(buf, f->change);
}

static const char *status_word(const struct fig *f)
{
    switch (f->st) {
    case ST_REGRESSED:
        return f->gated ? "REGRESSED" : "regressed (not gated)";
    case ST_IMPROVED:
        return "improved";
    case ST_NA:
        return "n/a";
    default:
        return "";
    }
}

static void fig_row(struct cli_table *t, const struct fig *f)
{
    char base[CLI_FMT_LEN], now[CLI_FMT_LEN], change[CLI_FMT_LEN];
    fmt_value(base, f, f->base);
    fmt_value(now, f, f->now);
    fmt_change(change, f);
    const char *cells[] = {f->label, base, now, change, status_word(f)};
    if (f->kernel)
        cli_table_add(t, f->kernel);
    for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++)
        cli_table_add(t, cells[i]);
}

/* A totals row of counts, shown for information only. */
static void count_row(struct cli_table *t, const char *label, uint64_t base, uint64_t now)
{
    char b[CLI_FMT_LEN], n[CLI_FMT_LEN], ch[CLI_FMT_LEN];
    double change = base ? ((double)now - (double)base) / (double)base : NAN;
    cli_table_row(t, label, cli_fmt_count(b, base), cli_fmt_count(n, now), cli_fmt_change(ch, change), "(not tracked)");
}

static void print_totals(FILE *out, const struct diff *d, const struct cli_report *b, const struct cli_report *n)
{
    struct cli_table t;
    cli_table_init(&t, "lrrrl");
    cli_table_row(&t, "total", "base", "new", "change", "");
    for (size_t i = 0; i < d->n; i++)
        if (!d->figs[i].kernel)
            fig_row(&t, &d->figs[i]);
    count_row(&t, "launches", b->totals.launches, n->totals.launches);
    struct cli_agg ab, an;
    cli_aggregate(b, &ab);
    cli_aggregate(n, &an);
    if (ab.errors || an.errors)
        count_row(&t, "launch errors", ab.errors, an.errors);
    cli_table_print(&t, out, "  ");
    cli_table_free(&t);
}

/* Kernels of both reports whose launch errors changed (information, not
 * gated): one line each. */
static void list_errors(FILE *out, const struct cli_report *b, const struct cli_kernel **n_sorted, size_t nn)
{
    char eb[CLI_FMT_LEN], en[CLI_FMT_LEN];
    for (size_t i = 0; i < b->n_kernels; i++) {
        const struct cli_kernel *k = lookup(n_sorted, nn, &b->kernels[i]);
        if (!k || k->errors == b->kernels[i].errors)
            continue;
        fputs("launch errors changed (not tracked): ", out);
        cli_put_text(out, k->name);
        fprintf(out, " %s -> %s\n", cli_fmt_count(eb, b->kernels[i].errors), cli_fmt_count(en, k->errors));
    }
}

static void print_kernels(FILE *out, const struct diff *d, size_t compared)
{
    struct cli_table t;
    size_t shown = 0;
    cli_table_init(&t, "llrrrl");
    cli_table_row(&t, "kernel", "figure", "base", "new", "change", "");
    for (size_t i = 0; i < d->n; i++) {
        const struct fig *f = &d->figs[i];
        if (f->kernel && (d->o->all || f->st == ST_REGRESSED || f->st == ST_IMPROVED)) {
            fig_row(&t, f);
            shown++;
        }
    }
    fprintf(out, "\nkernels in both reports: %zu", compared);
    if (!d->o->all)
        fprintf(out, " (figures past %g%% listed; --all lists every one)", d->o->threshold);
    fputc('\n', out);
    if (shown)
        cli_table_print(&t, out, "  ");
    else if (compared)
        fprintf(out, "  no per-kernel figure changed by more than %g%%\n", d->o->threshold);
    cli_table_free(&t);
}

static void describe_tracking(FILE *out, const struct options *o)
{
    static const char *const what[] = {"", "per kernel", "total", "per kernel and total"};
    fprintf(out, "  threshold %g%%; means without each kernel's slowest launch; tracked:", o->threshold);
    const char *sep = " ";
    for (enum metric m = M_HOST; m < M_COUNT; m++) {
        if (!o->track[m])
            continue;
        if (m == M_STARVED)
            fprintf(out, "%sstarved share", sep);
        else
            fprintf(out, "%s%s (%s)", sep, metric_names[m], what[o->track[m]]);
        sep = ", ";
    }
    fputc('\n', out);
}

/* Settings that change what a launch costs (CUPTI, the fast path, native
 * stacks) or how it is measured (trlat's version): when the two reports
 * differ in them, say so above the figures; the gate itself is unchanged. */
static void add_setting(char *buf, size_t cap, size_t *len, const char *name, const char *b, const char *n)
{
    b = b ? b : "?";
    n = n ? n : "?";
    if (strcmp(b, n) == 0 || *len >= cap)
        return;
    int w = snprintf(buf + *len, cap - *len, "%s%s %s -> %s", *len ? "; " : "", name, b, n);
    if (w > 0)
        *len += (size_t)w;
}

static const char *stacks_word(int stacks)
{
    return stacks < 0 ? NULL : stacks ? "on" : "off";
}

static void describe_settings(FILE *out, const struct cli_report *b, const struct cli_report *n)
{
    char buf[512];
    size_t len = 0;
    add_setting(buf, sizeof buf, &len, "cupti", b->config.cupti, n->config.cupti);
    add_setting(buf, sizeof buf, &len, "fastpath", b->config.fastpath, n->config.fastpath);
    add_setting(buf, sizeof buf, &len, "stacks", stacks_word(b->config.stacks), stacks_word(n->config.stacks));
    add_setting(buf, sizeof buf, &len, "trlat", b->trlat_version, n->trlat_version);
    if (len)
        fprintf(out, "  settings differ: %s (figures can change for that alone)\n", buf);
}

/* The verdict line; returns the exit status. */
static int verdict(FILE *out, const struct diff *d)
{
    size_t regressed = 0, improved = 0;
    for (size_t i = 0; i < d->n; i++) {
        regressed += d->figs[i].st == ST_REGRESSED && d->figs[i].gated;
        improved += d->figs[i].st == ST_IMPROVED;
    }
    if (!regressed) {
        fprintf(out, "\nOK: no tracked figure regressed by more than %g%% (%zu improved)\n", d->o->threshold, improved);
        return 0;
    }
    fprintf(out, "\nFAIL: %zu tracked figure%s regressed by more than %g%%:", regressed, regressed == 1 ? "" : "s",
            d->o->threshold);
    size_t listed = 0;
    char change[CLI_FMT_LEN];
    for (size_t i = 0; i < d->n && listed < FAIL_LISTED; i++) {
        const struct fig *f = &d->figs[i];
        if (f->st != ST_REGRESSED || !f->gated)
            continue;
        fmt_change(change, f);
        fputs(listed ? ", " : " ", out);
        cli_put_text(out, f->kernel ? f->kernel : "total");
        fprintf(out, " %s %s", f->label, change);
        listed++;
    }
    if (regressed > listed)
        fprintf(out, ", and %zu more", regressed - listed);
    fputc('\n', out);
    return 1;
}

static int run_diff(const struct options *o, const struct cli_report *b, const struct cli_report *n)
{
    struct diff d = {.o = o};
    const struct cli_kernel **nb = by_name(n), **bb = by_name(b);
    size_t compared = 0;
    compare_totals(&d, b, n);
    for (size_t i = 0; i < b->n_kernels; i++) {
        const struct cli_kernel *k = lookup(nb, n->n_kernels, &b->kernels[i]);
        if (k) {
            compare_kernel(&d, &b->kernels[i], k);
            compared++;
        }
    }
    printf("trlat diff: %s -> %s\n", b->path, n->path);
    describe_tracking(stdout, o);
    describe_settings(stdout, b, n);
    putchar('\n');
    print_totals(stdout, &d, b, n);
    print_kernels(stdout, &d, compared);
    list_unmatched(stdout, n, bb, b->n_kernels, "added (only in NEW):");
    list_unmatched(stdout, b, nb, n->n_kernels, "removed (only in BASE):");
    list_errors(stdout, b, nb, n->n_kernels);
    int rc = verdict(stdout, &d);
    free(nb);
    free(bb);
    free(d.figs);
    return rc;
}

/* ---- command ---- */

static void parse_metrics(struct options *o, const char *list)
{
    memset(o->track, 0, sizeof o->track);
    char *copy = cli_xstrdup(list), *save = NULL;
    for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        int m = cli_parse_word("diff", "--metric", w, metric_names);
        for (int i = 0; i < M_COUNT; i++)
            if (i == m || m == M_COUNT)
                o->track[i] = i == M_STARVED ? TOTAL : PER_KERNEL | TOTAL;
    }
    free(copy);
    bool any = false;
    for (int i = 0; i < M_COUNT; i++)
        any = any || o->track[i];
    if (!any)
        cli_usage_fail("diff", "--metric expects a list such as host,driver");
}

static void parse(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {{"threshold", required_argument, NULL, 't'},
                                             {"metric", required_argument, NULL, 'm'},
                                             {"min-launches", required_argument, NULL, 'n'},
                                             {"all", no_argument, NULL, 'a'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            o->threshold = cli_parse_pct("diff", "--threshold", optarg);
            break;
        case 'm':
            parse_metrics(o, optarg);
            break;
        case 'n':
            o->min_launches = cli_parse_uint("diff", "--min-launches", optarg, CLI_INT_MAX);
            break;
        case 'a':
            o->all = true;
            break;
        case 'h':
            fputs(usage_text, stdout);
            exit(0);
        default:
            cli_bad_option("diff", c, argv);
        }
    }
    if (argc - optind != 2)
        cli_usage_fail("diff", "expects two report files, BASE and NEW");
    o->base = argv[optind];
    o->now = argv[optind + 1];
}

int cli_diff_main(int argc, char **argv)
{
    struct options o = {.threshold = 10, .min_launches = 2, .track = {PER_KERNEL | TOTAL, TOTAL, 0, 0, TOTAL}};
    parse(argc, argv, &o);
    struct cli_report b, n;
    cli_load(&b, o.base);
    cli_load(&n, o.now);
    int rc = run_diff(&o, &b, &n);
    if (fflush(stdout) != 0 || ferror(stdout))
        cli_fail("standard output", "write error");
    cli_report_free(&b);
    cli_report_free(&n);
    return rc;
}
