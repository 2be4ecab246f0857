#include "interpose/trace.h"
#include "interpose/config.h"
#include "interpose/log.h"

#include <stdlib.h>

static struct trlat_event *ring;
static uint64_t cap;
static _Atomic uint64_t next; /* claims made */
static uint64_t base;         /* the first claim of this process (a forked child's) */
static _Atomic uint64_t lost; /* events given up: their slot's older writer was still at it */

void trlat_trace_init(void)
{
    long n = trlat_config(TRLAT_OPT_TRACE);
    if (n <= 0 || ring)
        return;
    ring = calloc((size_t)n, sizeof *ring); /* large: mapped, untouched until written */
    if (!ring) {
        trlat_log("out of memory for TRLAT_TRACE=%ld (%zu bytes); no events are kept", n, (size_t)n * sizeof *ring);
        return;
    }
    cap = (uint64_t)n;
}

void trlat_trace_after_fork_child(void)
{
    base = atomic_load_explicit(&next, memory_order_relaxed);
}

int trlat_trace_on(void)
{
    return cap != 0;
}

#define WR(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELAXED)
#define RD(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)

void trlat_trace_put(const struct trlat_event *src)
{
    uint64_t n = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed);
    struct trlat_event *e = &ring[n % cap];
    uint64_t cur = atomic_load_explicit(&e->seq, memory_order_relaxed);
    do {
        /* a writer still at it (of this process: a forked child takes over
         * a slot its parent's thread was writing), or a newer event there */
        if (cur > 2 * n)
            return;
        if ((cur & 1) && (cur >> 1) >= base) {
            /* preempted for a whole turn of the ring: waiting would block
             * this launch on another thread, taking over would tear its
             * event; this one is given up, and counted */
            atomic_fetch_add_explicit(&lost, 1, memory_order_relaxed);
            return;
        }
    } while (
        !atomic_compare_exchange_weak_explicit(&e->seq, &cur, 2 * n + 1, memory_order_relaxed, memory_order_relaxed));
    atomic_thread_fence(memory_order_release); /* the odd seq before any field */
    WR(e->t0, src->t0);
    WR(e->t1, src->t1);
    WR(e->py_t0, src->py_t0);
    WR(e->func, src->func);
    WR(e->stream, src->stream);
    WR(e->corr, src->corr);
    for (int i = 0; i < 3; i++) {
        WR(e->grid[i], src->grid[i]);
        WR(e->block[i], src->block[i]);
    }
    WR(e->tid, src->tid);
    atomic_store_explicit(&e->seq, 2 * n + 2, memory_order_release);
}

/* The claims the newest N events belong to: [lo, hi). */
static uint64_t window(uint64_t *lo)
{
    uint64_t hi = atomic_load_explicit(&next, memory_order_acquire);
    *lo = hi - base > cap ? hi - cap : base;
    return hi;
}

/* A whole copy of slot e, if it holds an event claimed in [lo, hi). */
static int read_slot(struct trlat_event *e, uint64_t lo, uint64_t hi, struct trlat_event *out)
{
    uint64_t s = atomic_load_explicit(&e->seq, memory_order_acquire);
    if (!s || (s & 1) || s / 2 - 1 < lo || s / 2 - 1 >= hi)
        return 0;
    out->t0 = RD(e->t0);
    out->t1 = RD(e->t1);
    out->py_t0 = RD(e->py_t0);
    out->func = RD(e->func);
    out->stream = RD(e->stream);
    out->corr = RD(e->corr);
    for (int i = 0; i < 3; i++) {
        out->grid[i] = RD(e->grid[i]);
        out->block[i] = RD(e->block[i]);
    }
    out->tid = RD(e->tid);
    atomic_thread_fence(memory_order_acquire); /* the fields before seq's second read */
    if (atomic_load_explicit(&e->seq, memory_order_relaxed) != s)
        return 0; /* rewritten while read */
    atomic_store_explicit(&out->seq, s, memory_order_relaxed);
    return 1;
}

void trlat_trace_foreach(void (*fn)(const struct trlat_event *e, void *arg), void *arg)
{
    if (!cap)
        return;
    uint64_t lo, hi = window(&lo);
    for (uint64_t c = lo; c < hi; c++) {
        struct trlat_event e;
        if (read_slot(&ring[c % cap], lo, hi, &e))
            fn(&e, arg);
    }
}

uint64_t trlat_trace_lost(void)
{
    return atomic_load_explicit(&lost, memory_order_relaxed);
}

uint64_t trlat_trace_count(void)
{
    uint64_t lo, hi = window(&lo);
    return cap ? hi - lo : 0;
}

int trlat_trace_get(uint64_t seq, struct trlat_event *out)
{
    if (!cap || !seq || (seq & 1))
        return 0;
    uint64_t claim = seq / 2 - 1;
    return read_slot(&ring[claim % cap], claim, claim + 1, out);
}
