/* Per-thread rings carrying CUPTI's launch callbacks from the launching
 * threads to the GPU statistics. CUPTI calls trlat on the launching thread at each
 * launch call's entry; that thread appends (correlation id, raw tick, kind)
 * to its own ring: no lock, no allocation (the ring is made on the thread's
 * first launch), no system call, no time conversion (the drain converts).
 * Before folding a buffer of kernel records, CUPTI's thread drains every
 * ring into the fold under the fold's lock (one producer and one consumer
 * per ring).
 *
 * A full ring drops the newest entry and counts it (`lost`); the fold
 * reports the count as gpu.lost_join_records. A thread that exits leaves
 * its ring in the list (what it holds is still drained); the next new
 * thread adopts it, so thread churn does not grow memory. */
#ifndef TRLAT_GPU_JOINRING_H
#define TRLAT_GPU_JOINRING_H

#include "interpose/cupti/gpu_stats.h"

#include <stdatomic.h>
#include <stdint.h>

#define TRLAT_JOINRING_CAP (1u << 14) /* entries per thread (256 KiB) */

enum {
    TRLAT_JOIN_TRLAT, /* trlat's launch: t is its driver entry time (fold: trlat) */
    TRLAT_JOIN_OTHER, /* a launch trlat did not make: t is the callback's time (fold: other) */
};

struct trlat_join_rec {
    uint64_t t; /* ticks (clock.h) */
    uint32_t corr;
    uint32_t kind;
};

struct trlat_joinring {
    /* the owner thread's side */
    _Atomic uint64_t head; /* entries written */
    _Atomic uint64_t lost; /* entries dropped: the ring was full */
    uint64_t tail_seen;    /* the drainer's tail, as last read */
    char pad_[64 - 3 * sizeof(uint64_t)];
    /* the drainer's side */
    _Atomic uint64_t tail; /* entries drained */
    uint64_t lost_folded;  /* lost entries already given to the fold */
    struct trlat_joinring *next, *next_free;
    struct trlat_join_rec rec[TRLAT_JOINRING_CAP];
};

extern _Thread_local struct trlat_joinring *trlat_joinring_tls __attribute__((tls_model("initial-exec")));

/* The calling thread's ring, made or adopted on first use; NULL without memory. */
struct trlat_joinring *trlat_joinring_slow(void);
static inline struct trlat_joinring *trlat_joinring_self(void)
{
    struct trlat_joinring *r = trlat_joinring_tls;
    return __builtin_expect(r != NULL, 1) ? r : trlat_joinring_slow();
}

/* Appends one entry to the caller's own ring (the owner thread only). */
static inline void trlat_joinring_put(struct trlat_joinring *r, uint32_t corr, uint64_t t, uint32_t kind)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    if (__builtin_expect(h - r->tail_seen >= TRLAT_JOINRING_CAP, 0)) {
        r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (h - r->tail_seen >= TRLAT_JOINRING_CAP) {
            atomic_store_explicit(&r->lost, atomic_load_explicit(&r->lost, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
            return;
        }
    }
    struct trlat_join_rec *e = &r->rec[h & (TRLAT_JOINRING_CAP - 1)];
    e->t = t;
    e->corr = corr;
    e->kind = kind;
    atomic_store_explicit(&r->head, h + 1, memory_order_release);
}

/* Moves every ring's entries into the fold (and their losses into its
 * lost_join count). The caller holds the fold's lock: one drainer at a time. */
void trlat_joinring_drain(struct trlat_gpu_stats *g);
/* Rings made so far (tests). */
unsigned trlat_joinring_count(void);
/* In a forked child: rings stay as they are, their lock is reset. */
void trlat_joinring_after_fork_child(void);

#endif
