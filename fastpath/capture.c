/* Capture: the launch hook copies the block a Python call launched (the
 * CUfunction, the whole CUlaunchConfig with its attributes, the parameter
 * bytes sized by cuFuncGetParamInfo) into the thread's capture, which
 * fp_before set and fp_after reads. When no call is
 * being captured the hook costs one thread-local load. Also writes the
 * TRLAT_FASTPATH_LOG launch log (debugging, the corpus's comparisons). */
#include "fastpath/fp.h"
#include "interpose/launch.h"
#include "interpose/log.h"
#include "interpose/names.h"
#include "interpose/real.h"
#include "interpose/safefile.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static _Thread_local struct fp_capture *cap_tls __attribute__((tls_model("initial-exec")));
static int log_fd = -1;

int fp_capture_begin(struct fp_capture *c)
{
    if (cap_tls)
        return -1;
    c->launches = 0;
    c->ok = 0;
    c->legacy_ok = 0;
    c->api = FP_API_EX;
    c->ntmap = 0;
    if ((c->ts = trlat_tstate_get()))
        trlat_launch_hooks_want(c->ts, 1); /* this thread's launches through the hook until the end */
    cap_tls = c;
    return 0;
}

void fp_capture_end(struct fp_capture *c)
{
    if (cap_tls != c)
        return;
    cap_tls = NULL;
    if (c->ts)
        trlat_launch_hooks_want(c->ts, -1);
}

int fp_capturing(void)
{
    return cap_tls != NULL;
}

void fp_capture_tmap(const struct trlat_tmap_call *t)
{
    struct fp_capture *c = cap_tls;
    if (!c)
        return;
    if (c->ntmap < FP_TMAP_CALLS)
        c->tmap[c->ntmap] = *t;
    if (c->ntmap <= FP_TMAP_CALLS)
        c->ntmap++; /* FP_TMAP_CALLS + 1: more than kept, none used */
}

/* ---- parameter layouts, cached per function ---- */
typedef CUresult (*pfn_param_info)(CUfunction, size_t, size_t *, size_t *);
typedef CUresult (*pfn_ctx_current)(CUcontext *);

struct pcache {
    CUfunction f;
    uint32_t n, blob_len;
    uint32_t *offsize; /* off[0..n) then size[0..n) */
};
#define PCACHE 1024
static struct pcache pc[PCACHE];
static pthread_mutex_t pc_lock = PTHREAD_MUTEX_INITIALIZER;

static void *driver_sym(void *_Atomic *slot, const char *name)
{
    void *p = atomic_load_explicit(slot, memory_order_acquire);
    if (!p) {
        p = trlat_libcuda_sym(name);
        atomic_store_explicit(slot, p, memory_order_release);
    }
    return p;
}

static int query(CUfunction f, struct fp_pinfo *out)
{
    static void *_Atomic sym;
    pfn_param_info info = (pfn_param_info)driver_sym(&sym, "cuFuncGetParamInfo"); /* CUDA 12.4+ */
    if (!info) {
        static atomic_flag once;
        trlat_log_once(&once, "fast path: the driver has no cuFuncGetParamInfo (CUDA 12.4+); nothing is memoized");
        return -1;
    }
    uint32_t end = 0;
    for (uint32_t i = 0;; i++) {
        size_t o, s;
        if (info(f, i, &o, &s) != CUDA_SUCCESS) { /* past the last parameter */
            out->n = i;
            break;
        }
        if (i == FP_MAX_PARAMS || o + s > UINT32_MAX)
            return -1;
        out->off[i] = (uint32_t)o;
        out->size[i] = (uint32_t)s;
        if (o + s > end)
            end = (uint32_t)(o + s);
    }
    out->blob_len = end;
    return 0;
}

int fp_pinfo_get(CUfunction f, struct fp_pinfo *out)
{
    uint32_t h = (uint32_t)(((uintptr_t)f >> 4) * 0x9e3779b1u) % PCACHE;
    pthread_mutex_lock(&pc_lock);
    for (uint32_t i = 0; i < 8; i++) {
        struct pcache *e = &pc[(h + i) % PCACHE];
        if (e->f == f) {
            out->n = e->n;
            out->blob_len = e->blob_len;
            memcpy(out->off, e->offsize, e->n * 4);
            memcpy(out->size, e->offsize + e->n, e->n * 4);
            pthread_mutex_unlock(&pc_lock);
            return 0;
        }
    }
    pthread_mutex_unlock(&pc_lock);
    if (query(f, out))
        return -1;
    pthread_mutex_lock(&pc_lock);
    for (uint32_t i = 0; i < 8; i++) {
        struct pcache *e = &pc[(h + i) % PCACHE];
        if (!e->f) {
            uint32_t *os = malloc((size_t)(out->n ? out->n : 1) * 8);
            if (os) {
                memcpy(os, out->off, out->n * 4);
                memcpy(os + out->n, out->size, out->n * 4);
                *e = (struct pcache){.f = f, .n = out->n, .blob_len = out->blob_len, .offsize = os};
            }
            break;
        }
    }
    pthread_mutex_unlock(&pc_lock);
    return 0;
}

/* ---- the hook ---- */
void fp_capture_launch(struct fp_capture *c, const struct trlat_launch *l)
{
    if (++c->launches != 1) {
        c->ok = 0; /* a call that launched twice has no one block */
        return;
    }
    c->ok = 0;
    /* Triton 3.6's launcher: dlsym(libcuda, "cuLaunchKernelEx") (the legacy
     * default stream), kernelParams set, extra 0 (driver.py _launch);
     * torch's static launcher: cuLaunchKernel, kernelParams set, extra 0. */
    int legacy = l->fn == TRLAT_FN_cuLaunchKernel || l->fn == TRLAT_FN_cuLaunchKernel_ptsz;
    if (l->rc != CUDA_SUCCESS || l->extra || !l->params ||
        (legacy ? !c->legacy_ok : l->fn != TRLAT_FN_cuLaunchKernelEx || !l->config))
        return;
    CUlaunchConfig lc = {.gridDimX = l->grid[0],
                         .gridDimY = l->grid[1],
                         .gridDimZ = l->grid[2],
                         .blockDimX = l->block[0],
                         .blockDimY = l->block[1],
                         .blockDimZ = l->block[2],
                         .sharedMemBytes = l->shmem,
                         .hStream = l->stream};
    const CUlaunchConfig *cfg = legacy ? &lc : l->config;
    if (cfg->numAttrs > FP_MAX_ATTRS || (cfg->numAttrs && !cfg->attrs))
        return;
    c->api = !legacy ? FP_API_EX : l->fn == TRLAT_FN_cuLaunchKernel ? FP_API_LEGACY : FP_API_LEGACY_PTSZ;
    if (fp_pinfo_get((CUfunction)l->func, &c->pi) || c->pi.blob_len > FP_MAX_BLOB)
        return;
    memset(c->blob, 0, c->pi.blob_len);
    for (uint32_t i = 0; i < c->pi.n; i++) {
        if (!l->params[i])
            return;
        memcpy(c->blob + c->pi.off[i], l->params[i], c->pi.size[i]);
    }
    c->cfg = *cfg;
    memset(c->attrs, 0, sizeof c->attrs);
    if (cfg->numAttrs)
        memcpy(c->attrs, cfg->attrs, cfg->numAttrs * sizeof *cfg->attrs);
    c->cfg.attrs = NULL;
    c->func = (CUfunction)l->func;
    static void *_Atomic sym;
    pfn_ctx_current cur = (pfn_ctx_current)driver_sym(&sym, "cuCtxGetCurrent");
    c->ctx = NULL;
    if (cur)
        cur(&c->ctx);
    c->ok = 1;
}

static void log_launch(const struct trlat_launch *l);

static void hook_after(struct trlat_tstate *ts, struct trlat_launch *l)
{
    struct fp_capture *c = cap_tls;
    if (__builtin_expect(c != NULL, 0))
        fp_capture_launch(c, l);
    if (__builtin_expect(log_fd >= 0, 0))
        log_launch(l);
}

static struct trlat_launch_hooks hooks = {.after = hook_after};

void fp_capture_install(const char *log_path)
{
    if (log_path && *log_path) {
        const char *why = NULL;
        log_fd = trlat_file_append(log_path, 0644, &why);
        if (log_fd < 0)
            trlat_log("TRLAT_FASTPATH_LOG=%.200s cannot be opened (%s); no launch log", log_path, why);
    }
    hooks.always = log_fd >= 0; /* the log wants every launch; a capture only its thread's */
    if (trlat_launch_add_hooks(&hooks))
        trlat_log("fast path: no room for its launch hook; nothing is memoized");
}

void fp_capture_after_fork(void)
{
    cap_tls = NULL;
}

/* ---- TRLAT_FASTPATH_LOG: one line per launch, one write(2) each ---- */
#define LOG_PARAM_BYTES 1024
static void log_launch(const struct trlat_launch *l)
{
    char buf[256 + 160 + FP_MAX_ATTRS * 48 + 3 * LOG_PARAM_BYTES];
    size_t n = 0, cap = sizeof buf;
#define PUT(...) n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__)
    const char *name = trlat_names_get(l->func);
    if (!name)
        name = trlat_name_of(l->func);
    PUT("launch %s fn=%s rc=%d grid=%u,%u,%u block=%u,%u,%u shmem=%u stream=%p", name ? name : "?",
        trlat_fn_names[l->fn], (int)l->rc, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
        l->shmem, (void *)l->stream);
    PUT(" attrs=");
    if (l->config)
        for (unsigned i = 0; i < l->config->numAttrs && i < FP_MAX_ATTRS && l->config->attrs; i++) {
            const unsigned char *v = (const unsigned char *)&l->config->attrs[i].value;
            unsigned nv = fp_attr_value_size(l->config->attrs[i].id);
            PUT("%s%d:", i ? ";" : "", (int)l->config->attrs[i].id);
            for (unsigned j = 0; j < nv && j < 16; j++) /* the bytes the driver reads */
                PUT("%02x", v[j]);
        }
    PUT(" params=");
    struct fp_pinfo *pi = malloc(sizeof *pi);
    if (pi && l->params && !l->extra && fp_pinfo_get((CUfunction)l->func, pi) == 0) {
        size_t budget = LOG_PARAM_BYTES;
        for (uint32_t i = 0; i < pi->n && l->params[i]; i++) {
            if (i)
                PUT("|");
            const unsigned char *p = l->params[i];
            for (uint32_t j = 0; j < pi->size[i] && budget; j++, budget--)
                PUT("%02x", p[j]);
        }
        if (!budget)
            PUT("...");
    } else {
        PUT("?");
    }
    free(pi);
    if (n >= cap - 1)
        n = cap - 2;
    buf[n++] = '\n';
#undef PUT
    ssize_t w = write(log_fd, buf, n);
    (void)w;
}
