/* Replay: the real cuLaunchKernelEx (through trlat_launch_ex, so the report
 * counts it like any launch) with the memoized block: the stream and grid of
 * this call, in value mode this call's pointers and scalars written into
 * their slots. As Triton's launcher does (driver.py launch), the GIL is
 * released around the driver call (TRLAT_FASTPATH_GIL=keep holds it). */
#include "fastpath/fp_py.h"
#include "interpose/launch.h"
#include "interpose/real.h"

#include <stdatomic.h>
#include <stdio.h>

CUresult fp_replay(const struct fp_entry *e, const struct fp_call *c, const unsigned g[3])
{
    CUlaunchAttribute attrs[FP_MAX_ATTRS];
    CUlaunchConfig cfg = e->cfg;
    if (cfg.numAttrs)
        memcpy(attrs, e->attrs, cfg.numAttrs * sizeof attrs[0]);
    cfg.attrs = cfg.numAttrs ? attrs : NULL;
    cfg.hStream = (CUstream)(uintptr_t)c->stream;
    /* driver.py _launch: gridDimX = gridX * num_ctas */
    cfg.gridDimX = g[0] * e->num_ctas;
    cfg.gridDimY = g[1];
    cfg.gridDimZ = g[2];
    _Alignas(16) unsigned char buf[FP_MAX_BLOB];
    void *ptrs[FP_MAX_PARAMS];
    memcpy(buf, e->blob, e->blob_len);
    if (e->kind == FP_E_VALUE)
        fp_slots_patch(buf, e->slots, e->nslots, c->want);
    for (uint32_t i = 0; i < e->nparams; i++)
        ptrs[i] = buf + e->off[i];
    CUfunction f = e->func;
    /* nothing of e is read past this point: another thread may evict it */
    void *saved = fp_conf.keep_gil ? NULL : PY(PyEval_SaveThread)();
    CUresult rc = trlat_launch_ex(&cfg, f, ptrs, NULL);
    if (saved)
        PY(PyEval_RestoreThread)(saved);
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
