/* The CUPTI session. Life cycle:
 *   start   (trlat's first CUDA call, possibly inside the CUDA runtime's own
 *           cuGetProcAddress calls): load libcupti, subscribe (another
 *           subscriber -> stand aside), trlat's clock as CUPTI's timestamp
 *           source, kernel activity, and CUPTI callbacks on the driver's
 *           launch functions that join kernels with launches
 *           (cupti_callback.c; the launch path needs no hook);
 *   running CUPTI's thread hands back full buffers: the threads' join rings
 *           are drained into the GPU statistics, then the buffer's kernel records
 *           folded, under fold_lock; buffer recycled (at most MAX_BUFS exist);
 *   exit    a handler registered once CUPTI records (after the CUDA
 *           runtime's and libcupti's own exit handlers were registered, so
 *           it runs before them) force-flushes while CUDA and CUPTI are
 *           intact; trlat's report then only reads the fold;
 *   fork    the child keeps nothing: CUDA and CUPTI do not follow fork, the
 *           child's report is host-only. */
#include <cupti.h>

#include "interpose/cupti/callback.h"
#include "interpose/cupti/launches.h"
#include "interpose/cupti/load.h"
#include "interpose/cupti/session.h"
#include "interpose/clock.h"
#include "interpose/config.h"
#include "interpose/cupti/joinring.h"
#include "interpose/log.h"
#include "interpose/lifecycle.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_SIZE ((size_t)1 << 20)
#define MAX_BUFS 32
#define MAX_TRACE_EVENTS (1u << 20)

enum { ST_NONE, ST_OFF, ST_UNAVAILABLE, ST_ON };

static int state;
static char reason[320];
static struct trlat_cupti_api api;
static CUpti_SubscriberHandle subscriber;
static int64_t ts_offset;     /* CUPTI time - trlat time, when CUPTI keeps its own clock */
static atomic_int live;       /* records are folded */
static atomic_int flushed;    /* the exit flush ran: CUPTI is not called again */
static atomic_int exit_hooks; /* exit flush registrations so far */
static int enabled_kinds[8], nenabled;

static pthread_mutex_t fold_lock = PTHREAD_MUTEX_INITIALIZER;
static struct trlat_gpu_stats *fold;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *pool_all[MAX_BUFS], *pool_free[MAX_BUFS];
static int pool_n, pool_nfree;

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- state for the report ---- */

const char *trlat_cupti_state(void)
{
    switch (state) {
    case ST_OFF:
        return "off";
    case ST_ON:
        return "on";
    case ST_UNAVAILABLE:
        return "unavailable";
    default:
        return NULL;
    }
}

const char *trlat_cupti_reason(void)
{
    if (state == ST_OFF)
        return trlat_config_cupti_off_why();
    return state == ST_UNAVAILABLE ? reason : NULL;
}

struct trlat_gpu_stats *trlat_cupti_fold_lock(void)
{
    if (state != ST_ON)
        return NULL;
    pthread_mutex_lock(&fold_lock);
    if (!fold)
        pthread_mutex_unlock(&fold_lock);
    return fold;
}

void trlat_cupti_fold_unlock(void)
{
    pthread_mutex_unlock(&fold_lock);
}

/* ---- activity buffers ---- */

static uint64_t CUPTIAPI timestamp_ns(void)
{
    return trlat_now_ns();
}

static inline uint64_t to_trlat(uint64_t t)
{
    int64_t v = (int64_t)t - ts_offset;
    return t && v > 0 ? (uint64_t)v : 0;
}

static void fold_buffer(uint8_t *buf, size_t valid)
{
    CUpti_Activity *r = NULL;
    while (api.get_next_record(buf, valid, &r) == CUPTI_SUCCESS) {
        if (r->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && r->kind != CUPTI_ACTIVITY_KIND_KERNEL)
            continue;
        /* Only fields every kernel record version since CUpti_ActivityKernel4
         * has at the same offsets: an older libcupti gives older records. */
        const CUpti_ActivityKernel10 *k = (const void *)r;
        struct trlat_gpu_kernel g = {.corr = k->correlationId,
                                     .device = k->deviceId,
                                     .stream = k->streamId,
                                     .start = to_trlat(k->start),
                                     .end = to_trlat(k->end),
                                     .name = k->name};
        trlat_gpu_stats_kernel(fold, &g);
    }
}

_Static_assert(offsetof(CUpti_ActivityKernel10, start) == offsetof(CUpti_ActivityKernel4, start) &&
                   offsetof(CUpti_ActivityKernel10, end) == offsetof(CUpti_ActivityKernel4, end) &&
                   offsetof(CUpti_ActivityKernel10, deviceId) == offsetof(CUpti_ActivityKernel4, deviceId) &&
                   offsetof(CUpti_ActivityKernel10, streamId) == offsetof(CUpti_ActivityKernel4, streamId) &&
                   offsetof(CUpti_ActivityKernel10, correlationId) == offsetof(CUpti_ActivityKernel4, correlationId) &&
                   offsetof(CUpti_ActivityKernel10, name) == offsetof(CUpti_ActivityKernel4, name),
               "kernel record fields moved");

static void exit_flush(void);

/* The exit flush is registered when CUPTI asks for its first buffer and
 * again when it hands the first one back (surely after the CUDA runtime
 * registered its own exit handlers): the last registration runs first. */
static void register_exit_flush(int nth)
{
    int expected = nth - 1;
    if (atomic_compare_exchange_strong(&exit_hooks, &expected, nth) && atexit(exit_flush) != 0) {
        static atomic_flag once;
        trlat_log_once(&once, "could not register CUPTI's exit flush; GPU records are flushed with the report");
    }
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *buffer = NULL;
    *size = 0;
    *max_records = 0;
    if (!atomic_load(&live))
        return;
    pthread_mutex_lock(&pool_lock);
    uint8_t *b = pool_nfree ? pool_free[--pool_nfree] : NULL;
    if (!b && pool_n < MAX_BUFS && (b = malloc(BUF_SIZE)))
        pool_all[pool_n++] = b;
    pthread_mutex_unlock(&pool_lock);
    if (!b) {
        static atomic_flag once;
        trlat_log_once(&once,
                       "CUPTI asked for more than %d activity buffers of %zu KiB; it drops records until one "
                       "is folded",
                       MAX_BUFS, BUF_SIZE >> 10);
        return;
    }
    *buffer = b;
    *size = BUF_SIZE;
    register_exit_flush(1);
}

static void recycle(uint8_t *buf)
{
    pthread_mutex_lock(&pool_lock);
    for (int i = 0; i < pool_n; i++)
        if (pool_all[i] == buf && pool_nfree < MAX_BUFS) {
            pool_free[pool_nfree++] = buf;
            break;
        }
    /* A buffer that is not trlat's (another client's, handed to trlat's
     * callback) is left alone. */
    pthread_mutex_unlock(&pool_lock);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
    size_t dropped = 0;
    if (atomic_load(&live))
        api.get_num_dropped(ctx, stream, &dropped);
    pthread_mutex_lock(&fold_lock);
    if (fold && buf && (atomic_load(&live) || !atomic_load(&flushed))) {
        trlat_joinring_drain(fold); /* the launches of this buffer's kernels */
        if (valid)
            fold_buffer(buf, valid);
        if (dropped)
            trlat_gpu_stats_dropped(fold, dropped);
    }
    pthread_mutex_unlock(&fold_lock);
    if (buf)
        recycle(buf);
    if (atomic_load(&live))
        register_exit_flush(2);
}

/* ---- start, flush, fork ---- */

static void unavailable(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void unavailable(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    state = ST_UNAVAILABLE;
    trlat_log("CUPTI unavailable, the report has host times only: %s", reason);
}

static const char *errstr(CUptiResult rc)
{
    const char *s = NULL;
    if (api.get_result_string && api.get_result_string(rc, &s) == CUPTI_SUCCESS && s)
        return s;
    return "unknown CUPTI error";
}

/* Undoes a start that failed half way, so that another client finds
 * CUPTI as it was. */
static void stop(void)
{
    for (int i = nenabled - 1; i >= 0; i--)
        api.disable((CUpti_ActivityKind)enabled_kinds[i]);
    nenabled = 0;
    trlat_cupti_callback_enable(&api, subscriber, 0, trlat_cupti_driver_launches, TRLAT_CUPTI_NLAUNCHES);
    api.unsubscribe(subscriber);
    pthread_mutex_lock(&fold_lock);
    trlat_gpu_stats_free(fold);
    fold = NULL;
    pthread_mutex_unlock(&fold_lock);
}

static CUptiResult enable(CUpti_ActivityKind kind)
{
    CUptiResult rc = api.enable(kind);
    if (rc == CUPTI_SUCCESS && nenabled < (int)COUNT(enabled_kinds))
        enabled_kinds[nenabled++] = kind;
    return rc;
}

/* NULL, or what failed (with *rc). */
static const char *enable_records(CUptiResult *rc)
{
    if ((*rc = api.register_callbacks(buffer_requested, buffer_completed)) != CUPTI_SUCCESS)
        return "cuptiActivityRegisterCallbacks";
    /* Callbacks first: a kernel recorded from now on has its launch's. */
    if ((*rc = trlat_cupti_callback_enable(&api, subscriber, 1, trlat_cupti_driver_launches, TRLAT_CUPTI_NLAUNCHES)) !=
        CUPTI_SUCCESS)
        return "launch callbacks (cuptiEnableCallback)";
    if ((*rc = enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) != CUPTI_SUCCESS)
        return "kernel activity";
    return NULL;
}

static void start(void)
{
    long mode = trlat_config(TRLAT_OPT_CUPTI);
    if (mode == TRLAT_CUPTI_OFF) {
        state = ST_OFF;
        return;
    }
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    if (mode == TRLAT_CUPTI_AUTO && inj && *inj) {
        unavailable("CUDA_INJECTION64_PATH is set (a profiler brings its own CUPTI client); trlat stands aside "
                    "(TRLAT_CUPTI=1 overrides)");
        return;
    }
    char why[256];
    if (trlat_cupti_load(&api, why, sizeof why) != 0) {
        unavailable("%s", why);
        return;
    }
    CUptiResult rc = api.subscribe(&subscriber, trlat_cupti_callback, NULL);
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        unavailable("another CUPTI client is subscribed in this process (CUPTI error 39); trlat stands aside");
        return;
    }
    if (rc != CUPTI_SUCCESS) {
        unavailable("cuptiSubscribe failed: %s (error %d, %s)", errstr(rc), (int)rc, api.path);
        return;
    }
    struct trlat_gpu_limits lim;
    trlat_gpu_limits_default(&lim);
    long trace = trlat_config(TRLAT_OPT_TRACE);
    lim.events = trace > (long)MAX_TRACE_EVENTS ? MAX_TRACE_EVENTS : (uint32_t)trace;
    if (!(fold = trlat_gpu_stats_new(&lim))) {
        stop();
        unavailable("out of memory for the GPU records");
        return;
    }
    if (api.set_attribute) { /* one buffer stream, in record order, not one per thread */
        uint8_t no = 0;
        size_t sz = sizeof no;
        api.set_attribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &sz, &no);
    }
    if (!api.register_timestamp_callback || api.register_timestamp_callback(timestamp_ns) != CUPTI_SUCCESS) {
        uint64_t c = 0;
        if (api.get_timestamp && api.get_timestamp(&c) == CUPTI_SUCCESS && c)
            ts_offset = (int64_t)c - (int64_t)trlat_now_ns();
        else /* CUPTI's default on Linux: CLOCK_REALTIME */
            ts_offset = (int64_t)trlat_clk.epoch_real_ns;
    }
    atomic_store(&live, 1); /* buffers may be asked for as soon as a kind is on */
    const char *what = enable_records(&rc);
    if (what) {
        atomic_store(&live, 0);
        stop();
        unavailable("%s failed: %s (error %d)", what, errstr(rc), (int)rc);
        return;
    }
    state = ST_ON;
}

static void flush_now(void)
{
    if (atomic_exchange(&flushed, 1))
        return;
    /* A client started later (torch.profiler) may have put its own buffer
     * callbacks in place, and be gone by now: take the buffers back. */
    api.register_callbacks(buffer_requested, buffer_completed);
    api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    /* What the rings still hold: the launches of kernels that waited, and
     * launch calls that made no kernel record. */
    pthread_mutex_lock(&fold_lock);
    if (fold)
        trlat_joinring_drain(fold);
    pthread_mutex_unlock(&fold_lock);
    atomic_store(&live, 0);
}

static void exit_flush(void)
{
    if (state == ST_ON && atomic_load(&live))
        flush_now();
}

/* trlat's exit sequence. When CUPTI never asked for a buffer it recorded
 * nothing, and the exit flush was not registered: CUPTI is not called (its
 * own exit handlers may have run already). */
static void flush(void)
{
    if (state == ST_ON && atomic_load(&exit_hooks) && atomic_load(&live))
        flush_now();
    atomic_store(&live, 0);
}

static void fork_child(void)
{
    pthread_mutex_init(&fold_lock, NULL);
    pthread_mutex_init(&pool_lock, NULL);
    atomic_store(&live, 0);
    atomic_store(&flushed, 1);
    fold = NULL; /* the parent's records are not this process's */
    pool_n = pool_nfree = 0;
    trlat_cupti_callback_after_fork_child();
    if (state == ST_ON) {
        state = ST_UNAVAILABLE;
        snprintf(reason, sizeof reason, "forked child: CUDA and CUPTI do not follow fork(); host times only");
    }
}

static const struct trlat_module cupti_module = {
    .name = "cupti", .start = start, .flush = flush, .after_fork_child = fork_child};

__attribute__((constructor)) static void register_cupti(void)
{
    trlat_module_register(&cupti_module);
}
