/* Per-thread launch records: each thread that launches owns one
 * trlat_tstate, found through a thread-local pointer, with one trlat_kslot
 * per CUfunction it launched. The launch path writes only its own thread's
 * state (no locks, no atomic read-modify-write, no allocation once a kernel
 * has been seen on the thread); the report folds all threads' slots at exit.
 * A slot's counters are written with relaxed atomic stores so that folding
 * while other threads still launch is well defined (a fold may see one
 * launch's fields partly updated; never a torn number). */
#ifndef TRLAT_TSTATE_H
#define TRLAT_TSTATE_H

#include "interpose/clock.h"
#include "interpose/cuda_api.h"
#include "interpose/hist.h"

#include <stdatomic.h>
#include <stdint.h>

#define TRLAT_MAX_SITES 8
#define TRLAT_PY_CALL_KINDS 6
#define TRLAT_CHUNK_SLOTS 16
#define TRLAT_MAX_SLOTS_PER_THREAD 4096
enum { TRLAT_SLOW_THREAD = 1, TRLAT_SLOW_HOOKS = 2, TRLAT_SLOW_PAUSED = 4 }; /* trlat_tstate.slow */
/* trlat_tstate.py_t0 of a Python call whose launches are counted, not timed
 * (TRLAT_TIMING=none; a fast-path hit left out of the sample) */
#define TRLAT_PY_UNTIMED 1u
/* TRLAT_TIMING=sampled: a fast-path hit is timed with chance 1 in this */
#define TRLAT_SAMPLE_EVERY 16u

/* The parts of a Triton call's py->driver under TRLAT_PY_PHASES: before
 * the launcher and the launcher's own (every split call), then binding,
 * cache lookup with the grid, and launch metadata (the calls that passed
 * all of Triton's marks). */
enum { TRLAT_PH_BEFORE, TRLAT_PH_LAUNCHER, TRLAT_PH_BIND, TRLAT_PH_CACHE, TRLAT_PH_META, TRLAT_PH_PARTS };

/* A call site: id is an interned Python site or a native return address. */
struct trlat_site {
    uint64_t id; /* 0: empty */
    uint64_t launches;
    /* Python sites: the host time on the launching thread from the previous
     * launch's driver exit to this site's launch (gap), and of it the Triton
     * call's own py->driver plus return, in ns (weighted as the kernel's);
     * of that, a library's KernelInterface.run before Triton's (lib_ns) */
    uint64_t gap_ns, triton_ns, lib_ns;
};

struct trlat_kslot {
    void *func;        /* CUfunction (or CUkernel) handle as launched */
    const char *name;  /* from the name registry when the slot was made; may be NULL */
    uint64_t errors;   /* launches the driver refused */
    uint64_t untimed;  /* launches counted without times (TRLAT_TIMING=none, a hit not sampled) */
    uint64_t weighted; /* what sampled hits' weights add to driver's count beyond one each */
    struct trlat_stat driver, gap, py;
    struct trlat_stat ret; /* driver exit to the Python call's return (its first launch) */
    struct trlat_site sites[TRLAT_MAX_SITES];
    uint64_t other_sites, other_gap_ns, other_triton_ns, other_lib_ns; /* launches past the 8 sites, and their times */
    int site_kind; /* TRLAT_SITE_PYTHON or TRLAT_SITE_NATIVE of the last site added */
    /* TRLAT_PY_PHASES: the calls whose py->driver was split at Triton's
     * launcher (and, of them, at its key and launch metadata too), and the
     * sums of each part in ns (interpose/python/pyphase.h) */
    uint64_t ph_calls, ph_split, ph_ns[TRLAT_PH_PARTS];
    /* calls whose outermost entry was a library's KernelInterface.run, and
     * the sum in ns of the time it took before entering Triton's
     * (interpose/python/pyhook.h trlat_pylib_mark) */
    uint64_t lib_calls, lib_ns;
};

enum { TRLAT_SITE_NONE = 0, TRLAT_SITE_PYTHON = 1, TRLAT_SITE_NATIVE = 2 };

struct trlat_chunk {
    struct trlat_chunk *_Atomic next;
    _Atomic uint32_t used;
    struct trlat_kslot slots[TRLAT_CHUNK_SLOTS];
};

/* One launch as the launch path writes it: the fold turns a batch of these
 * into the slot statistics (driver = t1 - t0, gap = t0 - previous t1), so
 * that a launch writes one sequential record instead of the scattered
 * histogram and site lines, which the driver call evicts from the caches.
 * A launch of a Python call (ts->py_t0 set) also carries its site, and its
 * first launch the call's entry (py = t0 - py_t0) and, written when the call
 * returns, its return time (ret - t1: py_return_ns); 0 where none. */
struct trlat_rec {
    void *func;
    uint64_t t0, t1;           /* ticks */
    uint64_t py_t0, site, ret; /* site: see trlat_rec_site */
};
#define TRLAT_REC_BATCH 256

/* A record's site packs three things. Its low 32 bits are the Python
 * call site's pair of ids (pysites.h: each at most 4098). Bits 32-47 are
 * the thread's region when it launched (region.h; 0: none). Its top 16
 * bits are how many launches the record stands for in the statistics: 0,
 * which counts as 1; for a fast-path hit timed under TRLAT_TIMING=sampled,
 * the inverse of its chance of being timed, so that a kernel's counts and
 * sums are unbiased estimates of the whole (its launch count stays exact).
 * Packed so that the launch path copies one word, the call's site and the
 * region OR-ed: trlat_sample_hit sets the weight in the thread's py_site. */
#define TRLAT_REC_REGION_SHIFT 32
#define TRLAT_SITE_WEIGHT_SHIFT 48
static inline uint64_t trlat_rec_site(uint64_t site)
{
    return site & ((1ull << TRLAT_REC_REGION_SHIFT) - 1);
}
static inline unsigned trlat_rec_region(uint64_t site)
{
    return (unsigned)(site >> TRLAT_REC_REGION_SHIFT) & 0xffffu;
}
static inline uint64_t trlat_rec_weight(uint64_t site)
{
    uint64_t w = site >> TRLAT_SITE_WEIGHT_SHIFT;
    return w ? w : 1;
}

/* The thread's previous launch as the fold left it: its driver exit (0:
 * none, or not timed) and its site's weight bits (0: 1). */
struct trlat_rec_last {
    uint64_t t1;
    uint64_t weight;
};

/* Everything a hook may want to know about one launch. */
struct trlat_launch {
    enum trlat_fn fn;
    void *func;
    const CUlaunchConfig *config; /* cuLaunchKernelEx only */
    unsigned grid[3], block[3], shmem;
    CUstream stream;
    void **params, **extra;
    uint64_t t0, t1;
    CUresult rc;
};

/* The id a launch trlat made goes by in the report (`corr`, and the GPU
 * fold's join): its driver entry time in ns since trlat's start, never 0. */
static inline uint64_t trlat_launch_corr(uint64_t t0_ticks)
{
    uint64_t id = trlat_ticks_to_time(t0_ticks);
    return id ? id : 1;
}

struct trlat_tstate {
    /* hot: touched on every launch, and together in the state's first
     * cache line (states are 64-byte aligned): a launch follows a driver
     * call that has evicted much of the cache. A launch appends one record
     * to `recs` (sequential writes: one cache line per few launches); every
     * TRLAT_REC_BATCH launches the thread folds them into its slots, so the
     * slots' statistics stay out of the launch path's cache footprint. */
    uint32_t nrec;
    /* Non-zero when every launch on this thread takes the slow variant:
     * TRLAT_SLOW_THREAD (native sites, trace events), TRLAT_SLOW_HOOKS (an
     * installed launch hook set wants every launch of every thread). */
    uint32_t slow;
    union {
        struct {
            /* Non-zero while the thread wants its launches through the
             * launch hooks (interpose/launch.h: trlat_launch_hooks_want). */
            uint16_t hooks_wanted;
            /* 1 while the thread is inside a launch wrapper's driver call: a
             * launch wrapper entered then (a driver shim calling another
             * exported launch entry point) forwards without recording, so
             * that the program's launch is counted once, by the outermost. */
            uint8_t in_launch;
            uint8_t unused;
        };
        uint32_t divert; /* either of them: the launch leaves the common path */
    };
    /* Set by the Python hook (fastpath/) around a Triton call: the call's
     * entry time in ticks (TRLAT_PY_UNTIMED: open, its launches not timed)
     * and its site (with a weight: trlat_rec_site); py_launches counts the
     * launches the call produced so far. Consumed by the launch record. */
    uint32_t py_launches;
    uint64_t py_t0;
    uint64_t py_site;
    uint64_t region; /* the innermost open region's id << TRLAT_REC_REGION_SHIFT (region.h) */
    /* The launch this thread is making: its driver entry time (ticks),
     * stored just before the driver is called and cleared when it returns
     * (0: none). CUPTI's launch callback runs on this thread inside that
     * driver call and takes it (cupti_callback.c): the one hand-off between
     * the launch path and CUPTI. */
    uint64_t cur_t0;
    /* The call's first launch, for the hook to time the return to Python
     * (py_return_ns): its record while still in `recs` (the return time is
     * written there), else, once folded, its kernel's slot and driver exit. */
    struct trlat_rec *py_rec;
    struct trlat_kslot *py_k; /* and py_t1, below: out of the launch path's line */

    _Atomic uint64_t rec_gen; /* odd while a fold rewrites recs (seqlock for the report) */
    void *last_func;
    struct trlat_kslot *last_slot;
    uint64_t last_exit; /* ticks at the last folded launch's return; 0: none yet */
    uint64_t py_t1;     /* the open call's first launch's driver exit, once folded (py_k) */
    /* TRLAT_PY_PHASES: the ticks at which the call entered Triton's cache
     * key, its launch metadata and its launcher, for the call whose py_t0
     * is ph_call (0: not passed) */
    uint64_t ph_call, ph[3];
    /* the open call's Triton entry inside a library's run (pyhook.h) */
    uint64_t py_lib;
    uint64_t last_weight; /* that launch's weight bits (trlat_rec_site; 0: 1) */
    /* What this thread's outermost Python calls did (the hook's counts,
     * summed over threads by its report section; interpose/python/pyhook.h). */
    uint64_t py_calls[TRLAT_PY_CALL_KINDS];
    int native_sites;                 /* TRLAT_STACKS=1 */
    struct trlat_region_state *rs;    /* from the thread's first region on (region.h) */
    struct trlat_pysite_near *pynear; /* the Python call sites' frames seen last (pyhook_site.c) */

    /* per-thread index func -> slot, private to the owner thread */
    struct trlat_ientry {
        void *key;
        struct trlat_kslot *slot;
    } * index;
    uint32_t index_cap, nslots;
    struct trlat_kslot overflow; /* launches past TRLAT_MAX_SLOTS_PER_THREAD kernels */

    /* slots, published for the fold: append-only list */
    struct trlat_chunk *_Atomic chunks;
    struct trlat_chunk *tail;

    uint32_t tid;
    struct trlat_rec recs[TRLAT_REC_BATCH];
    struct trlat_tstate *next; /* global list of all states */
    struct trlat_tstate *next_free;
};

extern _Thread_local struct trlat_tstate *trlat_tls __attribute__((tls_model("initial-exec")));
/* The thread's sampling draws (TRLAT_TIMING=sampled): xorshift64* state, 0
 * until the first draw seeds it. */
extern _Thread_local uint64_t trlat_sample_rng __attribute__((tls_model("initial-exec")));

_Static_assert((TRLAT_SAMPLE_EVERY & (TRLAT_SAMPLE_EVERY - 1)) == 0 && TRLAT_SAMPLE_EVERY <= UINT16_MAX,
               "a power of two: one draw's top bits");
/* 1 with chance 1 in TRLAT_SAMPLE_EVERY, each draw independent of the
 * others (so a kernel's share of the sample does not depend on what the
 * program launches around it). */
static inline int trlat_sample_draw(void)
{
    uint64_t x = trlat_sample_rng;
    if (__builtin_expect(!x, 0))
        x = (trlat_ticks() ^ (uint64_t)(uintptr_t)&trlat_sample_rng) | 1;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    trlat_sample_rng = x;
    return (x * 0x2545F4914F6CDD1DULL) >> (64 - __builtin_ctz(TRLAT_SAMPLE_EVERY)) == 0;
}

/* A fast-path hit about to launch under TRLAT_TIMING=sampled: the thread's
 * timed Python call that has not launched yet (the hit's) is timed with
 * chance 1 in TRLAT_SAMPLE_EVERY, its launch then standing for that many;
 * otherwise it goes on untimed (no clock read until it returns). Every
 * other launch is timed: the Python calls Triton runs, where trlat's cost
 * is small beside Triton's own, and every launch not from Python. */
static inline void trlat_sample_hit(struct trlat_tstate *ts)
{
    if (!trlat_clk.sampled || ts->py_t0 <= TRLAT_PY_UNTIMED || ts->py_launches)
        return;
    if (trlat_sample_draw())
        ts->py_site |= (uint64_t)TRLAT_SAMPLE_EVERY << TRLAT_SITE_WEIGHT_SHIFT;
    else
        ts->py_t0 = TRLAT_PY_UNTIMED;
}

/* The calling thread's state, or NULL when trlat is disabled. */
struct trlat_tstate *trlat_tstate_slow(void);
static inline __attribute__((always_inline)) struct trlat_tstate *trlat_tstate_get(void)
{
    struct trlat_tstate *ts = trlat_tls;
    return __builtin_expect(ts != NULL, 1) ? ts : trlat_tstate_slow();
}

/* The slot for func on this thread, created on first use. */
struct trlat_kslot *trlat_kslot_slow(struct trlat_tstate *ts, void *func);
static inline struct trlat_kslot *trlat_kslot_get(struct trlat_tstate *ts, void *func)
{
    if (__builtin_expect(ts->last_func == func, 1))
        return ts->last_slot;
    return trlat_kslot_slow(ts, func);
}

/* Folds the thread's pending records into its slots (the owner thread only). */
void trlat_tstate_drain(struct trlat_tstate *ts);

/* Appends a launch (py_t0, site: struct trlat_rec; a py_t0 makes it the
 * Python call's first launch, ts->py_rec); folds when the batch is full. */
static inline __attribute__((always_inline)) void trlat_rec_add(struct trlat_tstate *ts, void *func, uint64_t t0,
                                                                uint64_t t1, uint64_t py_t0, uint64_t site)
{
    struct trlat_rec *r = &ts->recs[ts->nrec];
    r->func = func;
    r->t0 = t0;
    r->t1 = t1;
    r->py_t0 = py_t0;
    r->site = site;
    r->ret = 0;
    if (py_t0)
        ts->py_rec = r;
    if (__builtin_expect(++ts->nrec == TRLAT_REC_BATCH, 0))
        trlat_tstate_drain(ts);
}

/* A copy of another thread's pending records (seqlock read; may come back
 * empty if the owner was folding): returns how many were copied into out
 * (TRLAT_REC_BATCH entries) and that thread's last folded launch. */
uint32_t trlat_tstate_pending(const struct trlat_tstate *ts, struct trlat_rec *out, struct trlat_rec_last *last);

/* Single-writer counter updates readable by a concurrent fold. */
#define TRLAT_RD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define TRLAT_WR(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* Adds v as w values (a sample standing for w launches: count, sum and
 * histogram weighted; min and max are of the values seen). */
static inline void trlat_stat_add_w_relaxed(struct trlat_stat *s, uint64_t v, uint64_t w)
{
    uint64_t n = TRLAT_RD(s->count);
    if (n == 0 || v < TRLAT_RD(s->min))
        TRLAT_WR(s->min, v);
    if (v > TRLAT_RD(s->max))
        TRLAT_WR(s->max, v);
    unsigned i = trlat_hist_index(v);
    TRLAT_WR(s->hist[i], TRLAT_RD(s->hist[i]) + w);
    TRLAT_WR(s->sum, TRLAT_RD(s->sum) + v * w);
    TRLAT_WR(s->count, n + w);
}

/* The times of a timed record, each weighted by w, its gap by gw (both 1
 * for the common record: the compiler folds them away there). */
static inline __attribute__((always_inline)) void
trlat_rec_add_times(const struct trlat_rec *r, const struct trlat_rec_last *last, struct trlat_stat *driver,
                    struct trlat_stat *gap, struct trlat_stat *py, struct trlat_stat *ret, uint64_t w, uint64_t gw)
{
    trlat_stat_add_w_relaxed(driver, trlat_ticks_ns(r->t1 - r->t0), w);
    if (last->t1)
        trlat_stat_add_w_relaxed(gap, trlat_ticks_ns(r->t0 - last->t1), gw);
    if (r->py_t0 > TRLAT_PY_UNTIMED) /* a call's first launch, its entry timed */
        trlat_stat_add_w_relaxed(py, trlat_ticks_ns(r->t0 - r->py_t0), w);
    uint64_t rt = TRLAT_RD(r->ret); /* 0: the call had not returned */
    if (rt)
        trlat_stat_add_w_relaxed(ret, trlat_ticks_ns(rt - r->t1), w);
}

/* What one record's times add to its kernel's statistics, each value
 * weighted by the record's weight (trlat_rec_site); a gap by the product of
 * its two launches' weights (both had to be timed for it: with independent
 * samples that is the inverse of its chance). *last is updated, and
 * *weighted by the weight beyond 1 (so that the launches timed are the
 * driver's count less it). 0 when the record has no times (counted only;
 * the next launch has no gap from it). The thread's fold and the report's
 * reading of records still pending both go through here. */
int trlat_rec_times_weighted(const struct trlat_rec *r, struct trlat_rec_last *last, struct trlat_stat *driver,
                             struct trlat_stat *gap, struct trlat_stat *py, struct trlat_stat *ret, uint64_t *weighted);
static inline __attribute__((always_inline)) int trlat_rec_times(const struct trlat_rec *r, struct trlat_rec_last *last,
                                                                 struct trlat_stat *driver, struct trlat_stat *gap,
                                                                 struct trlat_stat *py, struct trlat_stat *ret,
                                                                 uint64_t *weighted)
{
    if (!r->t0) {
        last->t1 = last->weight = 0;
        return 0;
    }
    if (__builtin_expect((r->site >> TRLAT_SITE_WEIGHT_SHIFT) | last->weight, 0))
        return trlat_rec_times_weighted(r, last, driver, gap, py, ret, weighted); /* a sampled hit, or next */
    trlat_rec_add_times(r, last, driver, gap, py, ret, 1, 1);
    last->t1 = r->t1;
    return 1;
}

/* A record's times as sums add them (its site's, its region's): in ns,
 * each weighted as trlat_rec_add_times weighs it; all 0 for an untimed
 * record, py and ret 0 where it has none (an open call's return is not in
 * it yet). Taken before trlat_rec_times moves *last on. */
struct trlat_rec_ns {
    uint64_t driver, gap, py, ret;
};
static inline struct trlat_rec_ns trlat_rec_ns(const struct trlat_rec *r, const struct trlat_rec_last *last)
{
    struct trlat_rec_ns ns = {0, 0, 0, 0};
    if (!r->t0)
        return ns;
    uint64_t w = trlat_rec_weight(r->site), gw = w * (last->weight ? last->weight : 1);
    ns.driver = trlat_ticks_ns(r->t1 - r->t0) * w;
    if (last->t1)
        ns.gap = trlat_ticks_ns(r->t0 - last->t1) * gw;
    if (r->py_t0 > TRLAT_PY_UNTIMED)
        ns.py = trlat_ticks_ns(r->t0 - r->py_t0) * w;
    uint64_t rt = TRLAT_RD(r->ret);
    if (rt)
        ns.ret = trlat_ticks_ns(rt - r->t1) * w;
    return ns;
}

/* A consistent-enough copy of a stat another thread may be writing. */
void trlat_stat_snapshot(struct trlat_stat *dst, const struct trlat_stat *src);

/* Counts one launch for the slot's site, with its host times (bounded: 8
 * sites, then "other"). */
void trlat_kslot_add_site(struct trlat_kslot *k, uint64_t site, int kind, uint64_t gap_ns, uint64_t triton_ns);
/* Adds a library's own part of a call (pyhook.h trlat_pylib_mark) to the
 * slot's Python site: the site made, with no launch yet, when the call's
 * launch is not folded yet. */
void trlat_kslot_add_lib(struct trlat_kslot *k, uint64_t site, uint64_t lib_ns);

/* Iterates over every slot of every thread (the fold; not on the launch path). */
typedef void (*trlat_slot_fn)(const struct trlat_tstate *ts, const struct trlat_kslot *k, void *arg);
void trlat_tstate_foreach(trlat_slot_fn fn, void *arg);
/* Iterates over every thread. */
void trlat_tstate_foreach_thread(void (*fn)(const struct trlat_tstate *ts, void *arg), void *arg);
/* Makes every thread's launches, present and future, take the slow variant
 * (TRLAT_SLOW_HOOKS: a launch hook set that wants them all). */
void trlat_tstate_slow_all(void);
/* Profiling paused (1) or resumed (0) on every thread, present and future
 * (TRLAT_SLOW_PAUSED: their launches go to the driver unrecorded; the
 * launch hooks still run). Returns 1 if it was paused before. */
int trlat_tstate_set_paused(int paused);
/* Number of thread states ever made (threads that launched). */
unsigned trlat_tstate_count(void);

/* Setup, fork child reset. */
void trlat_tstate_init(void);
void trlat_tstate_after_fork_child(void);

#endif
