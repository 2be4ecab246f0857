/* The host time between launches, by user site: every kernel's call sites
 * summed by the program's own line that led to them (the kernel's site
 * where there is none), so that what is left after the fast path is shown
 * with whose it is: the Triton calls' own part, where launches came
 * through a library's own KernelInterface.run the part that run took
 * before Triton's (its column shown only then), and the rest (the
 * library's and the program's own code between launches). */
#include "report/cli/cli.h"
#include "report/cli/fmt.h"
#include "report/cli/util.h"

#include <stdlib.h>
#include <string.h>

#define USER_SITES_SHOWN 10

struct row {
    const char *where;
    uint64_t launches, gap_ns, triton_ns, lib_ns;
    size_t kernels, kernel; /* kernels: distinct ones; kernel: the entry's index */
};

static int by_gap(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->gap_ns != y->gap_ns)
        return x->gap_ns < y->gap_ns ? 1 : -1;
    return strcmp(x->where, y->where);
}

static int by_where(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    int c = strcmp(x->where, y->where);
    return c ? c : x->kernel < y->kernel ? -1 : x->kernel > y->kernel;
}

static void add(struct row *d, const struct row *s)
{
    d->launches += s->launches;
    d->gap_ns += s->gap_ns;
    d->triton_ns += s->triton_ns;
    d->lib_ns += s->lib_ns;
}

/* kernels: 0 for a sum of user sites (whose kernels may be the same);
 * lib: the library column is shown */
static void row(struct cli_table *t, const struct row *w, const char *where, int lib)
{
    char c[CLI_FMT_LEN], g[CLI_FMT_LEN], per[CLI_FMT_LEN], tri[CLI_FMT_LEN], li[CLI_FMT_LEN], rest[CLI_FMT_LEN],
        ks[CLI_FMT_LEN];
    /* the Triton part can exceed the gap: a call's return is counted with
     * its launch, and the host time after it with the next launch */
    uint64_t own = w->triton_ns < w->gap_ns ? w->gap_ns - w->triton_ns : 0;
    uint64_t part = w->lib_ns < w->triton_ns ? w->lib_ns : w->triton_ns;
    cli_fmt_count(c, w->launches);
    cli_fmt_ns(g, (double)w->gap_ns);
    cli_fmt_ns(per, w->launches ? (double)w->gap_ns / (double)w->launches : 0);
    cli_fmt_ns(tri, (double)(w->triton_ns - part));
    cli_fmt_ns(li, (double)part);
    cli_fmt_ns(rest, (double)own);
    const char *kn = w->kernels ? cli_fmt_count(ks, w->kernels) : "";
    if (lib)
        cli_table_row(t, c, g, per, tri, li, rest, kn, where);
    else
        cli_table_row(t, c, g, per, tri, rest, kn, where);
}

size_t cli_user_sites_table(struct cli_table *t, const struct cli_view *v)
{
    const struct cli_report *r = v->r;
    size_t cap = 0, n = 0;
    for (size_t i = 0; i < r->n_kernels; i++)
        cap += r->kernels[i].n_sites;
    /* one entry per site, sorted by user site, then each run summed */
    struct row *rows = cli_xcalloc(cap ? cap : 1, sizeof *rows);
    for (size_t i = 0; i < r->n_kernels; i++) {
        const struct cli_kernel *k = &r->kernels[i];
        for (size_t s = 0; s < k->n_sites; s++) {
            const struct cli_site *site = &k->sites[s];
            if (!site->gap_ns.set) /* a native site, or a report from before site times */
                continue;
            rows[n++] = (struct row){site->user ? site->user : site->site,
                                     site->launches,
                                     site->gap_ns.v,
                                     site->triton_ns.set ? site->triton_ns.v : 0,
                                     site->library_ns.set ? site->library_ns.v : 0,
                                     1,
                                     i};
        }
    }
    if (n)
        qsort(rows, n, sizeof *rows, by_where);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && strcmp(rows[m - 1].where, rows[i].where) == 0) {
            struct row *d = &rows[m - 1];
            d->launches += rows[i].launches;
            d->gap_ns += rows[i].gap_ns;
            d->triton_ns += rows[i].triton_ns;
            d->lib_ns += rows[i].lib_ns;
            d->kernels += rows[i].kernel != d->kernel;
            d->kernel = rows[i].kernel;
        } else {
            rows[m++] = rows[i];
        }
    }
    n = m;
    if (n)
        qsort(rows, n, sizeof *rows, by_gap);
    int lib = 0;
    for (size_t i = 0; i < n; i++)
        lib |= rows[i].lib_ns != 0;
    cli_table_init(t, lib ? "rrrrrrrl" : "rrrrrrl");
    if (n && lib)
        cli_table_row(t, "launches", "host between", "per launch", "Triton's", "library's", "rest", "kernels",
                      "user site");
    else if (n)
        cli_table_row(t, "launches", "host between", "per launch", "Triton's", "rest", "kernels", "user site");
    struct row more = {0}, all = {0};
    for (size_t i = 0; i < n; i++) {
        add(&all, &rows[i]);
        if (i < USER_SITES_SHOWN)
            row(t, &rows[i], rows[i].where, lib);
        else
            add(&more, &rows[i]);
    }
    if (n > USER_SITES_SHOWN) {
        char what[64];
        snprintf(what, sizeof what, "(%zu more user sites)", n - USER_SITES_SHOWN);
        row(t, &more, what, lib);
    }
    if (n) {
        cli_table_rule(t);
        row(t, &all, "total", lib);
    }
    free(rows);
    return n;
}
