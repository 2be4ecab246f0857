/* TRLAT_TRACE=N: the process's last N launches as events, in one ring of N
 * for the whole process (memory: N * sizeof(struct trlat_event), 88 bytes,
 * whatever the number of threads; pages are touched as the ring fills). A
 * traced launch (the slow variant) claims the next slot with one atomic
 * add and writes it under the slot's sequence word, so that the report,
 * read while threads may still launch, takes only whole events. */
#ifndef TRLAT_TRACE_H
#define TRLAT_TRACE_H

#include <stdatomic.h>
#include <stdint.h>

/* One launch as kept for TRLAT_TRACE. */
struct trlat_event {
    /* 2 * (claim + 1) once the slot holds claim's event (the claim-th traced
     * launch of the process), 2 * claim + 1 while it is written, 0 never
     * written */
    _Atomic uint64_t seq;
    uint64_t t0, t1, py_t0; /* ticks; py_t0 0 when not from Python */
    void *func;
    void *stream;
    uint64_t corr; /* trlat_launch_corr(t0) when CUPTI's callback took the launch, 0 if not */
    uint32_t grid[3], block[3];
    uint32_t tid;
};

/* The ring, allocated at start when TRLAT_TRACE asks for one (else never). */
void trlat_trace_init(void);
/* A forked child keeps none of its parent's events. */
void trlat_trace_after_fork_child(void);
/* Whether launches are traced. */
int trlat_trace_on(void);

/* Keeps e's fields (not its seq) as the newest event. An event whose slot
 * another thread is still writing, or has already written with a newer
 * one (the ring lapped meanwhile), is dropped. */
void trlat_trace_put(const struct trlat_event *e);

/* Calls fn with a whole copy of each event among the newest N (any order);
 * its seq identifies it for trlat_trace_get. */
void trlat_trace_foreach(void (*fn)(const struct trlat_event *e, void *arg), void *arg);
/* Events given up since the start: a launch whose slot an older launch of
 * another thread was still writing (preempted for a whole turn of the
 * ring) keeps no event (the report's totals.trace_lost). */
uint64_t trlat_trace_lost(void);
/* How many events trlat_trace_foreach may find at most. */
uint64_t trlat_trace_count(void);
/* A whole copy of the event seq identifies, if its slot still holds it. */
int trlat_trace_get(uint64_t seq, struct trlat_event *out);

#endif
