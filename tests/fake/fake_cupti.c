/* A fake libcupti for tests without a GPU (loaded through TRLAT_CUPTI_LIB):
 * the subset of the activity API trlat uses. Every external correlation
 * region (trlat's push/pop around a launch) becomes one launch: an external
 * correlation record, a driver API record and a kernel record that starts
 * LATENCY after the call and runs KERNEL_NS, after the previous kernel.
 * Full buffers are handed back by a worker thread, like CUPTI's.
 * Knobs (environment):
 *   FAKE_CUPTI_SUBSCRIBE_RC  what cuptiSubscribe returns (default 0)
 *   FAKE_CUPTI_ENABLE_RC     what enabling kernel activity returns (default 0)
 *   FAKE_CUPTI_KERNEL        name of the kernels (default "fake_kernel")
 *   FAKE_CUPTI_KERNEL_NS     kernel duration (default 2000)
 *   FAKE_CUPTI_LATENCY_NS    call end to kernel start (default 3000)
 *   FAKE_CUPTI_PER_BUFFER    launches per buffer (default 1000)
 *   FAKE_CUPTI_SPLIT         1: kernel records in their own buffers, handed
 *                            back before the launch records that go with them
 *   FAKE_CUPTI_RUNTIME       N runtime launches of "_Z14runtime_kernelPf"
 *                            (no trlat region), added at the first flush
 *   FAKE_CUPTI_DROPPED       dropped records reported with the first buffer
 *   FAKE_CUPTI_NO_EXT        1: no external correlation records */
#include <cupti.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define QMAX 256

struct stream { /* a sequence of buffers */
    uint8_t *buf;
    size_t size, used;
    unsigned launches;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc req;
static CUpti_BuffersCallbackCompleteFunc done;
static CUpti_TimestampCallbackFunc ts_cb;
static struct stream s_api, s_kern;
static struct { uint8_t *buf; size_t used; } queue[QMAX];
static int qhead, qn, inflight, subscribed, kernels_on, ext_on, worker_started, runtime_done;
static uint64_t dev_free, dropped_pending;
static atomic_uint corr_next;
static _Thread_local uint64_t ext_id[8], ext_t0[8];
static _Thread_local int ext_depth;

static long env(const char *name, long def)
{
    const char *v = getenv(name);
    return v && *v ? atol(v) : def;
}

static uint64_t now(void)
{
    if (ts_cb)
        return ts_cb();
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Under mu. Completed buffers wait for the worker. */
static void complete(struct stream *s)
{
    if (!s->buf)
        return;
    if (qn < QMAX) {
        queue[(qhead + qn) % QMAX].buf = s->buf;
        queue[(qhead + qn) % QMAX].used = s->used;
        qn++;
        pthread_cond_broadcast(&cv);
    }
    s->buf = NULL;
    s->used = 0;
    s->launches = 0;
}

static void *space(struct stream *s, size_t n)
{
    if (s->buf && s->used + n > s->size)
        complete(s);
    if (!s->buf) {
        size_t max = 0;
        req(&s->buf, &s->size, &max);
        if (!s->buf) {
            dropped_pending++;
            return NULL;
        }
        s->used = 0;
    }
    void *p = s->buf + s->used;
    s->used += n;
    memset(p, 0, n);
    return p;
}

static void deliver(uint8_t *buf, size_t used)
{
    done(NULL, 0, buf, 0, used);
}

static void *worker(void *arg)
{
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!qn)
            pthread_cond_wait(&cv, &mu);
        uint8_t *b = queue[qhead].buf;
        size_t u = queue[qhead].used;
        qhead = (qhead + 1) % QMAX;
        qn--;
        inflight++;
        pthread_mutex_unlock(&mu);
        deliver(b, u);
        pthread_mutex_lock(&mu);
        inflight--;
        pthread_cond_broadcast(&cv);
    }
    return NULL;
}

/* One launch's records, under mu. */
static void launch(uint32_t cbid, int driver, uint64_t ext_kind, uint64_t ext, uint64_t t0, uint64_t t1,
                   const char *name, uint32_t stream)
{
    uint32_t corr = atomic_fetch_add(&corr_next, 1) + 1;
    int split = env("FAKE_CUPTI_SPLIT", 0) != 0;
    struct stream *ks = split ? &s_kern : &s_api;
    if (kernels_on) {
        CUpti_ActivityKernel10 *k = space(ks, sizeof *k);
        if (k) {
            uint64_t start = t1 + (uint64_t)env("FAKE_CUPTI_LATENCY_NS", 3000);
            if (start < dev_free)
                start = dev_free;
            k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
            k->start = start;
            k->end = start + (uint64_t)env("FAKE_CUPTI_KERNEL_NS", 2000);
            dev_free = k->end;
            k->deviceId = 0;
            k->contextId = 1;
            k->streamId = stream;
            k->correlationId = corr;
            k->name = name;
        }
    }
    if (ext && ext_on && !env("FAKE_CUPTI_NO_EXT", 0)) {
        CUpti_ActivityExternalCorrelation *e = space(&s_api, sizeof *e);
        if (e) {
            e->kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
            e->externalKind = (CUpti_ExternalCorrelationKind)ext_kind;
            e->externalId = ext;
            e->correlationId = corr;
        }
    }
    CUpti_ActivityAPI *a = space(&s_api, sizeof *a);
    if (a) {
        a->kind = driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
        a->cbid = cbid;
        a->start = t0;
        a->end = t1;
        a->processId = (uint32_t)getpid();
        a->threadId = (uint32_t)syscall(SYS_gettid);
        a->correlationId = corr;
    }
    unsigned per = (unsigned)env("FAKE_CUPTI_PER_BUFFER", 1000);
    if (split) {
        if (++s_kern.launches >= per)
            complete(&s_kern);
        if (++s_api.launches >= 4 * per)
            complete(&s_api);
    } else if (++s_api.launches >= per) {
        complete(&s_api);
    }
}

EXPORT CUptiResult cuptiGetVersion(uint32_t *v)
{
    *v = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    *s = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "FAKE_MULTIPLE_SUBSCRIBERS" : "FAKE_CUPTI_ERROR";
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc cb, void *ud)
{
    long rc = env("FAKE_CUPTI_SUBSCRIBE_RC", 0);
    if (rc)
        return (CUptiResult)rc;
    if (subscribed)
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    subscribed = 1;
    *h = (CUpti_SubscriberHandle)0x5;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
    subscribed = 0;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
        long rc = env("FAKE_CUPTI_ENABLE_RC", 0);
        if (rc)
            return (CUptiResult)rc;
        kernels_on = 1;
    }
    if (kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)
        ext_on = 1;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
        kernels_on = 0;
    if (kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)
        ext_on = 0;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t *size, void *value)
{
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
    ts_cb = f;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *t)
{
    *t = now();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
                                                  CUpti_BuffersCallbackCompleteFunc c)
{
    pthread_mutex_lock(&mu);
    req = r;
    done = c;
    if (!worker_started) {
        pthread_t t;
        worker_started = pthread_create(&t, NULL, worker, NULL) == 0;
    }
    pthread_mutex_unlock(&mu);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id)
{
    if (ext_depth >= 8)
        return CUPTI_ERROR_INVALID_PARAMETER;
    ext_id[ext_depth] = id | ((uint64_t)kind << 60);
    ext_t0[ext_depth++] = now();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t *last)
{
    if (!ext_depth)
        return CUPTI_ERROR_QUEUE_EMPTY;
    ext_depth--;
    uint64_t id = ext_id[ext_depth] & ((1ull << 60) - 1), t0 = ext_t0[ext_depth], t1 = now();
    if (last)
        *last = id;
    static const char *name;
    if (!name && !(name = getenv("FAKE_CUPTI_KERNEL")))
        name = "fake_kernel";
    pthread_mutex_lock(&mu);
    if (done)
        launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 1, kind, id, t0, t1, name, 7);
    pthread_mutex_unlock(&mu);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    pthread_mutex_lock(&mu);
    if (!done) {
        pthread_mutex_unlock(&mu);
        return CUPTI_SUCCESS;
    }
    if (!runtime_done) {
        runtime_done = 1;
        long n = env("FAKE_CUPTI_RUNTIME", 0);
        for (long i = 0; i < n; i++) {
            uint64_t t0 = now();
            launch(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 0, 0, 0, t0, t0 + 100, "_Z14runtime_kernelPf", 13);
        }
    }
    complete(&s_kern);
    complete(&s_api);
    if (!worker_started) { /* deliver here */
        while (qn) {
            uint8_t *b = queue[qhead].buf;
            size_t u = queue[qhead].used;
            qhead = (qhead + 1) % QMAX;
            qn--;
            pthread_mutex_unlock(&mu);
            deliver(b, u);
            pthread_mutex_lock(&mu);
        }
    }
    while (qn || inflight) /* blocking, like CUPTI's: every buffer handed back */
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    return CUPTI_SUCCESS;
}

static size_t record_size(const CUpti_Activity *r)
{
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        return sizeof(CUpti_ActivityExternalCorrelation);
    default:
        return sizeof(CUpti_ActivityAPI);
    }
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
    uint8_t *p = *record ? (uint8_t *)*record + record_size(*record) : buffer;
    if (p >= buffer + valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)p;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *dropped)
{
    static atomic_int reported;
    *dropped = 0;
    if (!atomic_exchange(&reported, 1))
        *dropped = (size_t)env("FAKE_CUPTI_DROPPED", 0);
    pthread_mutex_lock(&mu);
    *dropped += dropped_pending;
    dropped_pending = 0;
    pthread_mutex_unlock(&mu);
    return CUPTI_SUCCESS;
}
