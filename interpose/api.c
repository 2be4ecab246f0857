/* trlat's small public API (exported as trlat_api_*). */
#include "interpose/real.h"
#include "interpose/region.h"
#include "interpose/tstate.h"
#include "interpose/lifecycle.h"

/* The real driver entry point trlat forwards `name` to (slot 0), or NULL.
 * For benchmarks that compare a direct driver call with trlat's wrapper in
 * one process. */
TRLAT_EXPORT void *trlat_api_real_function(const char *name)
{
    int fn = trlat_fn_by_name(name);
    return fn < 0 ? NULL : trlat_real_get((enum trlat_fn)fn, 0);
}

/* 1 when trlat records in this process, 0 when disabled. */
TRLAT_EXPORT int trlat_api_active(void)
{
    return trlat_active();
}

/* Profiling paused (on == 0) or resumed (1) from here on, for every thread:
 * a paused launch goes to the driver unrecorded (the fast path still
 * captures and replays). Returns the state before (1: profiling), or -1
 * when trlat is disabled. */
TRLAT_EXPORT int trlat_api_profiling(int on)
{
    if (!trlat_active())
        return -1;
    return !trlat_tstate_set_paused(!on);
}

/* The fast path switched on (1) or off (0) from here on: off, every Triton
 * call runs through Triton and nothing is replayed; on again, the memo
 * already built serves. Returns the state before, or -1 when the fast path
 * did not start in this process (TRLAT_FASTPATH=0, or it could not). */
TRLAT_EXPORT int trlat_api_fastpath(int on)
{
    if (!trlat_active())
        return -1;
    int n;
    const struct trlat_module *const *m = trlat_modules(&n);
    for (int i = 0; i < n; i++)
        if (m[i]->set_fastpath)
            return m[i]->set_fastpath(on);
    return -1;
}

/* Writes the report of what was recorded so far now (the exit's report
 * replaces it): 0, or -1 when none was written (nothing launched yet,
 * trlat disabled, the exit's report already written, the write failed). */
TRLAT_EXPORT int trlat_api_flush(void)
{
    return trlat_active() ? trlat_checkpoint() : -1;
}

/* The path of the report this process wrote last, copied into buf (len
 * bytes): its length, or -1 when no report was written yet. */
TRLAT_EXPORT int trlat_api_report_path(char *buf, unsigned long len)
{
    return trlat_active() && buf ? trlat_report_path(buf, len) : -1;
}

/* The calling thread enters region `name` (its launches are grouped under
 * it in the report until the matching pop; regions nest, the innermost
 * counts) / leaves its innermost region. Return the depth after, or -1
 * (trlat disabled, out of memory, nothing open to pop). */
TRLAT_EXPORT int trlat_api_region_push(const char *name)
{
    return trlat_active() ? trlat_region_push(name) : -1;
}

TRLAT_EXPORT int trlat_api_region_pop(void)
{
    return trlat_active() ? trlat_region_pop() : -1;
}
