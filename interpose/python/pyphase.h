/* TRLAT_PY_PHASES: a Triton call's py->driver split where Triton's run
 * passes its marks: the cache key (triton.runtime.jit.compute_cache_key),
 * the launch metadata (CompiledKernel.launch_metadata) and the launcher
 * (CudaLauncher.__call__), each wrapped to note its first entry in the
 * thread's open call (off by default: two more wrapped calls in every
 * Triton call). At the call's close the parts go to its first launch's
 * kernel: before the launcher (binding and specialization, cache lookup,
 * grid, launch metadata: Triton's Python) and the launcher's own (argument
 * packing, C), and where all three marks were passed, the first of them
 * split further. A regression in one phase then shows in its part. */
#ifndef TRLAT_PYPHASE_H
#define TRLAT_PYPHASE_H

#include "interpose/clock.h"
#include "interpose/tstate.h"

enum { TRLAT_PHM_KEY, TRLAT_PHM_META, TRLAT_PHM_LAUNCHER };

extern int trlat_pyphases_on;

/* The thread's open call passed mark m (before its first launch only). */
static inline void trlat_pyphase_mark(struct trlat_tstate *ts, int m)
{
    if (ts->py_t0 <= TRLAT_PY_UNTIMED || ts->py_launches)
        return;
    if (ts->ph_call != ts->py_t0) {
        ts->ph_call = ts->py_t0;
        ts->ph[0] = ts->ph[1] = ts->ph[2] = 0;
    }
    if (!ts->ph[m])
        ts->ph[m] = trlat_ticks();
}

/* At the close of a call that passed a mark (ts->ph_call == ts->py_t0):
 * its parts added to its first launch's kernel, while that launch's
 * record is still pending (its entry time is there). */
void trlat_pyphase_close(struct trlat_tstate *ts);
/* The same for a library's call that entered Triton's (pyhook.h
 * trlat_pylib_mark): always on, weighted as the call's launch. */
void trlat_pylib_close(struct trlat_tstate *ts);

#endif
