/* py->driver by Triton's phases (TRLAT_PY_PHASES): for each kernel that
 * has them, the mean per call of the time before Triton's launcher and of
 * the launcher's own, and of the calls that passed every mark, binding
 * and specialization, cache lookup with the grid, and launch metadata. A
 * slower Triton release then shows in the phase that grew. */
#include "report/cli/cli.h"
#include "report/cli/fmt.h"

static char *mean(char buf[CLI_FMT_LEN], uint64_t sum, uint64_t n)
{
    return n ? cli_fmt_ns(buf, (double)sum / (double)n) : "-";
}

size_t cli_phases_table(struct cli_table *t, const struct cli_view *v)
{
    cli_table_init(t, "rrrrrrrl");
    size_t rows = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct cli_kernel *k = v->kernels[i];
        const struct cli_phases *p = &k->phases;
        if (!p->set || !p->calls)
            continue;
        if (!rows++)
            cli_table_row(t, "calls", "before launcher", "launcher", "of them", "bind", "cache+grid", "metadata",
                          "kernel");
        char c[CLI_FMT_LEN], b[CLI_FMT_LEN], l[CLI_FMT_LEN], s[CLI_FMT_LEN], x[CLI_FMT_LEN], y[CLI_FMT_LEN],
            z[CLI_FMT_LEN];
        cli_table_row(t, cli_fmt_count(c, p->calls), mean(b, p->ns[0], p->calls), mean(l, p->ns[1], p->calls),
                      cli_fmt_count(s, p->split_calls), mean(x, p->ns[2], p->split_calls),
                      mean(y, p->ns[3], p->split_calls), mean(z, p->ns[4], p->split_calls), k->name);
    }
    return rows;
}
