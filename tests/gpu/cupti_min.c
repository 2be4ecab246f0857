/* The smallest CUPTI client, as an LD_PRELOAD library, for measuring what
 * CUPTI itself costs a launch loop: subscribe, register buffer callbacks,
 * enable CONCURRENT_KERNEL, count the kernel records, and flush at exit.
 * Nothing else by default (no API records, no correlation, CUPTI's own
 * clock). Two switches add the rest of CUPTI's machinery trlat uses, doing
 * nothing of trlat's own work, so that a benchmark can tell CUPTI's cost
 * from trlat's:
 *   CUPTI_MIN_CALLBACK=1  an empty subscriber callback enabled on the same
 *                         driver launch functions as trlat's
 *                         (interpose/cupti/launches.h)
 *   CUPTI_MIN_TS=1        a timestamp callback like trlat's (TSC read,
 *                         scaled to ns since start: interpose/clock.h)
 *
 *   LD_PRELOAD=libcupti_min.so bench_launch N
 * libcupti: $TRLAT_CUPTI_LIB, else libcupti.so.13 / .12 from the loader's
 * path, else /usr/local/cuda. Prints "cupti_min: N kernel records (...)" on
 * stderr at exit (or why it could not start). */
#include <cupti.h>

#include "interpose/cupti/launches.h" /* the same list as trlat's */

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static CUptiResult (*p_subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
static CUptiResult (*p_register)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
static CUptiResult (*p_enable)(CUpti_ActivityKind);
static CUptiResult (*p_flush)(uint32_t);
static CUptiResult (*p_next)(uint8_t *, size_t, CUpti_Activity **);
static CUptiResult (*p_enable_cb)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
static CUptiResult (*p_register_ts)(CUpti_TimestampCallbackFunc);
static atomic_ulong records;
static int started, ncallbacks, ts_on;

#define BUF (1u << 20)

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max)
{
    *buffer = malloc(BUF);
    *size = *buffer ? BUF : 0;
    *max = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
    CUpti_Activity *r = NULL;
    unsigned long n = 0;
    while (p_next(buf, valid, &r) == CUPTI_SUCCESS)
        n += r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    atomic_fetch_add(&records, n);
    free(buf);
}

static void CUPTIAPI on_callback(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
}

/* ---- a clock like trlat's ---- */

static uint64_t tsc0, mult; /* ns = ((tsc - tsc0) * mult) >> 32 */

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline uint64_t tsc(void)
{
#if defined(__x86_64__)
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
#else
    return mono_ns();
#endif
}

static void calibrate(void)
{
    uint64_t t0 = tsc(), n0 = mono_ns(), t1, n1;
    do {
        t1 = tsc();
        n1 = mono_ns();
    } while (n1 - n0 < 2000000u);
    mult = t1 > t0 ? (uint64_t)((((unsigned __int128)(n1 - n0)) << 32) / (t1 - t0)) : (1ull << 32);
    tsc0 = t1;
}

static uint64_t CUPTIAPI timestamp_ns(void)
{
    uint64_t t = tsc();
    return t > tsc0 ? (uint64_t)(((unsigned __int128)(t - tsc0) * mult) >> 32) : 0;
}

static void at_exit(void)
{
    p_flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    fprintf(stderr, "cupti_min: %lu kernel records (launch callbacks on %d functions, timestamp callback %s)\n",
            atomic_load(&records), ncallbacks, ts_on ? "on" : "off");
}

static int flag(const char *name)
{
    const char *v = getenv(name);
    return v && strcmp(v, "1") == 0;
}

__attribute__((constructor)) static void start(void)
{
    const char *env = getenv("TRLAT_CUPTI_LIB");
    const char *const cands[] = {env, "libcupti.so.13", "libcupti.so.12", "/usr/local/cuda/lib64/libcupti.so",
                                 "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so"};
    void *h = NULL;
    for (size_t i = 0; i < sizeof cands / sizeof cands[0] && !h; i++)
        if (cands[i] && *cands[i])
            h = dlopen(cands[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "cupti_min: no libcupti (set TRLAT_CUPTI_LIB)\n");
        return;
    }
    *(void **)&p_subscribe = dlsym(h, "cuptiSubscribe");
    *(void **)&p_register = dlsym(h, "cuptiActivityRegisterCallbacks");
    *(void **)&p_enable = dlsym(h, "cuptiActivityEnable");
    *(void **)&p_flush = dlsym(h, "cuptiActivityFlushAll");
    *(void **)&p_next = dlsym(h, "cuptiActivityGetNextRecord");
    *(void **)&p_enable_cb = dlsym(h, "cuptiEnableCallback");
    *(void **)&p_register_ts = dlsym(h, "cuptiActivityRegisterTimestampCallback");
    if (!p_subscribe || !p_register || !p_enable || !p_flush || !p_next) {
        fprintf(stderr, "cupti_min: libcupti lacks the activity API\n");
        return;
    }
    int want_cb = flag("CUPTI_MIN_CALLBACK"), want_ts = flag("CUPTI_MIN_TS");
    if ((want_cb && !p_enable_cb) || (want_ts && !p_register_ts)) {
        fprintf(stderr, "cupti_min: libcupti lacks cuptiEnableCallback or cuptiActivityRegisterTimestampCallback\n");
        return;
    }
    CUpti_SubscriberHandle sub;
    CUptiResult rc;
    if ((rc = p_subscribe(&sub, on_callback, NULL)) != CUPTI_SUCCESS) {
        fprintf(stderr, "cupti_min: cuptiSubscribe: CUPTI error %d\n", (int)rc);
        return;
    }
    if (want_ts) { /* before any kind is on, as trlat does */
        calibrate();
        if ((rc = p_register_ts(timestamp_ns)) != CUPTI_SUCCESS) {
            fprintf(stderr, "cupti_min: cuptiActivityRegisterTimestampCallback: CUPTI error %d\n", (int)rc);
            return;
        }
        ts_on = 1;
    }
    if ((rc = p_register(requested, completed)) != CUPTI_SUCCESS) {
        fprintf(stderr, "cupti_min: cuptiActivityRegisterCallbacks: CUPTI error %d\n", (int)rc);
        return;
    }
    for (size_t i = 0; want_cb && i < TRLAT_CUPTI_NLAUNCHES; i++)
        ncallbacks += p_enable_cb(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, trlat_cupti_driver_launches[i]) == CUPTI_SUCCESS;
    if (want_cb && !ncallbacks) {
        fprintf(stderr, "cupti_min: no launch callback could be enabled\n");
        return;
    }
    if ((rc = p_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) != CUPTI_SUCCESS) {
        fprintf(stderr, "cupti_min: kernel activity: CUPTI error %d\n", (int)rc);
        return;
    }
    started = 1;
    atexit(at_exit);
}
