/* A fake libcupti for tests without a GPU (loaded through TRLAT_CUPTI_LIB):
 * the subset of the activity and callback API trlat uses. It sees every
 * launch call of the fake driver (tests/fake/fake_cuda.c), as the real one
 * does inside the driver, and behaves as the real one does where it
 * matters to trlat's join:
 *   - a launch gets a correlation id; callbacks enabled for its function
 *     (cuptiEnableCallback) are called at its entry and return with that
 *     id, on the launching thread;
 *   - a successful launch gets a kernel record (with kernel activity on)
 *     that starts LATENCY after the call returned and runs KERNEL_NS, after
 *     the previous kernel, and carries the same correlation id;
 *   - a driver (runtime) API record when the DRIVER (RUNTIME) activity kind
 *     is on, or the function's record was enabled through
 *     cuptiActivityEnableDriverApi (RuntimeApi) while no CUDA context
 *     existed: enabled once a context exists, a function's records are not
 *     written (the fake driver's FAKE_CUDA_CONTEXT_FIRST=1);
 *   - an external correlation record, ahead of an API record only, when an
 *     external id is pushed on the thread (EXTERNAL_CORRELATION on).
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
 *   FAKE_CUPTI_NO_EXT        1: no external correlation records
 *   FAKE_CUPTI_HOLD          1: full buffers are handed back only at the
 *                            flush (a CUPTI thread that falls behind) */
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
static int qhead, qn, inflight, kernels_on, ext_on, worker_started, flushing;
static atomic_int subscribed, forked, runtime_done;
static uint64_t dev_free, dropped_pending;
static atomic_uint corr_next;
static _Thread_local uint64_t ext_id[8];
static _Thread_local int ext_depth;

/* Callbacks and API records, per domain (0 driver, 1 runtime) and function. */
#define NCBID 1024
static CUpti_CallbackFunc sub_cb;
static void *sub_ud;
static _Atomic uint8_t cb_on[2][NCBID], api_on[2][NCBID];
static atomic_int api_kind_on[2];

/* The fake driver (tests/fake/fake_cuda.c). */
typedef void (*fake_cuda_launch_hook)(int at_exit, const char *entry, CUresult rc);
void fake_cuda_set_launch_hook(fake_cuda_launch_hook h);
int fake_cuda_context_exists(void);

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
    int hold = env("FAKE_CUPTI_HOLD", 0) != 0;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!qn || (hold && !flushing))
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

/* One launch call, as CUPTI sees it. */
struct call {
    uint32_t cbid, corr;
    int runtime;   /* a runtime API call (else the driver's) */
    int kernel;    /* it launched a kernel */
    uint64_t t0, t1;
    uint64_t ext;  /* the thread's top external id (kind in the top 4 bits), 0: none */
    const char *name;
    uint32_t stream;
};

static int api_recorded(const struct call *c)
{
    int d = c->runtime;
    return atomic_load(&api_kind_on[d]) || (c->cbid < NCBID && atomic_load(&api_on[d][c->cbid]));
}

/* The call's records, under mu. */
static void records(const struct call *c)
{
    int split = env("FAKE_CUPTI_SPLIT", 0) != 0;
    struct stream *ks = split ? &s_kern : &s_api;
    if (kernels_on && c->kernel) {
        CUpti_ActivityKernel10 *k = space(ks, sizeof *k);
        if (k) {
            uint64_t start = c->t1 + (uint64_t)env("FAKE_CUPTI_LATENCY_NS", 3000);
            if (start < dev_free)
                start = dev_free;
            k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
            k->start = start;
            k->end = start + (uint64_t)env("FAKE_CUPTI_KERNEL_NS", 2000);
            dev_free = k->end;
            k->deviceId = 0;
            k->contextId = 1;
            k->streamId = c->stream;
            k->correlationId = c->corr;
            k->name = c->name;
        }
    }
    if (api_recorded(c)) {
        if (c->ext && ext_on && !env("FAKE_CUPTI_NO_EXT", 0)) {
            CUpti_ActivityExternalCorrelation *e = space(&s_api, sizeof *e);
            if (e) {
                e->kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
                e->externalKind = (CUpti_ExternalCorrelationKind)(c->ext >> 60);
                e->externalId = c->ext & ((1ull << 60) - 1);
                e->correlationId = c->corr;
            }
        }
        CUpti_ActivityAPI *a = space(&s_api, sizeof *a);
        if (a) {
            a->kind = c->runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
            a->cbid = c->cbid;
            a->start = c->t0;
            a->end = c->t1;
            a->processId = (uint32_t)getpid();
            a->threadId = (uint32_t)syscall(SYS_gettid);
            a->correlationId = c->corr;
        }
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

/* Calls the subscriber's callback if enabled for the call's function. */
static void callback(const struct call *c, CUpti_ApiCallbackSite site)
{
    CUpti_CallbackDomain domain = c->runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
    if (!sub_cb || c->cbid >= NCBID || !atomic_load(&cb_on[c->runtime][c->cbid]))
        return;
    CUpti_CallbackData d = {.callbackSite = site, .functionName = c->name, .context = (CUcontext)(uintptr_t)0x2000,
                            .contextUid = 1, .correlationId = c->corr};
    sub_cb(sub_ud, domain, c->cbid, &d);
}

static const char *kernel_name(void)
{
    static const char *name;
    if (!name && !(name = getenv("FAKE_CUPTI_KERNEL")))
        name = "fake_kernel";
    return name;
}

static int recording(void)
{
    return atomic_load(&subscribed) && !atomic_load(&forked);
}

static uint32_t driver_cbid(const char *entry)
{
    static const struct { const char *name; uint32_t cbid; } map[] = {
        {"cuLaunchKernel", CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel},
        {"alias_cuLaunchKernel", CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel},
        {"cuLaunchKernel_ptsz", CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz},
        {"cuLaunchKernelEx", CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx},
        {"cuLaunchKernelEx_ptsz", CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz},
        {"cuLaunchCooperativeKernel", CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel},
        {"cuLaunchCooperativeKernel_ptsz", CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(entry, map[i].name) == 0)
            return map[i].cbid;
    return 0;
}

/* The fake driver's launch calls (fake_cuda_set_launch_hook). */
static _Thread_local struct call cur;
static void on_launch(int at_exit, const char *entry, CUresult rc)
{
    if (!recording())
        return;
    if (!at_exit) {
        cur = (struct call){.cbid = driver_cbid(entry), .corr = atomic_fetch_add(&corr_next, 1) + 1,
                            .name = kernel_name(), .stream = 7, .t0 = now()};
        callback(&cur, CUPTI_API_ENTER);
        return;
    }
    cur.t1 = now();
    cur.kernel = rc == CUDA_SUCCESS;
    cur.ext = ext_depth ? ext_id[ext_depth - 1] : 0;
    callback(&cur, CUPTI_API_EXIT);
    pthread_mutex_lock(&mu);
    if (done)
        records(&cur);
    pthread_mutex_unlock(&mu);
}

/* A CUDA runtime launch (FAKE_CUPTI_RUNTIME): no driver call trlat sees. */
static void runtime_launch(void)
{
    struct call c = {.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, .runtime = 1, .kernel = 1,
                     .corr = atomic_fetch_add(&corr_next, 1) + 1, .name = "_Z14runtime_kernelPf", .stream = 13};
    c.t0 = now();
    callback(&c, CUPTI_API_ENTER);
    c.t1 = c.t0 + 100;
    callback(&c, CUPTI_API_EXIT);
    pthread_mutex_lock(&mu);
    if (done)
        records(&c);
    pthread_mutex_unlock(&mu);
}

static void after_fork_child(void)
{
    atomic_store(&forked, 1); /* CUPTI does not follow fork */
}

static void register_fork_handler(void)
{
    pthread_atfork(NULL, NULL, after_fork_child);
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
    if (atomic_load(&subscribed))
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    sub_cb = cb;
    sub_ud = ud;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_fork_handler);
    atomic_store(&subscribed, 1);
    fake_cuda_set_launch_hook(on_launch);
    *h = (CUpti_SubscriberHandle)0x5;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
    atomic_store(&subscribed, 0);
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < NCBID; i++)
            atomic_store(&cb_on[d][i], 0);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle h, CUpti_CallbackDomain domain,
                                       CUpti_CallbackId cbid)
{
    if (!atomic_load(&subscribed) || h != (CUpti_SubscriberHandle)0x5)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if ((domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API) || cbid >= NCBID)
        return CUPTI_ERROR_INVALID_PARAMETER;
    atomic_store(&cb_on[domain == CUPTI_CB_DOMAIN_RUNTIME_API][cbid], enable != 0);
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
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER || kind == CUPTI_ACTIVITY_KIND_RUNTIME)
        atomic_store(&api_kind_on[kind == CUPTI_ACTIVITY_KIND_RUNTIME], 1);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
        kernels_on = 0;
    if (kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)
        ext_on = 0;
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER || kind == CUPTI_ACTIVITY_KIND_RUNTIME)
        atomic_store(&api_kind_on[kind == CUPTI_ACTIVITY_KIND_RUNTIME], 0);
    return CUPTI_SUCCESS;
}

/* A function's API records, turned on once a context exists, are not
 * written (cupti_activity.h asks for these calls before the kind is on;
 * measured on the GPU machine: after the context, nothing). */
static CUptiResult enable_api(int runtime, CUpti_CallbackId cbid, uint8_t enable)
{
    if (cbid >= NCBID)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (!enable || !fake_cuda_context_exists())
        atomic_store(&api_on[runtime][cbid], enable != 0);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    return enable_api(0, cbid, enable);
}

EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    return enable_api(1, cbid, enable);
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
    ext_id[ext_depth++] = id | ((uint64_t)kind << 60);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t *last)
{
    if (!ext_depth)
        return CUPTI_ERROR_QUEUE_EMPTY;
    ext_depth--;
    if (last)
        *last = ext_id[ext_depth] & ((1ull << 60) - 1);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    pthread_mutex_lock(&mu);
    int registered = done != NULL;
    pthread_mutex_unlock(&mu);
    if (!registered)
        return CUPTI_SUCCESS;
    if (!atomic_exchange(&runtime_done, 1))
        for (long i = 0, n = env("FAKE_CUPTI_RUNTIME", 0); i < n; i++)
            runtime_launch();
    pthread_mutex_lock(&mu);
    flushing = 1;
    pthread_cond_broadcast(&cv);
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
    flushing = 0;
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
