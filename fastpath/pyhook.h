/* The Python hook around Triton's JITFunction.run (and Autotuner.run,
 * Heuristics.run): what its files share. Everything here runs with the GIL
 * held unless said otherwise. See docs/PYHOOK.md. */
#ifndef TRLAT_PYHOOK_H
#define TRLAT_PYHOOK_H

#include "fastpath/pyapi.h"
#include "interpose/clock.h"
#include "interpose/tstate.h"

#include <stdatomic.h>
#include <stdint.h>

/* What a wrapper wraps (the `kind` given to _trlat_wrap). */
enum trlat_pyhook_kind { TRLAT_PYHOOK_JIT = 0, TRLAT_PYHOOK_AUTOTUNER = 1, TRLAT_PYHOOK_HEURISTICS = 2,
                         TRLAT_PYHOOK_GETITEM = 3, /* KernelInterface.__getitem__: notes kernel[grid]'s time */
                         TRLAT_PYHOOK_KINDS };

/* Counters for the report's "python" object; its outermost calls are the
 * sum of the last five (one increment per call). */
struct trlat_pyhook_counts {
    _Atomic uint64_t nested;         /* calls inside another hooked call */
    _Atomic uint64_t one_launch;     /* outermost calls that launched once */
    _Atomic uint64_t multi_launch;   /* ... several times (autotuning, ...) */
    _Atomic uint64_t no_launch_warmup; /* ... never: warmup=True */
    _Atomic uint64_t no_launch_error;  /* ... never: raised */
    _Atomic uint64_t no_launch_other;  /* ... never: returned without launching */
};
extern struct trlat_pyhook_counts trlat_pyhook_counts;

/* The thread's outermost Python call, as the driver wrapper reads it
 * (ts->py_t0, py_site, py_launches): opened by the run hook, or by the fast
 * path's kernel[grid] launcher for a replay that never reaches run(). */
struct trlat_pycall {
    uint64_t site;
    uint32_t launches;
};
static inline void trlat_pycall_open(struct trlat_tstate *ts, uint64_t t0, uint64_t site, struct trlat_pycall *saved)
{
    saved->site = ts->py_site;
    saved->launches = ts->py_launches;
    ts->py_site = site;
    ts->py_launches = 0;
    ts->py_k = NULL;
    ts->py_t0 = t0;
}
/* Closes it; returns the launches the call made. The call's first launch
 * left its kernel's slot and driver exit in py_k/py_t1: the time from there
 * to here is that kernel's py_return_ns. */
static inline uint32_t trlat_pycall_close(struct trlat_tstate *ts, const struct trlat_pycall *saved)
{
    uint32_t n = ts->py_launches;
    if (ts->py_k) {
        trlat_stat_add_relaxed(&ts->py_k->ret, trlat_ticks_ns(trlat_ticks() - ts->py_t1));
        ts->py_k = NULL;
    }
    ts->py_t0 = 0;
    ts->py_site = saved->site;
    ts->py_launches = saved->launches;
    return n;
}
/* Counts an outermost call in trlat_pyhook_counts by what it did. */
void trlat_pyhook_count_call(uint32_t launches, int raised, int warmup);

/* Hook state for the report. */
extern const char *_Atomic trlat_pyhook_state; /* NULL: no Python seen; else "installed", ... */
extern char trlat_pyhook_triton_version[32];
extern char trlat_pyhook_reason[256];

/* A wrapper of `orig` for kind: a descriptor that binds like a Python
 * function (new reference), or NULL with a Python error set. For
 * TRLAT_PYHOOK_GETITEM, None when no wrapper is wanted (the fast path puts
 * its own kernel[grid] launcher in place). */
PyObject *trlat_pyhook_wrap(PyObject *orig, int kind);

/* Lets the __getitem__ wrapper make Triton's lambda itself (code: the
 * lambda's code object; globals: the method's; self_first: the lambda's
 * free variables are (self, grid), else (grid, self)). 0, or -1 when this
 * Python lacks what it takes. */
int trlat_pyhook_set_subscript_lambda(PyObject *code, PyObject *globals, int self_first);

/* The site of the innermost Python frame that is not in the skipped package
 * (Triton's): 0 when there is none. */
uint64_t trlat_pyhook_caller_site(void);
/* Frames whose code file starts with prefix are Triton's (copied). */
void trlat_pyhook_set_skip_prefix(const char *prefix);

/* Asks for the hook to be installed (or looked at again) soon, on Python's
 * main thread. Any thread, GIL or not, cheap once there is nothing to do. */
void trlat_pyhook_poke(void);

#endif
