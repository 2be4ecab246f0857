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
static _Atomic uint64_t sum[FP_PH_MARKS - 1], sub[FP_SUB_N], hits;

static void print(void)
{
    static const char *const names[FP_PH_MARKS - 1] = {
        "entry+arguments", "guards", "bind+device+stream", "key", "memo", "grid+replay (driver incl.)", "exit"};
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
