/* trlat's clock: the TSC (21 ns to read on the GPU machine, against 40 ns for
 * clock_gettime), calibrated once against CLOCK_MONOTONIC. Falls back to
 * CLOCK_MONOTONIC where the TSC is not invariant or not x86. Time zero is
 * trlat's start in the process; every timestamp trlat reports (host launches,
 * CUPTI's activity records through its timestamp callback) is on this clock. */
#ifndef TRLAT_CLOCK_H
#define TRLAT_CLOCK_H

#include <stdint.h>
#include <time.h>

struct trlat_clock {
    int use_tsc;
    int untimed;            /* TRLAT_TIMING=none: launches are counted, not timed */
    int sampled;            /* TRLAT_TIMING=sampled: fast-path hits timed 1 in TRLAT_SAMPLE_EVERY */
    uint64_t tsc0;          /* ticks at time zero */
    uint64_t mult;          /* ns = (ticks * mult) >> 32 */
    uint64_t epoch_mono_ns; /* CLOCK_MONOTONIC at time zero */
    uint64_t epoch_real_ns; /* CLOCK_REALTIME at time zero */
};

extern struct trlat_clock trlat_clk;

/* Calibrates (about 2 ms on first call; later calls do nothing). */
void trlat_clock_init(void);
/* Where a TSC is refused (tests, bad hardware). */
void trlat_clock_force_monotonic(void);

static inline uint64_t trlat_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Raw ticks: cheap, monotonic per CPU; convert with trlat_ticks_ns. */
static inline __attribute__((always_inline)) uint64_t trlat_ticks(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(trlat_clk.use_tsc, 1)) {
        uint32_t lo, hi;
        __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
        return ((uint64_t)hi << 32) | lo;
    }
#endif
    return trlat_mono_ns();
}

/* A launch-path timestamp: trlat_ticks(), or 0 under TRLAT_TIMING=none
 * (no clock read: a record with t0 == 0 is counted, not timed). */
static inline __attribute__((always_inline)) uint64_t trlat_stamp(void)
{
    return __builtin_expect(trlat_clk.untimed, 0) ? 0 : trlat_ticks();
}

/* A duration in ticks as nanoseconds. */
static inline uint64_t trlat_ticks_ns(uint64_t dt)
{
    if (!trlat_clk.use_tsc)
        return dt;
    return (uint64_t)(((unsigned __int128)dt * trlat_clk.mult) >> 32);
}

/* A timestamp in ticks as ns since time zero (0 for stamps before it). */
static inline uint64_t trlat_ticks_to_time(uint64_t t)
{
    if (!trlat_clk.use_tsc)
        return t > trlat_clk.epoch_mono_ns ? t - trlat_clk.epoch_mono_ns : 0;
    return t > trlat_clk.tsc0 ? trlat_ticks_ns(t - trlat_clk.tsc0) : 0;
}

/* Now, in ns since time zero. */
static inline uint64_t trlat_now_ns(void)
{
    return trlat_ticks_to_time(trlat_ticks());
}

#endif
