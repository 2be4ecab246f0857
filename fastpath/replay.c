/* Replay: the real cuLaunchKernelEx (through trlat_launch_ex, so the report
 * counts it like any launch), or cuLaunchKernel for a block captured there
 * (torch's static launcher), with the memoized block: the stream and grid
 * of this call, in value mode this call's pointers and scalars written
 * into their slots. As Triton's launcher does (driver.py launch), the GIL
 * is released around cuLaunchKernelEx (TRLAT_FASTPATH_GIL=keep holds it);
 * torch's static launcher holds it around cuLaunchKernel, and so does its
 * replay.
 *
 * The block is laid out in a per-thread buffer (made on the thread's first
 * replay, freed when it exits) that keeps it between calls: a thread
 * replaying the entry it replayed last, with the memo unchanged since
 * (fp_memo.gen), writes only this call's slots, stream and grid, instead
 * of copying the entry's bytes and pointing each parameter into them
 * again (the driver copies the parameters before it returns). */
#include "fastpath/fp_py.h"
#include "interpose/launch.h"
#include "interpose/real.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

struct fp_rblock {
    const struct fp_entry *e; /* whose block this is, at gen; NULL: none */
    uint64_t gen;
    int busy; /* a launch from it is in progress */
    CUlaunchConfig cfg;
    CUlaunchAttribute attrs[FP_MAX_ATTRS];
    void *ptrs[FP_MAX_PARAMS];
    /* a CUtensorMap parameter (host TMA) sits at a 64-byte offset, and the
     * driver reads it where the parameter pointer says: as aligned as the
     * CUtensorMap type itself */
    _Alignas(64) unsigned char buf[FP_MAX_BLOB];
};

static _Thread_local struct fp_rblock *rb_tls __attribute__((tls_model("initial-exec")));
static pthread_key_t rb_key;
static pthread_once_t rb_once = PTHREAD_ONCE_INIT;

static void thread_exit(void *b)
{
    rb_tls = NULL; /* a replay from a later destructor of this thread makes another */
    free(b);
}

static void make_key(void)
{
    pthread_key_create(&rb_key, thread_exit);
}

/* This thread's block, NULL without memory (the caller lays it out on its
 * stack). */
static struct fp_rblock *rblock(void)
{
    struct fp_rblock *b = rb_tls;
    if (__builtin_expect(b != NULL, 1))
        return b;
    pthread_once(&rb_once, make_key);
    void *m;
    if (posix_memalign(&m, 64, sizeof *b))
        return NULL;
    b = memset(m, 0, sizeof *b);
    if (pthread_setspecific(rb_key, b)) {
        free(b);
        return NULL;
    }
    return rb_tls = b;
}

/* e's block in b: its config, attributes, bytes and parameter pointers. */
static void lay_out(struct fp_rblock *b, const struct fp_entry *e)
{
    b->cfg = e->cfg;
    if (b->cfg.numAttrs)
        memcpy(b->attrs, e->attrs, b->cfg.numAttrs * sizeof b->attrs[0]);
    b->cfg.attrs = b->cfg.numAttrs ? b->attrs : NULL;
    memcpy(b->buf, e->blob, e->blob_len);
    for (uint32_t i = 0; i < e->nparams; i++)
        b->ptrs[i] = b->buf + e->off[i];
    b->e = e;
    b->gen = fp_memo.gen;
}

CUresult fp_replay(const struct fp_entry *e, const struct fp_call *c, const unsigned g[3])
{
    struct fp_rblock stack_block, *b = rblock();
    if (!b || b->busy) { /* no memory, or a replay inside this one's launch (none is known to happen) */
        b = &stack_block;
        b->e = NULL;
    }
    if (b->e != e || b->gen != fp_memo.gen)
        lay_out(b, e);
    CUlaunchConfig *cfg = &b->cfg;
    cfg->hStream = (CUstream)(uintptr_t)c->stream;
    /* driver.py _launch: gridDimX = gridX * num_ctas */
    cfg->gridDimX = g[0] * e->num_ctas;
    cfg->gridDimY = g[1];
    cfg->gridDimZ = g[2];
    if (e->kind == FP_E_VALUE)
        fp_slots_patch(b->buf, e->slots, e->nslots, c->want);
    CUfunction f = e->func;
    int api = e->api;
    /* nothing of e is read past this point: another thread may evict it */
    struct trlat_tstate *ts = trlat_tls;
    if (ts)
        trlat_sample_hit(ts); /* TRLAT_TIMING=sampled */
    b->busy = 1;
    /* torch's static launcher launches with the GIL held, Triton's without */
    void *saved = fp_conf.keep_gil || api != FP_API_EX ? NULL : PY(PyEval_SaveThread)();
    CUresult rc = api == FP_API_EX ? trlat_launch_ex(cfg, f, b->ptrs, NULL)
                                   : trlat_launch_legacy(api == FP_API_LEGACY_PTSZ, cfg, f, b->ptrs);
    if (saved)
        PY(PyEval_RestoreThread)(saved);
    b->busy = 0;
    return rc;
}

typedef CUresult (*pfn_err)(CUresult, const char **);
typedef CUresult (*pfn_ctx)(CUcontext *);

void fp_raise_launch_error(CUresult rc)
{
    /* driver.py gpuAssert: "Triton Error [CUDA]: " + cuGetErrorString */
    static void *_Atomic sym;
    pfn_err str = atomic_load(&sym);
    if (!str)
        atomic_store(&sym, str = (pfn_err)trlat_libcuda_sym("cuGetErrorString"));
    const char *s = NULL;
    if (!str || str(rc, &s) != CUDA_SUCCESS || !s)
        s = "unknown error";
    char msg[1024];
    snprintf(msg, sizeof msg, "Triton Error [CUDA]: %s", s);
    PY(PyErr_SetString)(trlat_py.exc_runtime, msg);
}

int fp_has_context(void)
{
    static void *_Atomic sym;
    pfn_ctx cur = atomic_load(&sym);
    if (!cur)
        atomic_store(&sym, cur = (pfn_ctx)trlat_libcuda_sym("cuCtxGetCurrent"));
    CUcontext ctx = NULL;
    return cur && cur(&ctx) == CUDA_SUCCESS && ctx != NULL;
}
