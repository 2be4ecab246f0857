/* trlat's small public API (exported as trlat_api_*). */
#include "interpose/real.h"
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
