/* The GPU statistics: CUPTI's activity records, stripped of CUPTI's types, folded
 * as they arrive into per-kernel GPU statistics and starvation (GPU idle
 * time the host caused). Pure logic, fed by cupti_session.c on CUPTI's
 * thread and by synthetic records in tests; memory is bounded by the limits
 * whatever the number of launches. Not thread-safe (the caller locks).
 *
 * Three inputs, in any order (cupti_session.c feeds the first two from
 * CUPTI's launch callbacks, through the join rings of gpu_joinring.h):
 *   trlat  a launch trlat made: the correlation id CUPTI gave its driver
 *          call and its driver entry time (which is also the launch's `corr`
 *          in the report); a kernel with one was launched through trlat;
 *   other  any other launch call (the CUDA runtime's own, another
 *          library's): correlation id and the time the call entered the
 *          driver;
 *   kernel a kernel execution: correlation id, device, stream, GPU start
 *          and end.
 * All times are ns on trlat's clock.
 *
 * Ordering. Idle time is measured per device and per stream by walking
 * kernels in GPU start order and keeping the latest end seen. Records come
 * in buffers, not in that order, so each device holds up to `window`
 * kernels in a min-heap by start and folds the earliest once it is full:
 * the assumption is that no kernel record arrives after `window` kernels of
 * its device that started later than it. One that does is counted `late`:
 * its time and launch count are kept, its idle accounting is skipped.
 * A kernel's launch record may come before or after it: a kernel whose
 * launch record has not arrived waits (with its idle interval) in a
 * bounded pending map; the oldest is resolved without it when the map is
 * full or at drain (`unjoined`: never starved; the report decides by the
 * host's records whose launch it was). Launch records are remembered in a
 * bounded map, oldest forgotten first.
 *
 * Starvation: an idle interval that ends with kernel K (no kernel running
 * on K's device, resp. stream, between the previous end and K's start) and
 * began before K's launch call entered the driver is time the GPU waited
 * for the host; the whole interval is counted to K. The first kernel on a
 * device or stream ends no interval. */
#ifndef TRLAT_GPU_STATS_H
#define TRLAT_GPU_STATS_H

#include "interpose/hist.h"

#include <stddef.h>
#include <stdint.h>

#define TRLAT_GPU_MAX_DEVICES 64 /* larger ids share the last */

struct trlat_gpu_kernel {
    uint32_t corr;       /* CUPTI correlation id of the launching API call */
    uint32_t device;     /* CUPTI device id */
    uint32_t stream;     /* CUPTI stream id */
    uint64_t start, end; /* 0: CUPTI could not time it */
    const char *name;    /* copied when new; NULL becomes "(unnamed)" */
};

struct trlat_gpu_limits {
    uint32_t api_cap;     /* launch records remembered */
    uint32_t pending_cap; /* kernels waiting for their launch record */
    uint32_t window;      /* kernels held per device for start order */
    uint32_t max_kernels; /* distinct names; the rest fold into "(other)" */
    uint32_t max_streams; /* (device, stream) pairs with idle accounting */
    uint32_t events;      /* kernels kept for TRLAT_TRACE, with their starved intervals */
};
void trlat_gpu_limits_default(struct trlat_gpu_limits *l);

struct trlat_gpu_kstat {
    char *name;                                          /* as CUPTI gives it (mangled for C++) */
    struct trlat_stat gpu;                               /* execution time per launch */
    uint64_t driver;                                     /* joined with one of trlat's launches */
    uint64_t other;                                      /* launched by a call trlat did not make (the
                                                            CUDA runtime's own, another library's) */
    uint64_t unjoined;                                   /* launch record never found (lost, forgotten) */
    uint64_t untimed;                                    /* records CUPTI could not time */
    uint64_t starved_ns, starved_launches;               /* device idle ending with it */
    uint64_t stream_starved_ns, stream_starved_launches; /* its stream idle ending with it */
};

struct trlat_gpu_totals {
    uint64_t kernels; /* kernel records folded */
    uint64_t busy_ns; /* union of kernel intervals, per device, summed */
    uint64_t starved_ns, starved_launches;
    uint64_t stream_starved_ns;
    uint64_t dropped; /* records CUPTI reported dropped */
    uint64_t untimed;
    uint64_t late;         /* too late for start order: no idle accounting */
    uint64_t unjoined;     /* no launch record found */
    uint64_t joined_trlat; /* joined with one of trlat's launches */
    uint64_t other_names;  /* launches folded into "(other)" */
    uint64_t lost_join;    /* launch callbacks lost before reaching the fold (a full ring) */
    uint32_t devices;      /* devices seen */
    uint32_t pending;      /* kernels waiting for their launch record now */
};

enum { TRLAT_GPU_EV_KERNEL, TRLAT_GPU_EV_STARVED_DEVICE, TRLAT_GPU_EV_STARVED_STREAM };
struct trlat_gpu_event {
    uint8_t kind;
    uint8_t driver;  /* kernel: launched through trlat */
    uint32_t kernel; /* index for trlat_gpu_stats_at */
    uint32_t device, stream, corr;
    uint64_t start, end;
    uint64_t ext; /* kernel: trlat's id for its launch, trlat_launch_corr (0: none) */
};

struct trlat_gpu_stats;

/* NULL without memory. */
struct trlat_gpu_stats *trlat_gpu_stats_new(const struct trlat_gpu_limits *l);
void trlat_gpu_stats_free(struct trlat_gpu_stats *g);

/* trlat's launch with correlation id corr entered the driver at t0 (ns, never 0). */
void trlat_gpu_stats_trlat(struct trlat_gpu_stats *g, uint32_t corr, uint64_t t0);
/* Another launch call with correlation id corr entered the driver at start
 * (when several share the id, the earliest counts). */
void trlat_gpu_stats_other(struct trlat_gpu_stats *g, uint32_t corr, uint64_t start);
void trlat_gpu_stats_kernel(struct trlat_gpu_stats *g, const struct trlat_gpu_kernel *k);
void trlat_gpu_stats_dropped(struct trlat_gpu_stats *g, uint64_t n);
/* Launch records lost on their way to the fold (a full join ring). */
void trlat_gpu_stats_lost_join(struct trlat_gpu_stats *g, uint64_t n);
/* Folds everything held back (end of the run): the result is final. */
void trlat_gpu_stats_drain(struct trlat_gpu_stats *g);

size_t trlat_gpu_stats_count(const struct trlat_gpu_stats *g);
const struct trlat_gpu_kstat *trlat_gpu_stats_at(const struct trlat_gpu_stats *g, size_t i);
void trlat_gpu_stats_totals(const struct trlat_gpu_stats *g, struct trlat_gpu_totals *t);
/* The kept events, oldest first. */
void trlat_gpu_stats_events(const struct trlat_gpu_stats *g, void (*fn)(const struct trlat_gpu_event *e, void *arg),
                            void *arg);

#endif
