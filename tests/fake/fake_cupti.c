/* A fake libcupti for tests without a GPU (loaded through TRLAT_CUPTI_LIB):
 * the subset of the activity and callback API trlat uses. It sees every
 * launch call of the fake driver (tests/fake/fake_cuda.c), as the real one
 * does inside the driver, and behaves as the real one does where trlat's
 * join depends on it:
 *   - every launch call gets a correlation id; the subscriber's callbacks
 *     enabled for its function (cuptiEnableCallback: domain and id) are
 *     called at its entry and its exit, on the launching thread, inside the
 *     call, with that id. They fire whether or not a CUDA context existed
 *     when they were enabled (as measured on the GPU: a program that makes
 *     its context before trlat starts joins);
 *   - a CUDA runtime launch (fake_cudaLaunchKernel below, or
 *     FAKE_CUPTI_RUNTIME) gets the runtime domain's callbacks, and calls
 *     the driver inside them with the same correlation id: through the
 *     pointer cuGetProcAddress hands out (trlat's wrapper when trlat is
 *     preloaded, as PyTorch's runtime does), or internally (a launch trlat
 *     never sees), each with the driver domain's callbacks;
 *   - a successful launch gets a kernel record (with kernel activity on)
 *     that starts LATENCY after the call returned and runs KERNEL_NS, after
 *     the previous kernel, and carries the call's correlation id;
 *   - other activity kinds (API, external correlation) are refused: trlat
 *     asks for none.
 * Full buffers are handed back by a worker thread, like CUPTI's.
 * Knobs (environment):
 *   FAKE_CUPTI_SUBSCRIBE_RC  what cuptiSubscribe returns (default 0)
 *   FAKE_CUPTI_ENABLE_RC     what enabling kernel activity returns (default 0)
 *   FAKE_CUPTI_KERNEL        name of the kernels the program launches
 *                            through the driver (default "fake_kernel")
 *   FAKE_CUPTI_KERNEL_NS     kernel duration (default 2000)
 *   FAKE_CUPTI_LATENCY_NS    call end to kernel start (default 3000)
 *   FAKE_CUPTI_PER_BUFFER    launches per buffer (default 1000)
 *   FAKE_CUPTI_RUNTIME       N runtime launches of "_Z14runtime_kernelPf"
 *                            whose driver call trlat does not see, made at
 *                            the first flush
 *   FAKE_CUPTI_DROPPED       dropped records reported with the first buffer
 *   FAKE_CUPTI_HOLD          1: full buffers are handed back only at the
 *                            flush (a CUPTI thread that falls behind)
 *   FAKE_CUPTI_REVERSE       1: buffers waiting together are handed back
 *                            newest first (kernel records out of order)
 *   FAKE_CUPTI_NO_CALLBACKS  1: enabled callbacks never fire (a CUPTI that
 *                            fails the join: trlat's self-check) */
#include <cupti.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
static struct stream s_kern;
static struct {
    uint8_t *buf;
    size_t used;
} queue[QMAX];
static int qhead, qn, inflight, kernels_on, worker_started, flushing;
static atomic_int subscribed, forked, runtime_done;
static uint64_t dev_free, dropped_pending;
static atomic_uint corr_next;

/* Callbacks, per domain (0 driver, 1 runtime) and function. */
#define NCBID 1024
static CUpti_CallbackFunc sub_cb;
static void *sub_ud;
static int mute; /* FAKE_CUPTI_NO_CALLBACKS, read at cuptiSubscribe */
static _Atomic uint8_t cb_on[2][NCBID];

/* The fake driver (tests/fake/fake_cuda.c). */
typedef void (*fake_cuda_launch_hook)(int at_exit, const char *entry, CUresult rc);
void fake_cuda_set_launch_hook(fake_cuda_launch_hook h);

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

/* Under mu, qn > 0: the next buffer to hand back. */
static void take(uint8_t **b, size_t *u)
{
    if (env("FAKE_CUPTI_REVERSE", 0)) { /* newest first */
        int i = (qhead + qn - 1) % QMAX;
        *b = queue[i].buf;
        *u = queue[i].used;
    } else {
        *b = queue[qhead].buf;
        *u = queue[qhead].used;
        qhead = (qhead + 1) % QMAX;
    }
    qn--;
}

static void *worker(void *arg)
{
    int hold = env("FAKE_CUPTI_HOLD", 0) != 0;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!qn || (hold && !flushing))
            pthread_cond_wait(&cv, &mu);
        uint8_t *b;
        size_t u;
        take(&b, &u);
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
    int runtime; /* a runtime API call (else the driver's) */
    int kernel;  /* it launched a kernel */
    uint64_t t0, t1;
    const char *name;
    uint32_t stream;
};

/* The call's kernel record, under mu. */
static void records(const struct call *c)
{
    if (kernels_on && c->kernel) {
        CUpti_ActivityKernel10 *k = space(&s_kern, sizeof *k);
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
    if (++s_kern.launches >= (unsigned)env("FAKE_CUPTI_PER_BUFFER", 1000))
        complete(&s_kern);
}

/* Calls the subscriber's callback if enabled for the call's function. */
static void callback(const struct call *c, CUpti_ApiCallbackSite site)
{
    CUpti_CallbackDomain domain = c->runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
    if (mute || !sub_cb || c->cbid >= NCBID || !atomic_load(&cb_on[c->runtime][c->cbid]))
        return;
    CUpti_CallbackData d = {.callbackSite = site,
                            .functionName = c->name,
                            .context = (CUcontext)(uintptr_t)0x2000,
                            .contextUid = 1,
                            .correlationId = c->corr};
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
    static const struct {
        const char *name;
        uint32_t cbid;
    } map[] = {{"cuLaunchKernel", CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel},
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

static uint32_t new_corr(void)
{
    return atomic_fetch_add(&corr_next, 1) + 1;
}

/* The CUDA runtime call in progress on this thread (its driver call
 * shares its correlation id), NULL when none. */
static _Thread_local const struct call *rt_call;

/* The fake driver's launch calls (fake_cuda_set_launch_hook). */
static _Thread_local struct call cur;
static void on_launch(int at_exit, const char *entry, CUresult rc)
{
    if (!recording())
        return;
    if (!at_exit) {
        const struct call *rt = rt_call;
        cur = (struct call){.cbid = driver_cbid(entry),
                            .corr = rt ? rt->corr : new_corr(),
                            .name = rt ? rt->name : kernel_name(),
                            .stream = rt ? rt->stream : 7,
                            .t0 = now()};
        callback(&cur, CUPTI_API_ENTER);
        return;
    }
    cur.t1 = now();
    cur.kernel = rc == CUDA_SUCCESS;
    callback(&cur, CUPTI_API_EXIT);
    pthread_mutex_lock(&mu);
    if (done)
        records(&cur);
    pthread_mutex_unlock(&mu);
}

/* The runtime's driver call that does not pass through the driver's
 * exported entry points (trlat does not see it). */
static void internal_driver_launch(const struct call *rt)
{
    struct call d = {.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                     .corr = rt->corr,
                     .name = rt->name,
                     .stream = rt->stream,
                     .t0 = now()};
    callback(&d, CUPTI_API_ENTER);
    d.t1 = d.t0 + 100;
    d.kernel = 1;
    callback(&d, CUPTI_API_EXIT);
    pthread_mutex_lock(&mu);
    if (done)
        records(&d);
    pthread_mutex_unlock(&mu);
}

typedef CUresult (*lk_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                          void **, void **);

/* A CUDA runtime launch of `kernel` (e.g. from Python through ctypes).
 * through_driver 1: its driver call goes through the cuLaunchKernel
 * pointer cuGetProcAddress_v2 hands out and the function handle
 * cuModuleGetFunction gives (both trlat's when trlat is preloaded); 0: an
 * internal driver call. Returns the launch's CUresult. */
EXPORT int fake_cudaLaunchKernel(const char *kernel, int through_driver)
{
    struct call c = {.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                     .runtime = 1,
                     .corr = new_corr(),
                     .name = kernel,
                     .stream = 13,
                     .t0 = now()};
    int rec = recording();
    if (rec)
        callback(&c, CUPTI_API_ENTER);
    CUresult rc = CUDA_SUCCESS;
    if (through_driver) {
        void *p = NULL;
        CUdriverProcAddressQueryResult st;
        CUfunction f = NULL;
        rc = cuGetProcAddress_v2("cuLaunchKernel", &p, 12000, 0, &st);
        if (rc == CUDA_SUCCESS)
            rc = cuModuleGetFunction(&f, (CUmodule)(uintptr_t)0x1000, kernel);
        if (rc == CUDA_SUCCESS) {
            rt_call = &c;
            rc = ((lk_fn)p)(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
            rt_call = NULL;
        }
    } else if (rec) {
        internal_driver_launch(&c);
    }
    c.t1 = now();
    if (rec)
        callback(&c, CUPTI_API_EXIT);
    return (int)rc;
}

/* FAKE_CUPTI_RUNTIME: runtime launches trlat does not see. */
static void runtime_launch(void)
{
    fake_cudaLaunchKernel("_Z14runtime_kernelPf", 0);
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
    mute = env("FAKE_CUPTI_NO_CALLBACKS", 0) != 0;
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
    if (kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
        return CUPTI_ERROR_NOT_SUPPORTED; /* trlat asks for nothing else */
    long rc = env("FAKE_CUPTI_ENABLE_RC", 0);
    if (rc)
        return (CUptiResult)rc;
    kernels_on = 1;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
        kernels_on = 0;
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
    if (!worker_started) { /* deliver here */
        while (qn) {
            uint8_t *b;
            size_t u;
            take(&b, &u);
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

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
    uint8_t *p = *record ? (uint8_t *)*record + sizeof(CUpti_ActivityKernel10) : buffer;
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
