/* The report by region (trlat.region, trlat_api_region_push, NVTX ranges):
 * each region's launches and host times, most host time first. */
#include "report/cli/cli.h"
#include "report/cli/fmt.h"
#include "report/cli/util.h"

#include <stdlib.h>
#include <string.h>

static uint64_t host(const struct cli_region *g)
{
    return g->py_ns + g->driver_ns;
}

static int by_host(const void *a, const void *b)
{
    const struct cli_region *x = *(const struct cli_region *const *)a, *y = *(const struct cli_region *const *)b;
    if (host(x) != host(y))
        return host(x) < host(y) ? 1 : -1;
    return strcmp(x->name, y->name);
}

size_t cli_regions_table(struct cli_table *t, const struct cli_view *v)
{
    const struct cli_report *r = v->r;
    cli_table_init(t, "rrrrrrl");
    if (!r->n_regions)
        return 0;
    const struct cli_region **order = cli_xcalloc(r->n_regions, sizeof *order);
    for (size_t i = 0; i < r->n_regions; i++)
        order[i] = &r->regions[i];
    qsort(order, r->n_regions, sizeof *order, by_host);
    cli_table_row(t, "launches", "host total", "py→drv", "driver", "return", "between", "region");
    for (size_t i = 0; i < r->n_regions; i++) {
        const struct cli_region *g = order[i];
        char n[CLI_FMT_LEN], h[CLI_FMT_LEN], p[CLI_FMT_LEN], d[CLI_FMT_LEN], ret[CLI_FMT_LEN], gap[CLI_FMT_LEN];
        cli_table_row(t, cli_fmt_count(n, g->launches), cli_fmt_ns(h, (double)host(g)), cli_fmt_ns(p, (double)g->py_ns),
                      cli_fmt_ns(d, (double)g->driver_ns), cli_fmt_ns(ret, (double)g->ret_ns),
                      cli_fmt_ns(gap, (double)g->gap_ns), g->name);
    }
    free(order);
    return r->n_regions;
}
