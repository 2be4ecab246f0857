/* The smallest CUPTI client, as an LD_PRELOAD library, for measuring what
 * CUPTI's kernel activity alone costs a launch loop: subscribe, register
 * buffer callbacks, enable CONCURRENT_KERNEL, count the kernel records, and
 * flush at exit. Nothing else (no API records, no correlation, CUPTI's own
 * clock).
 *   LD_PRELOAD=libcupti_min.so bench_launch N
 * libcupti: $TRLAT_CUPTI_LIB, else libcupti.so.13 / .12 from the loader's
 * path, else /usr/local/cuda. Prints "cupti_min: N kernel records" on
 * stderr at exit (or why it could not start). */
#include <cupti.h>

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static CUptiResult (*p_subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
static CUptiResult (*p_register)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
static CUptiResult (*p_enable)(CUpti_ActivityKind);
static CUptiResult (*p_flush)(uint32_t);
static CUptiResult (*p_next)(uint8_t *, size_t, CUpti_Activity **);
static atomic_ulong records;
static int started;

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

static void at_exit(void)
{
    p_flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    fprintf(stderr, "cupti_min: %lu kernel records\n", atomic_load(&records));
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
    if (!p_subscribe || !p_register || !p_enable || !p_flush || !p_next) {
        fprintf(stderr, "cupti_min: libcupti lacks the activity API\n");
        return;
    }
    CUpti_SubscriberHandle sub;
    CUptiResult rc;
    if ((rc = p_subscribe(&sub, on_callback, NULL)) != CUPTI_SUCCESS ||
        (rc = p_register(requested, completed)) != CUPTI_SUCCESS ||
        (rc = p_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) != CUPTI_SUCCESS) {
        fprintf(stderr, "cupti_min: CUPTI error %d\n", (int)rc);
        return;
    }
    started = 1;
    atexit(at_exit);
}
