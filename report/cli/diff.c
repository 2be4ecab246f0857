/* trlat diff BASE NEW: what changed between two reports, readable in a CI
 * log; exit 1 when a tracked figure regressed past the threshold. With
 * several reports per side (repeated runs, ranks) each figure is the median
 * of its side, and a change past the threshold counts only when the NEW
 * runs rank above the BASE runs (report/cli/ranktest.h). */
#include "report/cli/cli.h"
#include "report/cli/fmt.h"
#include "report/cli/ranktest.h"
#include "report/cli/util.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FAIL_LISTED 5

static const char usage_text[] =
    "usage: trlat diff BASE NEW [--threshold PCT] [--metric LIST] [--min-launches N] [--all]\n"
    "       trlat diff --base FILE... --new FILE... [--alpha P] [OPTIONS]\n"
    "\n"
    "Compares two reports kernel by kernel (matched by name) and in total. Exit\n"
    "status: 1 when a tracked figure regressed by more than the threshold, 0\n"
    "otherwise, 2 for bad input. Kernels in only one report are listed, not failed;\n"
    "so are changes of launch errors (launches the driver refused).\n"
    "\n"
    "With several reports per side (--base and --new, each given once per file:\n"
    "repeated runs, or a job's ranks), each figure is the median of its side and a\n"
    "change past the threshold counts only when it is beyond the spread between\n"
    "runs: the NEW values rank above the BASE ones in a one-sided Mann-Whitney U\n"
    "test with p <= P. With one report per side the spread is unknown.\n"
    "\n"
    "  --threshold PCT    allowed change in percent (default 10); for the starved\n"
    "                     share, in percentage points\n"
    "  --alpha P          the rank test's level (default 0.05); 3 reports per side\n"
    "                     are the fewest that can reach 0.05\n"
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

enum status { ST_NA, ST_SAME, ST_IMPROVED, ST_REGRESSED, ST_SPREAD };

#define MAX_RUNS (CLI_RANK_MAX / 2)

struct options {
    const char *base[MAX_RUNS], *now[MAX_RUNS];
    size_t nbase, nnow;
    double threshold, alpha;
    unsigned track[M_COUNT];
    uint64_t min_launches;
    bool all;
};

/* One compared figure: base and now are the medians of each side's values. */
struct fig {
    const char *kernel, *label;
    double base, now;
    bool share, gated;
    enum status st;
    double change;
    double p; /* the rank test's, in the direction of the change; NaN: one report on a side */
};

/* Each side's reports, and their kernels sorted by name. */
struct side {
    struct cli_report *r;
    const struct cli_kernel ***sorted;
    size_t n;
};

struct diff {
    const struct options *o;
    struct fig *figs;
    size_t n, cap;
};

/* ---- figures ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return isnan(x) ? (isnan(y) ? 0 : 1) : isnan(y) ? -1 : x < y ? -1 : x > y;
}

/* The median of the values that are numbers, NaN when none is. */
static double median_of(const double *v, size_t n)
{
    double s[MAX_RUNS];
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    while (n && isnan(s[n - 1]))
        n--;
    if (!n)
        return NAN;
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void judge(struct fig *f, double threshold, double alpha)
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
    if (f->st != ST_SAME && !isnan(f->p) && f->p > alpha)
        f->st = ST_SPREAD; /* past the threshold, not past the spread */
}

/* A figure from each side's values (one per report). */
static void add_fig(struct diff *d, const char *kernel, const char *label, const double *base, const double *now,
                    bool share, bool gated)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 32;
        d->figs = cli_xrealloc(d->figs, d->cap, sizeof *d->figs);
    }
    struct fig *f = &d->figs[d->n++];
    size_t nb = d->o->nbase, nn = d->o->nnow;
    *f = (struct fig){kernel, label, median_of(base, nb), median_of(now, nn), share, gated, ST_NA, NAN, NAN};
    if (nb > 1 && nn > 1)
        f->p = f->now >= f->base ? cli_rank_p_greater(base, nb, now, nn) : cli_rank_p_greater(now, nn, base, nb);
    judge(f, d->o->threshold, d->o->alpha);
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

/* Kernel k of every report of both sides (NULL where a report lacks it). */
struct match {
    const struct cli_kernel *b[MAX_RUNS], *n[MAX_RUNS];
};

static void compare_kernel(struct diff *d, const struct match *mt)
{
    const struct options *o = d->o;
    bool gated = true;
    for (size_t i = 0; i < o->nbase; i++)
        gated = gated && mt->b[i]->launches >= o->min_launches;
    for (size_t i = 0; i < o->nnow; i++)
        gated = gated && mt->n[i]->launches >= o->min_launches;
    for (enum metric m = M_HOST; m < M_STARVED; m++) {
        if (!(o->track[m] & PER_KERNEL))
            continue;
        double bm[MAX_RUNS], nm[MAX_RUNS], bp[MAX_RUNS], np[MAX_RUNS];
        for (size_t i = 0; i < o->nbase; i++) {
            bm[i] = kernel_mean(mt->b[i], m);
            bp[i] = kernel_p50(mt->b[i], m);
        }
        for (size_t i = 0; i < o->nnow; i++) {
            nm[i] = kernel_mean(mt->n[i], m);
            np[i] = kernel_p50(mt->n[i], m);
        }
        add_fig(d, mt->b[0]->name, mean_labels[m], bm, nm, false, gated);
        add_fig(d, mt->b[0]->name, p50_labels[m], bp, np, false, gated);
    }
}

static void compare_totals(struct diff *d, const struct side *b, const struct side *n)
{
    double bv[MAX_RUNS], nv[MAX_RUNS];
    for (enum metric m = M_HOST; m <= M_STARVED; m++) {
        if (!(d->o->track[m] & TOTAL))
            continue;
        for (size_t i = 0; i < b->n; i++)
            bv[i] = m == M_STARVED ? cli_starved_share(&b->r[i]) : total_mean(&b->r[i], m);
        for (size_t i = 0; i < n->n; i++)
            nv[i] = m == M_STARVED ? cli_starved_share(&n->r[i]) : total_mean(&n->r[i], m);
        add_fig(d, NULL, m == M_STARVED ? "starved share" : total_labels[m], bv, nv, m == M_STARVED, true);
    }
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
    const struct cli_kernel *const *hit = n ? bsearch(&k, sorted, n, sizeof *sorted, cmp_name) : NULL;
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

static const char *status_word(const struct fig *f, char *buf, size_t len)
{
    const char *w;
    switch (f->st) {
    case ST_REGRESSED:
        w = f->gated ? "REGRESSED" : "regressed (not gated)";
        break;
    case ST_IMPROVED:
        w = "improved";
        break;
    case ST_SPREAD:
        w = "within the spread";
        break;
    case ST_NA:
        return "n/a";
    default:
        return "";
    }
    if (isnan(f->p))
        return w;
    snprintf(buf, len, "%s (p=%.2g)", w, f->p);
    return buf;
}

static void fig_row(struct cli_table *t, const struct fig *f)
{
    char base[CLI_FMT_LEN], now[CLI_FMT_LEN], change[CLI_FMT_LEN], word[64];
    fmt_value(base, f, f->base);
    fmt_value(now, f, f->now);
    fmt_change(change, f);
    const char *cells[] = {f->label, base, now, change, status_word(f, word, sizeof word)};
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
        if (f->kernel && (d->o->all || f->st == ST_REGRESSED || f->st == ST_IMPROVED || f->st == ST_SPREAD)) {
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
    if (o->nbase > 1 && o->nnow > 1) {
        double pmin = cli_rank_p_min(o->nbase, o->nnow);
        fprintf(out,
                "  %zu and %zu reports: medians; a change past the threshold counts when the runs rank apart "
                "(one-sided Mann-Whitney U, p <= %g)",
                o->nbase, o->nnow, o->alpha);
        if (pmin > o->alpha)
            fprintf(out, "; with so few reports p is at least %.2g: no change can count", pmin);
        fputc('\n', out);
    } else if (o->nbase > 1 || o->nnow > 1) {
        fprintf(out, "  %zu and %zu reports: medians; one report on a side gives no spread to judge by\n", o->nbase,
                o->nnow);
    }
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
    size_t regressed = 0, improved = 0, spread = 0;
    for (size_t i = 0; i < d->n; i++) {
        regressed += d->figs[i].st == ST_REGRESSED && d->figs[i].gated;
        improved += d->figs[i].st == ST_IMPROVED;
        spread += d->figs[i].st == ST_SPREAD && d->figs[i].gated;
    }
    if (!regressed) {
        fprintf(out, "\nOK: no tracked figure regressed by more than %g%% (%zu improved", d->o->threshold, improved);
        if (spread)
            fprintf(out, "; %zu changed by more, within the spread between runs", spread);
        fputs(")\n", out);
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
    if (d->o->nbase == 1 || d->o->nnow == 1)
        fputs("(one report on a side: the spread between runs is unknown; repeat the runs and give each with "
              "--base and --new to judge by it)\n",
              out);
    return 1;
}

static void side_load(struct side *s, const char *const *paths, size_t n)
{
    s->n = n;
    s->r = cli_xcalloc(n, sizeof *s->r);
    s->sorted = cli_xcalloc(n, sizeof *s->sorted);
    for (size_t i = 0; i < n; i++) {
        cli_load(&s->r[i], paths[i]);
        s->sorted[i] = by_name(&s->r[i]);
    }
}

static void side_free(struct side *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->sorted[i]);
        cli_report_free(&s->r[i]);
    }
    free(s->sorted);
    free(s->r);
}

/* k in every report of side s (into out[]): false when one lacks it. */
static bool find_all(const struct side *s, const struct cli_kernel *k, const struct cli_kernel **out)
{
    for (size_t i = 0; i < s->n; i++)
        if (!(out[i] = lookup(s->sorted[i], s->r[i].n_kernels, k)))
            return false;
    return true;
}

static void print_title(const struct side *b, const struct side *n)
{
    if (b->n == 1 && n->n == 1) {
        printf("trlat diff: %s -> %s\n", b->r[0].path, n->r[0].path);
        return;
    }
    printf("trlat diff: %zu report%s -> %zu report%s\n", b->n, b->n == 1 ? "" : "s", n->n, n->n == 1 ? "" : "s");
    const struct side *sides[] = {b, n};
    for (int s = 0; s < 2; s++) {
        printf("  %s:", s ? "new" : "base");
        for (size_t i = 0; i < sides[s]->n; i++)
            printf(" %s", sides[s]->r[i].path);
        putchar('\n');
    }
}

static int run_diff(const struct options *o, const struct side *b, const struct side *n)
{
    struct diff d = {.o = o};
    size_t compared = 0;
    compare_totals(&d, b, n);
    for (size_t i = 0; i < b->r[0].n_kernels; i++) {
        struct match mt;
        if (find_all(b, &b->r[0].kernels[i], mt.b) && find_all(n, &b->r[0].kernels[i], mt.n)) {
            compare_kernel(&d, &mt);
            compared++;
        }
    }
    print_title(b, n);
    describe_tracking(stdout, o);
    describe_settings(stdout, &b->r[0], &n->r[0]);
    putchar('\n');
    print_totals(stdout, &d, &b->r[0], &n->r[0]);
    print_kernels(stdout, &d, compared);
    list_unmatched(stdout, &n->r[0], b->sorted[0], b->r[0].n_kernels, "added (only in NEW):");
    list_unmatched(stdout, &b->r[0], n->sorted[0], n->r[0].n_kernels, "removed (only in BASE):");
    list_errors(stdout, &b->r[0], n->sorted[0], n->r[0].n_kernels);
    int rc = verdict(stdout, &d);
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
                                             {"base", required_argument, NULL, 'b'},
                                             {"new", required_argument, NULL, 'w'},
                                             {"alpha", required_argument, NULL, 'p'},
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
        case 'b':
        case 'w': {
            size_t *k = c == 'b' ? &o->nbase : &o->nnow;
            if (*k == MAX_RUNS)
                cli_usage_fail("diff", "takes at most %d reports per side", MAX_RUNS);
            (c == 'b' ? o->base : o->now)[(*k)++] = optarg;
            break;
        }
        case 'p': {
            char *end;
            o->alpha = strtod(optarg, &end);
            if (*end || end == optarg || !(o->alpha > 0 && o->alpha < 1))
                cli_usage_fail("diff", "--alpha expects a level between 0 and 1 such as 0.05, not '%s'", optarg);
            break;
        }
        case 'h':
            fputs(usage_text, stdout);
            exit(0);
        default:
            cli_bad_option("diff", c, argv);
        }
    }
    if (o->nbase || o->nnow) {
        if (!o->nbase || !o->nnow || optind != argc)
            cli_usage_fail("diff", "expects --base FILE and --new FILE, each once or more, and no other file");
        return;
    }
    if (argc - optind != 2)
        cli_usage_fail("diff", "expects two report files, BASE and NEW");
    o->base[o->nbase++] = argv[optind];
    o->now[o->nnow++] = argv[optind + 1];
}

int cli_diff_main(int argc, char **argv)
{
    struct options o = {
        .threshold = 10, .alpha = 0.05, .min_launches = 2, .track = {PER_KERNEL | TOTAL, TOTAL, 0, 0, TOTAL}};
    parse(argc, argv, &o);
    struct side b, n;
    side_load(&b, o.base, o.nbase);
    side_load(&n, o.now, o.nnow);
    int rc = run_diff(&o, &b, &n);
    if (fflush(stdout) != 0 || ferror(stdout))
        cli_fail("standard output", "write error");
    side_free(&b);
    side_free(&n);
    return rc;
}
