/* TRLAT_FASTPATH_PHASES=1: see phases.h. */
#include "fastpath/phases.h"
#include "interpose/config.h"
#include "interpose/log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

int fp_phases_on;
_Thread_local uint64_t fp_phase_t[FP_PH_MARKS] __attribute__((tls_model("initial-exec")));
_Thread_local uint64_t fp_sub_t[FP_SUB_N] __attribute__((tls_model("initial-exec")));
_Thread_local uint64_t fp_le_t[FP_LE_MARKS] __attribute__((tls_model("initial-exec")));
static _Atomic uint64_t sum[FP_PH_MARKS - 1], sub[FP_SUB_N], hits;
#define LE_LISTED 64
static struct fp_le_phases *le_list[LE_LISTED];
static unsigned le_n;

static uint64_t le_total(const struct fp_le_phases *p)
{
    uint64_t t = 0;
    for (int i = 0; i < FP_LE_MARKS - 1; i++)
        t += p->sum[i];
    return t;
}

static int le_costlier(const void *a, const void *b)
{
    uint64_t x = le_total(*(struct fp_le_phases *const *)a), y = le_total(*(struct fp_le_phases *const *)b);
    return x < y ? 1 : x > y ? -1 : 0;
}

/* One line per LibEntry served, the costliest 16 (ns per call). */
static void print_le(void)
{
    static const char *const names[FP_LE_MARKS - 1] = {"entry", "guards", "key",     "lookup",
                                                       "grid",  "hooks",  "getitem", "launch"};
    qsort(le_list, le_n, sizeof *le_list, le_costlier);
    for (unsigned k = 0; k < le_n && k < 16; k++) {
        const struct fp_le_phases *p = le_list[k];
        char line[512];
        int len =
            snprintf(line, sizeof line, "fast path phases, LibEntry of %s over %llu calls, ns per call: total %.0f;",
                     p->name, (unsigned long long)p->n, (double)trlat_ticks_ns(le_total(p)) / (double)p->n);
        for (int i = 0; i < FP_LE_MARKS - 1 && len > 0 && len < (int)sizeof line; i++)
            len += snprintf(line + len, sizeof line - (size_t)len, " %s %.0f;", names[i],
                            (double)trlat_ticks_ns(p->sum[i]) / (double)p->n);
        trlat_log("%s", line);
    }
}

static void print(void)
{
    static const char *const names[FP_PH_MARKS - 1] = {
        "entry+arguments", "guards", "bind+device+stream", "key", "memo", "grid+replay (driver incl.)", "exit"};
    print_le();
    uint64_t n = atomic_load(&hits);
    if (!n)
        return;
    char line[512];
    int len = snprintf(line, sizeof line, "fast path phases over %llu hits, ns per hit:", (unsigned long long)n);
    for (int i = 0; i < FP_PH_MARKS - 1 && len > 0 && len < (int)sizeof line; i++)
        len += snprintf(line + len, sizeof line - (size_t)len, " %s %.0f;", names[i],
                        (double)trlat_ticks_ns(atomic_load(&sum[i])) / (double)n);
    trlat_log("%s", line);
    static const char *const parts[FP_SUB_N] = {"device", "stream", "tensors", "ints", "other", "options+hash"};
    len = snprintf(line, sizeof line, "fast path phases, parts of the two above, ns per hit:");
    for (int i = 0; i < FP_SUB_N && len > 0 && len < (int)sizeof line; i++)
        len += snprintf(line + len, sizeof line - (size_t)len, " %s %.0f;", parts[i],
                        (double)trlat_ticks_ns(atomic_load(&sub[i])) / (double)n);
    trlat_log("%s", line);
}

void fp_phases_init(void)
{
    if (trlat_config(TRLAT_OPT_FP_PHASES) && atexit(print) == 0)
        fp_phases_on = 1;
}

void fp_phases_commit(void)
{
    for (int i = 0; i < FP_PH_MARKS - 1; i++)
        if (!fp_phase_t[i] || fp_phase_t[i + 1] < fp_phase_t[i])
            return; /* a mark was skipped: not a plain hit */
    for (int i = 0; i < FP_PH_MARKS - 1; i++)
        atomic_fetch_add_explicit(&sum[i], fp_phase_t[i + 1] - fp_phase_t[i], memory_order_relaxed);
    for (int i = 0; i < FP_SUB_N; i++)
        atomic_fetch_add_explicit(&sub[i], fp_sub_t[i], memory_order_relaxed);
    atomic_fetch_add_explicit(&hits, 1, memory_order_relaxed);
}

void fp_le_phases_commit(struct fp_le_phases *p)
{
    for (int i = 0; i < FP_LE_MARKS - 1; i++)
        if (!fp_le_t[i] || fp_le_t[i + 1] < fp_le_t[i])
            return; /* a mark was skipped, or a nested call's overwrote them */
    if (!p->listed) {
        if (le_n == LE_LISTED)
            return;
        le_list[le_n++] = p;
        p->listed = 1;
    }
    for (int i = 0; i < FP_LE_MARKS - 1; i++)
        p->sum[i] += fp_le_t[i + 1] - fp_le_t[i];
    p->n++;
}
