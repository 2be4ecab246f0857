#include "interpose/clock.h"

#include <stdatomic.h>

struct trlat_clock trlat_clk;
static atomic_int calibrated;

static uint64_t real_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
#include <cpuid.h>

static int tsc_invariant(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1u; /* CPUID.80000007H:EDX[8], invariant TSC */
}

static uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* One (tsc, monotonic) pair, taken where the clock_gettime call was fastest
 * among a few tries so the pair is tight. */
static void pair(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    *tsc = *ns = 0; /* always set in the loop; GCC's -fprofile-generate cannot tell */
    for (int i = 0; i < 5; i++) {
        uint64_t a = rdtsc(), n = trlat_mono_ns(), b = rdtsc();
        if (b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            *ns = n;
        }
    }
}

static int calibrate_tsc(void)
{
    if (!tsc_invariant())
        return 0;
    uint64_t t0, n0, t1, n1;
    pair(&t0, &n0);
    do
        pair(&t1, &n1);
    while (n1 - n0 < 2000000u); /* 2 ms: error ~1e-5 with 40 ns reads */
    if (t1 <= t0)
        return 0;
    trlat_clk.mult = (uint64_t)((((unsigned __int128)(n1 - n0)) << 32) / (t1 - t0));
    trlat_clk.tsc0 = t1;
    trlat_clk.epoch_mono_ns = n1;
    return 1;
}
#else
static int calibrate_tsc(void)
{
    return 0;
}
#endif

void trlat_clock_force_monotonic(void)
{
    trlat_clk.use_tsc = 0;
    trlat_clk.epoch_mono_ns = trlat_mono_ns();
    trlat_clk.epoch_real_ns = real_ns();
    atomic_store(&calibrated, 1);
}

void trlat_clock_init(void)
{
    if (atomic_load(&calibrated))
        return;
    if (calibrate_tsc()) {
        trlat_clk.epoch_real_ns = real_ns();
        trlat_clk.use_tsc = 1;
        atomic_store(&calibrated, 1);
    } else {
        trlat_clock_force_monotonic();
    }
}
