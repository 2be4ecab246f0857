/* What the fast path shows the parts above it (the report): whether it ran,
 * and its counters per kernel name. Its side of a hooked Triton call is the
 * Python hook's struct trlat_pymemo (interpose/python/pyhook.h), offered
 * through its module. */
#ifndef TRLAT_FASTPATH_H
#define TRLAT_FASTPATH_H

#include <stdint.h>

/* Whether the memo is in use in this process (TRLAT_FASTPATH=1 or verify,
 * and it could start). */
int trlat_fastpath_on(void);

/* What ran (TRLAT_FASTPATH said on or verify): "ran" once a Triton call
 * reached the memo ready, else "stood_aside" with why (*reason); NULL
 * when it was not asked for. */
const char *trlat_fastpath_state(const char **reason);

/* One kernel name's counters: hits, misses and fallbacks by reason
 * (reason_names[r] counted reasons[r] times; nreasons of them). */
struct trlat_fastpath_counts {
    const char *name;
    uint64_t hits, misses, library_hits;
    const uint64_t *reasons;
    const char *const *reason_names;
    int nreasons;
};
/* The i-th kernel name's counters (the shared "(other)" record last); 0
 * past the end. Read at exit, while calls may still count. */
int trlat_fastpath_counts(unsigned i, struct trlat_fastpath_counts *out);

#endif
