/* Launch wrappers: cuLaunchKernel, cuLaunchKernelEx and
 * cuLaunchCooperativeKernel, legacy and per-thread-stream (_ptsz), each as
 * the exported symbol (slot 0) and as TRLAT_SLOTS-1 spare wrappers for other
 * pointers cuGetProcAddress hands out (see real.h).
 *
 * The common case costs two TSC reads (none for a launch counted untimed),
 * the record (with the thread's Python call, if one is open: its entry and
 * site) and two stores of the driver entry time in the thread's state
 * (ts->cur_t0, for CUPTI's launch callback: set before the driver call,
 * cleared after): the thread's state is a TLS pointer, nothing is
 * allocated or locked, no system call. Anything else (native call sites,
 * trace events, launch hooks: the fast path's capture and launch log) takes
 * the slow variant, chosen by one test; CUPTI does not. The fast path's
 * replays come through here too (trlat_launch_ex). A launch wrapper entered
 * inside another's driver call forwards unrecorded (ts->in_launch: two byte
 * stores around the driver call, tested with the slow variant's flags). */
#include "interpose/launch.h"
#include "interpose/native_site.h"
#include "interpose/clock.h"
#include "interpose/real.h"
#include "interpose/trace.h"
#include "interpose/lifecycle.h"
#include "interpose/wrappers.h"

#include <stdatomic.h>

static const struct trlat_launch_hooks *hooks[TRLAT_MAX_HOOKS];
static _Atomic int nhooks;

int trlat_launch_add_hooks(const struct trlat_launch_hooks *h)
{
    static atomic_int reserved;
    int i = atomic_fetch_add(&reserved, 1);
    if (i >= TRLAT_MAX_HOOKS)
        return -1;
    hooks[i] = h;
    atomic_store_explicit(&nhooks, i + 1, memory_order_release); /* publishes hooks[i] */
    if (h->always) /* every thread's launches: its state says so (no global read per launch) */
        trlat_tstate_slow_all();
    return 0;
}

static __attribute__((noinline)) void record_error(struct trlat_tstate *ts, void *func)
{
    struct trlat_kslot *k = trlat_kslot_get(ts, func);
    TRLAT_WR(k->errors, TRLAT_RD(k->errors) + 1);
}

/* The launch path's helpers are forced inline: a profile-guided build
 * (make pgo) that saw mostly fast-path hits left them out of line here. */
static inline __attribute__((always_inline)) void record(struct trlat_tstate *ts, void *func, uint64_t t0, uint64_t t1,
                                                         CUresult rc, uint64_t py_t0, uint64_t site)
{
    trlat_rec_add(ts, func, t0, t1, py_t0, site);
    if (UNLIKELY(rc != CUDA_SUCCESS))
        record_error(ts, func);
}

/* A launch of the thread's Python call (ts->py_t0 set) carries the call's
 * site; its first launch also the call's entry, for its py->driver time.
 * Any further launch of the same call is counted at the site only. */
static inline __attribute__((always_inline)) void python_part(struct trlat_tstate *ts, uint64_t *py_t0, uint64_t *site)
{
    *py_t0 = 0;
    *site = ts->region;
    if (ts->py_t0) {
        *site |= ts->py_site;
        if (ts->py_launches++ == 0)
            *py_t0 = ts->py_t0;
    }
}

/* A launch's driver entry time: none (0) for a launch counted untimed, as
 * every launch under TRLAT_TIMING=none and a fast-path hit left out of the
 * sample under TRLAT_TIMING=sampled: the first launch of a Python call
 * open as untimed (`first`: py_launches at that launch, 1 where
 * python_part has counted it already, 0 where not). A later launch of such
 * a call is not the hit and is timed. Its exit is timed when its entry
 * was. */
static inline __attribute__((always_inline)) uint64_t launch_stamp(const struct trlat_tstate *ts, uint32_t first)
{
    return ts->py_t0 == TRLAT_PY_UNTIMED && ts->py_launches == first ? 0 : trlat_stamp();
}

/* has_id: CUPTI's callback took the launch's entry time (its GPU record
 * joins by trlat_launch_corr(t0)). */
static void record_extra(struct trlat_tstate *ts, struct trlat_kslot *k, const struct trlat_launch *l, int has_id,
                         void *ret)
{
    if (!ts->py_t0 && ts->native_sites) { /* a Python call's site is in its record */
        uint64_t site = trlat_native_site(ret);
        if (site)
            trlat_kslot_add_site(k, site, TRLAT_SITE_NATIVE, 0, 0);
    }
    if (trlat_trace_on()) {
        struct trlat_event e = {.t0 = l->t0,
                                .t1 = l->t1,
                                .py_t0 = ts->py_t0,
                                .func = l->func,
                                .stream = l->stream,
                                .corr = has_id ? trlat_launch_corr(l->t0) : 0,
                                .tid = ts->tid};
        for (int i = 0; i < 3; i++) {
            e.grid[i] = l->grid[i];
            e.block[i] = l->block[i];
        }
        trlat_trace_put(&e);
    }
}

static CUresult call_real(const struct trlat_launch *l, void *real)
{
    switch (l->fn) {
    case TRLAT_FN_cuLaunchKernelEx:
    case TRLAT_FN_cuLaunchKernelEx_ptsz:
        return ((pfn_cuLaunchKernelEx)real)(l->config, (CUfunction)l->func, l->params, l->extra);
    case TRLAT_FN_cuLaunchCooperativeKernel:
    case TRLAT_FN_cuLaunchCooperativeKernel_ptsz:
        return ((pfn_cuLaunchCooperativeKernel)real)((CUfunction)l->func, l->grid[0], l->grid[1], l->grid[2],
                                                     l->block[0], l->block[1], l->block[2], l->shmem, l->stream,
                                                     l->params);
    default:
        return ((pfn_cuLaunchKernel)real)((CUfunction)l->func, l->grid[0], l->grid[1], l->grid[2], l->block[0],
                                          l->block[1], l->block[2], l->shmem, l->stream, l->params, l->extra);
    }
}

static __attribute__((noinline)) CUresult launch_slow(struct trlat_tstate *ts, struct trlat_launch *l, void *real,
                                                      void *ret)
{
    int n = atomic_load_explicit(&nhooks, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (hooks[i]->before)
            hooks[i]->before(ts, l);
    l->t0 = launch_stamp(ts, 0); /* python_part comes after */
    ts->cur_t0 = l->t0;
    ts->in_launch = 1;
    l->rc = call_real(l, real);
    ts->in_launch = 0;
    l->t1 = l->t0 ? trlat_ticks() : 0;
    int has_id = ts->cur_t0 == 0; /* CUPTI's callback took the entry time */
    ts->cur_t0 = 0;
    if (!(ts->slow & TRLAT_SLOW_PAUSED)) {
        uint64_t py_t0, site;
        python_part(ts, &py_t0, &site);
        record(ts, l->func, l->t0, l->t1, l->rc, py_t0, site);
        if (ts->slow & TRLAT_SLOW_THREAD) /* native sites, trace events */
            record_extra(ts, trlat_kslot_get(ts, l->func), l, has_id, ret);
    }
    for (int i = n - 1; i >= 0; i--)
        if (hooks[i]->after)
            hooks[i]->after(ts, l);
    return l->rc;
}

/* hooks_wanted and in_launch are read as one word: no load added for the
 * re-entry flag. */
static inline __attribute__((always_inline)) uint32_t needs_slow(const struct trlat_tstate *ts)
{
    return ts->slow | ts->divert;
}

/* One body per ABI. `ret` is the wrapper's return address: the native call
 * site when TRLAT_STACKS=1. The struct describing the launch is built only
 * on the slow variant (SLOW_CALL), never on the common path. A launch made
 * while the thread is inside a launch wrapper's driver call (a shim under
 * trlat calling an exported launch entry point) goes straight to the real
 * one, unrecorded: the outer wrapper counts it. */
#define FAST_PATH(CALL, FUNC, SLOW_CALL)          \
    struct trlat_tstate *ts = trlat_tstate_get(); \
    if (UNLIKELY(!ts))                            \
        return CALL;                              \
    if (UNLIKELY(needs_slow(ts)))                 \
        return ts->in_launch ? CALL : SLOW_CALL;  \
    uint64_t py_t0, site;                         \
    python_part(ts, &py_t0, &site);               \
    uint64_t t0 = launch_stamp(ts, 1);            \
    ts->cur_t0 = t0;                              \
    ts->in_launch = 1;                            \
    CUresult rc = CALL;                           \
    ts->in_launch = 0;                            \
    ts->cur_t0 = 0;                               \
    uint64_t t1 = t0 ? trlat_ticks() : 0;         \
    record(ts, FUNC, t0, t1, rc, py_t0, site);    \
    return rc

static __attribute__((noinline)) CUresult launch_kernel_slow(struct trlat_tstate *ts, enum trlat_fn fn, void *real,
                                                             void *ret, CUfunction f, unsigned gx, unsigned gy,
                                                             unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                                             unsigned shmem, CUstream s, void **params, void **extra)
{
    struct trlat_launch l = {.fn = fn,
                             .func = f,
                             .grid = {gx, gy, gz},
                             .block = {bx, by, bz},
                             .shmem = shmem,
                             .stream = s,
                             .params = params,
                             .extra = extra};
    return launch_slow(ts, &l, real, ret);
}

static __attribute__((noinline)) CUresult launch_kernel_ex_slow(struct trlat_tstate *ts, enum trlat_fn fn, void *real,
                                                                void *ret, const CUlaunchConfig *c, CUfunction f,
                                                                void **params, void **extra)
{
    struct trlat_launch l = {.fn = fn, .func = f, .config = c, .params = params, .extra = extra};
    if (c) {
        l.grid[0] = c->gridDimX, l.grid[1] = c->gridDimY, l.grid[2] = c->gridDimZ;
        l.block[0] = c->blockDimX, l.block[1] = c->blockDimY, l.block[2] = c->blockDimZ;
        l.shmem = c->sharedMemBytes, l.stream = c->hStream;
    }
    return launch_slow(ts, &l, real, ret);
}

static inline __attribute__((always_inline)) CUresult launch_kernel(enum trlat_fn fn, int slot, void *ret, CUfunction f,
                                                                    unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                                                    unsigned by, unsigned bz, unsigned shmem,
                                                                    CUstream s, void **params, void **extra)
{
    pfn_cuLaunchKernel real = (pfn_cuLaunchKernel)trlat_real_get(fn, slot);
    if (UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    FAST_PATH(real(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra), f,
              launch_kernel_slow(ts, fn, (void *)real, ret, f, gx, gy, gz, bx, by, bz, shmem, s, params, extra));
}

static inline __attribute__((always_inline)) CUresult launch_kernel_ex(enum trlat_fn fn, int slot, void *ret,
                                                                       const CUlaunchConfig *c, CUfunction f,
                                                                       void **params, void **extra)
{
    pfn_cuLaunchKernelEx real = (pfn_cuLaunchKernelEx)trlat_real_get(fn, slot);
    if (UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    FAST_PATH(real(c, f, params, extra), f, launch_kernel_ex_slow(ts, fn, (void *)real, ret, c, f, params, extra));
}

static inline __attribute__((always_inline)) CUresult launch_coop(enum trlat_fn fn, int slot, void *ret, CUfunction f,
                                                                  unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                                                  unsigned by, unsigned bz, unsigned shmem, CUstream s,
                                                                  void **params)
{
    pfn_cuLaunchCooperativeKernel real = (pfn_cuLaunchCooperativeKernel)trlat_real_get(fn, slot);
    if (UNLIKELY(!real))
        return CUDA_ERROR_NOT_INITIALIZED;
    FAST_PATH(real(f, gx, gy, gz, bx, by, bz, shmem, s, params), f,
              launch_kernel_slow(ts, fn, (void *)real, ret, f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL));
}

CUresult trlat_launch_ex(const CUlaunchConfig *config, CUfunction f, void **params, void **extra)
{
    return launch_kernel_ex(TRLAT_FN_cuLaunchKernelEx, 0, __builtin_return_address(0), config, f, params, extra);
}

CUresult trlat_launch_legacy(int ptsz, const CUlaunchConfig *c, CUfunction f, void **params)
{
    return launch_kernel(ptsz ? TRLAT_FN_cuLaunchKernel_ptsz : TRLAT_FN_cuLaunchKernel, 0, __builtin_return_address(0),
                         f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
                         c->sharedMemBytes, c->hStream, params, NULL);
}

#define LK_PARAMS                                                                                            \
    CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh, \
        CUstream s, void **p, void **e
#define LK_ARGS f, gx, gy, gz, bx, by, bz, sh, s, p, e
#define LKEX_PARAMS const CUlaunchConfig *c, CUfunction f, void **p, void **e
#define LKEX_ARGS c, f, p, e
#define COOP_PARAMS                                                                                          \
    CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned sh, \
        CUstream s, void **p
#define COOP_ARGS f, gx, gy, gz, bx, by, bz, sh, s, p

TRLAT_WRAPPERS(cuLaunchKernel, launch_kernel, LK_PARAMS, LK_ARGS)
TRLAT_WRAPPERS(cuLaunchKernel_ptsz, launch_kernel, LK_PARAMS, LK_ARGS)
TRLAT_WRAPPERS(cuLaunchKernelEx, launch_kernel_ex, LKEX_PARAMS, LKEX_ARGS)
TRLAT_WRAPPERS(cuLaunchKernelEx_ptsz, launch_kernel_ex, LKEX_PARAMS, LKEX_ARGS)
TRLAT_WRAPPERS(cuLaunchCooperativeKernel, launch_coop, COOP_PARAMS, COOP_ARGS)
TRLAT_WRAPPERS(cuLaunchCooperativeKernel_ptsz, launch_coop, COOP_PARAMS, COOP_ARGS)
