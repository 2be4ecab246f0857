/* The table trlat prints on stderr at exit (TRLAT_SUMMARY=1). */
#include "interpose/clock.h"
#include "report/writer.h"

#include <inttypes.h>
#include <string.h>

static const char *human(uint64_t ns, char *buf, size_t len)
{
    if (ns < 10000)
        snprintf(buf, len, "%" PRIu64 " ns", ns);
    else if (ns < 10000000)
        snprintf(buf, len, "%.1f us", (double)ns / 1e3);
    else if (ns < 10000000000ULL)
        snprintf(buf, len, "%.1f ms", (double)ns / 1e6);
    else
        snprintf(buf, len, "%.1f s", (double)ns / 1e9);
    return buf;
}

/* The median: a Triton kernel's first call (its compile, hundreds of ms)
 * would make the mean of a short run its own. */
static const char *median(const struct trlat_stat *s, char *buf, size_t len)
{
    if (!s->count)
        return "-";
    return human(trlat_stat_quantile(s, 0.5), buf, len);
}

#define TOP 10
#define TOP_STARVED 5

/* The kernels the GPU waited for longest (CUPTI). */
static void starved_top(FILE *out, const struct trlat_fold *f)
{
    const struct trlat_kstats *top[TOP_STARVED] = {0};
    for (size_t i = 0; i < f->n; i++) {
        const struct trlat_kstats *k = f->k[i];
        for (int j = 0; j < TOP_STARVED && k->starved_ns; j++)
            if (!top[j] || k->starved_ns > top[j]->starved_ns) {
                memmove(&top[j + 1], &top[j], (TOP_STARVED - 1 - (size_t)j) * sizeof top[0]);
                top[j] = k;
                break;
            }
    }
    char a[32], name[49];
    for (int j = 0; j < TOP_STARVED && top[j]; j++) {
        snprintf(name, sizeof name, "%s", top[j]->name);
        if (strlen(top[j]->name) > 48)
            memcpy(name + 45, "...", 4);
        fprintf(out, "trlat:   starved %10s before %-48s (%" PRIu64 " of %" PRIu64 " launches)\n",
                human(top[j]->starved_ns, a, sizeof a), name, top[j]->starved_launches,
                top[j]->from_driver + top[j]->from_runtime);
    }
}

void trlat_report_summary(FILE *out, const struct trlat_fold *f, const char *path, uint64_t wall_ns)
{
    uint64_t launches = 0, driver = 0, starved = 0;
    for (size_t i = 0; i < f->n; i++) {
        launches += f->k[i]->from_driver + f->k[i]->from_runtime;
        driver += f->k[i]->driver.sum;
        starved += f->k[i]->starved_ns;
    }
    char a[32], b[32], c[32], d[32], e[32];
    char drv[96];
    if (trlat_clk.untimed)
        snprintf(drv, sizeof drv, "not timed (TRLAT_TIMING=none)");
    else if (trlat_clk.sampled) /* the sums are estimates: a sampled hit stands for TRLAT_SAMPLE_EVERY */
        snprintf(drv, sizeof drv, "~%s in the driver (fast-path hits timed 1 in %u: TRLAT_TIMING=sampled)",
                 human(driver, b, sizeof b), TRLAT_SAMPLE_EVERY);
    else
        snprintf(drv, sizeof drv, "%s in the driver", human(driver, b, sizeof b));
    fprintf(out, "trlat: %" PRIu64 " launches of %zu kernels in %s; %s; report: %s\n", launches, f->n,
            human(wall_ns, a, sizeof a), drv, path ? path : "(not written)");
    fprintf(out, "trlat: %-32s %10s %10s %10s %10s %10s %10s\n", "kernel (by host time; p50s)", "launches", "py->drv",
            "driver", "gap", "gpu", "starved");
    for (size_t i = 0; i < f->n && i < TOP; i++) {
        const struct trlat_kstats *k = f->k[i];
        char name[33];
        snprintf(name, sizeof name, "%s", k->name);
        if (strlen(k->name) > 32)
            memcpy(name + 29, "...", 4);
        fprintf(out, "trlat: %-32s %10" PRIu64 " %10s %10s %10s %10s %10s\n", name, k->from_driver + k->from_runtime,
                median(&k->py, a, sizeof a), median(&k->driver, b, sizeof b), median(&k->gap, c, sizeof c),
                f->has_gpu ? median(&k->gpu, d, sizeof d) : "-", f->has_gpu ? human(k->starved_ns, e, sizeof e) : "-");
    }
    if (f->n > TOP)
        fprintf(out, "trlat: ... %zu more kernels in the report\n", f->n - TOP);
    if (f->has_gpu && wall_ns) {
        fprintf(out, "trlat: GPU busy %s, starved for the host %s (%.1f%% of the run)\n",
                human(f->gpu_busy_ns, b, sizeof b), human(starved, a, sizeof a),
                100.0 * (double)starved / (double)wall_ns);
        starved_top(out, f);
    }
}
