/* The Python hook around Triton's JITFunction.run (and Autotuner.run,
 * Heuristics.run): what its files share. Everything here runs with the GIL
 * held unless said otherwise. See docs/PYHOOK.md. */
#ifndef TRLAT_PYHOOK_H
#define TRLAT_PYHOOK_H

#include "interpose/python/pyapi.h"
#include "interpose/clock.h"
#include "interpose/python/pyphase.h"
#include "interpose/tstate.h"

#include <stdatomic.h>
#include <stdint.h>

/* What a wrapper wraps (the `kind` given to _trlat_wrap). */
enum trlat_pyhook_kind {
    TRLAT_PYHOOK_JIT = 0,
    TRLAT_PYHOOK_AUTOTUNER = 1,
    TRLAT_PYHOOK_HEURISTICS = 2,
    TRLAT_PYHOOK_GETITEM = 3,          /* KernelInterface.__getitem__: notes kernel[grid]'s time */
    TRLAT_PYHOOK_ENTRY = 4,            /* a library's KernelInterface.run, Inductor's CachingAutotuner.run */
    TRLAT_PYHOOK_LAUNCHER = 5,         /* Triton's CudaLauncher.__call__ */
    TRLAT_PYHOOK_COMPILED_GETITEM = 6, /* CompiledKernel.__getitem__: notes compiled[grid]'s time */
    TRLAT_PYHOOK_LAUNCHER_INIT = 7,    /* CudaLauncher.__init__: the fast path reads the signature */
    TRLAT_PYHOOK_PHASE_KEY = 8,        /* triton.runtime.jit.compute_cache_key: a phase's start (TRLAT_PY_PHASES) */
    TRLAT_PYHOOK_PHASE_META = 9,       /* CompiledKernel.launch_metadata: likewise */
    TRLAT_PYHOOK_STATIC_RUN = 10,      /* torch's StaticallyLaunchedTritonKernel.run (static launcher) */
    TRLAT_PYHOOK_KINDS
};

/* The fast path's side of a hooked JITFunction.run call (fastpath/
 * offers it through its module's `pymemo`: interpose/lifecycle.h). With
 * the GIL held.
 * - before: for each run(self, *args, grid=..., warmup=..., **kwargs) call
 *   the hook sees, before Triton runs. Returns a new reference to the result
 *   Triton would have returned (the CompiledKernel) when the call was served
 *   by a replay: the kernel has been launched and the hook returns this at
 *   once. Returns NULL (no Python error set) when Triton must run; *state is
 *   then handed to `after` once Triton's run returned (result NULL if it
 *   raised). Called only when TRLAT_FASTPATH is not 0.
 * - prekey_entry: when this run() call comes from the memo's own
 *   kernel[grid] launcher (fastpath/getitem.c), which already keyed it, and
 *   the launcher was the thread's outermost call: its entry tick and caller
 *   site (the call's py->driver time starts where the launcher started,
 *   keying included) and 1; else 0.
 * - prekeyed: whether this run() call comes from that launcher, which keyed
 *   it: then `before` needs neither args nor kwargs (NULL, NULL).
 * One layer down, for every Python launch of a compiled kernel:
 * - launcher_made: CudaLauncher.__init__(self, *args) returned;
 * - launch: CudaLauncher.__call__(*args) (args[0] the launcher) is about
 *   to run: a new reference to its result when replayed, NULL with an
 *   error set when the replay raised as the launcher would, NULL without
 *   one when the launcher must run; then `launched` gets *state and the
 *   launcher's result;
 * - compiled_getitem: compiled[grid] (orig: CompiledKernel.__getitem__):
 *   a runner object of the memo's, or NULL (no error) for orig's. */
struct trlat_pymemo {
    PyObject *(*before)(PyObject *jitfn, PyObject *args, PyObject *kwargs, void **state);
    void (*after)(void *state, PyObject *result);
    int (*prekey_entry)(PyObject *jitfn, uint64_t *t0, uint64_t *site);
    int (*prekeyed)(PyObject *jitfn);
    void (*launcher_made)(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
    PyObject *(*launch)(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, void **state);
    void (*launched)(void *state, PyObject *result);
    PyObject *(*compiled_getitem)(PyObject *orig, PyObject *compiled, PyObject *grid);
    /* A library's or Inductor's KernelInterface run (ENTRY): the result when
     * served, NULL with an error when the served launch raised, NULL
     * without one when orig must run. */
    PyObject *(*entry)(PyObject *orig, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
    /* torch's static CUDA launcher, StaticallyLaunchedTritonKernel.run
     * (STATIC_RUN): as launch and launched, args[0] the kernel object. */
    PyObject *(*static_launch)(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, void **state);
    void (*static_launched)(void *state, PyObject *result);
};
/* Finds the module that offers one (none: the hook only profiles). At the
 * hook's start. */
void trlat_pyhook_find_memo(void);

/* What the report's "python" object counts, per thread in ts->py_calls
 * (written by the owner thread only: no locked instruction on a call, with
 * or without a GIL) and summed over threads for the report; its outermost
 * calls are the sum of all but the first (one increment per call). */
enum trlat_pyhook_count {
    TRLAT_PYC_NESTED = 0,       /* calls inside another hooked call */
    TRLAT_PYC_ONE_LAUNCH,       /* outermost calls that launched once */
    TRLAT_PYC_MULTI_LAUNCH,     /* ... several times (autotuning, ...) */
    TRLAT_PYC_NO_LAUNCH_WARMUP, /* ... never: warmup=True */
    TRLAT_PYC_NO_LAUNCH_ERROR,  /* ... never: raised */
    TRLAT_PYC_NO_LAUNCH_OTHER,  /* ... never: returned without launching */
    TRLAT_PYC_KINDS
};
_Static_assert(TRLAT_PYC_KINDS == TRLAT_PY_CALL_KINDS, "interpose/tstate.h's py_calls");
static inline void trlat_pyhook_count(struct trlat_tstate *ts, enum trlat_pyhook_count c)
{
    TRLAT_WR(ts->py_calls[c], TRLAT_RD(ts->py_calls[c]) + 1);
}

/* Which layer took what: when the thread's outermost call is a library's
 * (or Inductor's) KernelInterface.run (ENTRY), the first entry into
 * Triton's own before its first launch (JITFunction.run, an Autotuner's or
 * Heuristics' run, kernel[grid] or compiled[grid] evaluated, Triton's CUDA
 * launcher, torch's static launcher) splits its py->driver: from the
 * call's entry to there is the library's own Python. ts->py_lib is 0 for
 * other calls, TRLAT_PY_LIB_OPEN until that entry, then its ticks; the
 * call's close adds the part to its first launch's kernel. */
#define TRLAT_PY_LIB_OPEN 1u
static inline void trlat_pylib_mark(struct trlat_tstate *ts)
{
    if (ts->py_lib == TRLAT_PY_LIB_OPEN && !ts->py_launches && ts->py_t0 > TRLAT_PY_UNTIMED)
        ts->py_lib = trlat_ticks();
}

/* The thread's outermost Python call, as the driver wrapper reads it
 * (ts->py_t0, py_site, py_launches): opened by the run hook, or by the fast
 * path's kernel[grid] launcher for a replay that never reaches run(). */
struct trlat_pycall {
    uint64_t site, lib;
    uint32_t launches;
};
/* A Python call's entry: its time, or TRLAT_PY_UNTIMED under
 * TRLAT_TIMING=none (a call open, untimed: its launches' records have no
 * times to subtract it from). */
static inline uint64_t trlat_py_stamp(void)
{
    uint64_t t = trlat_stamp();
    return t ? t : TRLAT_PY_UNTIMED;
}
static inline void trlat_pycall_open(struct trlat_tstate *ts, uint64_t t0, uint64_t site, struct trlat_pycall *saved)
{
    saved->site = ts->py_site;
    saved->lib = ts->py_lib;
    saved->launches = ts->py_launches;
    ts->py_lib = 0;
    ts->py_site = site;
    ts->py_launches = 0;
    ts->py_k = NULL;
    ts->py_rec = NULL;
    ts->py_t0 = t0;
}
/* Closes it; returns the launches the call made. The time from the call's
 * first launch's driver exit to here is that kernel's py_return_ns: written
 * into the launch's record (ts->py_rec), or, when the record was folded
 * meanwhile, added to its slot (py_k, py_t1). */
static inline uint32_t trlat_pycall_close(struct trlat_tstate *ts, const struct trlat_pycall *saved)
{
    uint32_t n = ts->py_launches;
    if (__builtin_expect(ts->ph_call == ts->py_t0, 0)) /* never 0 here: an open call's py_t0 is set */
        trlat_pyphase_close(ts);                       /* TRLAT_PY_PHASES; before py_rec goes */
    if (ts->py_lib > TRLAT_PY_LIB_OPEN)
        trlat_pylib_close(ts); /* likewise */
    if (ts->py_rec || ts->py_k) {
        if (ts->py_t0 != TRLAT_PY_UNTIMED) { /* else nothing to time from */
            uint64_t now = trlat_ticks();
            if (ts->py_rec)
                TRLAT_WR(ts->py_rec->ret, now);
            else
                trlat_stat_add_w_relaxed(&ts->py_k->ret, trlat_ticks_ns(now - ts->py_t1),
                                         trlat_rec_weight(ts->py_site));
        }
        ts->py_rec = NULL;
        ts->py_k = NULL;
    }
    ts->py_t0 = 0;
    ts->py_site = saved->site;
    ts->py_lib = saved->lib;
    ts->py_launches = saved->launches;
    return n;
}
/* Counts an outermost call by what it did. */
void trlat_pyhook_count_call(struct trlat_tstate *ts, uint32_t launches, int raised, int warmup);

/* Notes compiled[grid]'s time and site for the launcher's hook, as the
 * __getitem__ wrapper does: a call the memo's runner hands to Triton's own
 * closure is timed from the runner's entry. */
void trlat_pyhook_note_subscript(PyObject *compiled, uint64_t t0, uint64_t site);

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

/* The hooked call's sites as a pair (interpose/python/pysites.h): the
 * kernel's, the innermost frame outside the launch runtime, and the
 * user's, the innermost frame of the program's own code; 0 when there is
 * neither. */
uint64_t trlat_pyhook_caller_site(void);
/* Whether call sites are read from the running interpreter frame (CPython
 * 3.12, 3.13; pyhook_site.c): the reads that agreed before it switched on,
 * 0 while it is not on. */
unsigned trlat_pyhook_sites_direct(void);
/* How call sites are being read: "frame_objects" (PyFrame_GetBack: other
 * versions, and 3.12 and 3.13 until the reads agreed), "interpreter" (the
 * interpreter frames, their code and offset through CPython's calls) or
 * "interpreter_words" (and those two read from the frame itself). */
const char *trlat_pyhook_frame_reads(void);
/* A frame whose code's file matches rule (a prefix; with a leading '*', a
 * substring) is a library's (library: 1) or the launch runtime's (0).
 * 0, or -1 when the rule is empty or the table full (16 of each). */
int trlat_pyhook_add_site_rule(int library, const char *rule);

/* Asks for the hook to be installed (or looked at again) soon, on Python's
 * main thread. Any thread, GIL or not, cheap once there is nothing to do. */
void trlat_pyhook_poke(void);

/* A call the fast path serves without the hooked function (its kernel[grid]
 * launcher, its compiled[grid] runner), timed as the hook times a call:
 * opened when it is the thread's outermost and profiling is not paused
 * (ts set), else ts NULL and nothing to close. */
struct trlat_pyserve {
    struct trlat_tstate *ts;
    struct trlat_pycall saved;
    uint64_t t0, site;
};
static inline void trlat_pyserve_open(struct trlat_pyserve *s)
{
    struct trlat_tstate *ts = trlat_tstate_get();
    *s = (struct trlat_pyserve){NULL, {0, 0, 0}, 0, 0};
    if (!ts || ts->py_t0 || (ts->slow & TRLAT_SLOW_PAUSED))
        return;
    s->ts = ts;
    s->t0 = trlat_py_stamp();
    s->site = trlat_pyhook_caller_site();
    trlat_pycall_open(ts, s->t0, s->site, &s->saved);
}

#endif
