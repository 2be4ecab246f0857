/* TRLAT_FASTPATH=verify: before a hit is replayed, Triton's own binder and
 * cache say what run() would launch for the same call, without launching:
 *   jit.py run(): kernel_cache, kernel_key_cache, target, backend, binder =
 *     self.device_caches[device]; bound_args, specialization, options =
 *     binder(*args, **kwargs); key = compute_cache_key(...);
 *     kernel = kernel_cache.get(key)
 * and the launcher's packing of bound_args by the specialization's types
 * (driver.py make_launcher: ty_to_cpp, getPointer's cuPointerGetAttribute,
 * pack_fp32/pack_bf16, the trailing scratch pointers) and launch config
 * (num_warps * 32 threads, metadata.shared, num_ctas, the cooperative and
 * PDL attributes). Any difference blocks the key. */
#include "fastpath/fp_py.h"
#include "interpose/log.h"
#include "interpose/real.h"

#include <stdatomic.h>
#include <stdio.h>

typedef CUresult (*pfn_ptr_attr)(void *, CUpointer_attribute, CUdeviceptr);

static int long_attr(PyObject *o, PyObject *name, long long *v)
{
    PyObject *a = fp_getattr(o, name);
    if (!a)
        return -1;
    int t = PY(PyObject_IsTrue)(a); /* bools and ints alike */
    int ovf = 0;
    *v = FP_TYPE(a) == fpy.t_bool ? t : PY(PyLong_AsLongLongAndOverflow)(a, &ovf);
    PY(Py_DecRef)(a);
    if (ovf || PY(PyErr_Occurred)()) {
        PY(PyErr_Clear)();
        return -1;
    }
    return 0;
}

/* The launcher's bytes for one argument of Triton type ty; width 0: not
 * checked (half floats); -1: could not pack. */
static int pack(const char *ty, PyObject *v, uint64_t *out, unsigned *width)
{
    *out = 0;
    *width = 0;
    if (ty[0] == '*') {
        *width = 8;
        if (v == fpy.o_none)
            return 0;
        if (FP_TYPE(v) == fpy.t_long) {
            *out = PY(PyLong_AsUnsignedLongLong)(v);
            return PY(PyErr_Occurred)() ? -1 : 0;
        }
        PyObject *argv[2] = {NULL, v};
        PyObject *p =
            PY(PyObject_VectorcallMethod)(fpy.s_data_ptr, argv + 1, 1 | TRLAT_PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
        if (!p)
            return -1;
        uint64_t ptr = PY(PyLong_AsUnsignedLongLong)(p);
        PY(Py_DecRef)(p);
        if (PY(PyErr_Occurred)())
            return -1;
        *out = ptr;
        if (ptr) {
            static void *_Atomic sym;
            pfn_ptr_attr get = atomic_load(&sym);
            if (!get)
                atomic_store(&sym, get = (pfn_ptr_attr)trlat_libcuda_sym("cuPointerGetAttribute"));
            CUdeviceptr dev = 0;
            if (!get || get(&dev, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, (CUdeviceptr)ptr) != CUDA_SUCCESS)
                return -1;
            *out = dev;
        }
        return 0;
    }
    static const struct {
        const char *ty;
        unsigned w;
        int kind;
    } T[] = {{"i1", 1, 0},   {"i8", 1, 0},  {"i16", 2, 0},  {"i32", 4, 0},  {"i64", 8, 0},
             {"u1", 1, 1},   {"u8", 1, 1},  {"u16", 2, 1},  {"u32", 4, 1},  {"u64", 8, 1},
             {"fp32", 4, 2}, {"f32", 4, 2}, {"fp64", 8, 3}, {"bf16", 2, 4}, {"fp16", 2, 5}};
    for (unsigned i = 0; i < sizeof T / sizeof T[0]; i++) {
        if (strcmp(ty, T[i].ty) != 0)
            continue;
        if (T[i].kind <= 1) {
            /* PyArg_ParseTuple's b/h/i/L/B/H/I/K: the low bytes of the int */
            int ovf = 0;
            long long x = PY(PyLong_AsLongLongAndOverflow)(v, &ovf);
            if (ovf)
                x = (long long)PY(PyLong_AsUnsignedLongLong)(v);
            if (PY(PyErr_Occurred)())
                return -1;
            *out = (uint64_t)x;
        } else {
            double d = PY(PyFloat_AsDouble)(v);
            if (PY(PyErr_Occurred)())
                return -1;
            if (T[i].kind == 2)
                *out = fp_float_bits(d);
            else if (T[i].kind == 3)
                memcpy(out, &d, 8);
            else if (T[i].kind == 4)
                *out = fp_float_bits(d) >> 16; /* pack_bf16 */
            else
                return 0; /* fp16: PyFloat_Pack2 rounding, not checked */
        }
        *width = T[i].w;
        if (*width < 8)
            *out &= ((uint64_t)1 << (8 * *width)) - 1;
        return 0;
    }
    return -1; /* tuples, tensor descriptors: never memoized */
}

static int mismatch(struct fp_entry *e, const char *what)
{
    if (!e->dead) {
        const char *name = e->stat ? e->stat->name : "?";
        trlat_log("fast path verify: %s: the memo's %s differs from Triton's; this key goes back to Triton", name,
                  what);
    }
    return 1;
}

static int check_params(struct fp_entry *e, struct fp_call *c, PyObject *spec, PyObject *bound)
{
    _Alignas(16) unsigned char buf[FP_MAX_BLOB];
    memcpy(buf, e->blob, e->blob_len);
    if (e->kind == FP_E_VALUE)
        fp_slots_patch(buf, e->slots, e->nslots, c->want);
    if (FP_TYPE(spec) != fpy.t_list || PY(PyList_Size)(spec) != (Py_ssize_t)c->L->n)
        return mismatch(e, "argument count");
    uint32_t s = 0;
    for (unsigned j = 0; j < c->L->n; j++) {
        PyObject *sp = PY(PyList_GetItem)(spec, j);
        PyObject *ty = sp && FP_TYPE(sp) == fpy.t_tuple ? PY(PyTuple_GetItem)(sp, 0) : NULL;
        const char *t = ty && FP_TYPE(ty) == fpy.t_str ? PY(PyUnicode_AsUTF8AndSize)(ty, NULL) : NULL;
        if (!t)
            return mismatch(e, "specialization");
        if (strcmp(t, "constexpr") == 0)
            continue;
        PyObject *v = PY(PyDict_GetItemWithError)(bound, c->L->p[j].name);
        if (!v || v != c->vals[j])
            return mismatch(e, "bound arguments");
        uint64_t want;
        unsigned w;
        if (s + 2 >= e->nparams || pack(t, v, &want, &w))
            return mismatch(e, "parameter list");
        if (w && (e->size[s] != w || memcmp(buf + e->off[s], &want, w) != 0)) {
            char what[96];
            snprintf(what, sizeof what, "parameter %u (%s) bytes", s, t);
            return mismatch(e, what);
        }
        s++;
    }
    if (s + 2 != e->nparams)
        return mismatch(e, "parameter count");
    for (uint32_t i = s; i < e->nparams; i++) {
        uint64_t z = 0;
        if (e->size[i] != 8 || memcmp(buf + e->off[i], &z, 8) != 0)
            return mismatch(e, "scratch parameters");
    }
    return 0;
}

static int has_attr(const struct fp_entry *e, CUlaunchAttributeID id)
{
    for (unsigned i = 0; i < e->cfg.numAttrs; i++)
        if (e->attrs[i].id == id)
            return 1;
    return 0;
}

static int check_config(struct fp_entry *e, PyObject *kernel)
{
    if (fp_kernel_function(kernel) != (uintptr_t)e->func)
        return mismatch(e, "CUfunction");
    PyObject *md = fp_getattr(kernel, fpy.s_metadata);
    long long warps, ctas, shared, coop = 0, pdl = 0, gs = 0, ps = 0;
    int bad = !md || long_attr(md, fpy.s_num_warps, &warps) || long_attr(md, fpy.s_num_ctas, &ctas) ||
              long_attr(md, fpy.s_shared, &shared);
    if (md) { /* absent fields read as 0, as in older metadata */
        long_attr(md, fpy.s_launch_cooperative_grid, &coop);
        long_attr(md, fpy.s_launch_pdl, &pdl);
        long_attr(md, fpy.s_global_scratch_size, &gs);
        long_attr(md, fpy.s_profile_scratch_size, &ps);
    }
    trlat_py_drop(md);
    if (bad)
        return mismatch(e, "kernel metadata");
    if (e->cfg.blockDimX != (unsigned)(32 * warps) || e->cfg.blockDimY != 1 || e->cfg.blockDimZ != 1)
        return mismatch(e, "block");
    if (e->cfg.sharedMemBytes != (unsigned)shared)
        return mismatch(e, "shared memory");
    if (e->num_ctas != ctas || has_attr(e, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) != (ctas != 1))
        return mismatch(e, "cluster");
    if (has_attr(e, CU_LAUNCH_ATTRIBUTE_COOPERATIVE) != (coop != 0))
        return mismatch(e, "cooperative attribute");
    if (has_attr(e, CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) != (pdl != 0))
        return mismatch(e, "PDL attribute");
    if (gs > 0 || ps > 0)
        return mismatch(e, "scratch size");
    return 0;
}

int fp_verify(struct fp_entry *e, struct fp_call *c)
{
    struct fp_layout *L = c->L;
    int r = 1;
    PyObject *kw = PY(PyDict_New)(), *args = PY(PyTuple_New)(c->npos), *res = NULL, *key = NULL;
    if (!kw || !args)
        goto out;
    for (Py_ssize_t i = 0; i < c->npos; i++) {
        PY(Py_IncRef)(c->pos[i]);
        PY(PyTuple_SetItem)(args, i, c->pos[i]);
    }
    for (unsigned i = 0; i < c->nkw; i++)
        if (PY(PyDict_SetItem)(kw, c->kwn[i], c->kwv[i]) < 0)
            goto out;
    /* run(): kwargs["debug"] = kwargs.get("debug", self.debug) or knobs.runtime.debug */
    PyObject *d = PY(PyDict_GetItemWithError)(kw, fpy.s_debug);
    if (!d)
        d = L->jdebug;
    int t = PY(PyObject_IsTrue)(d);
    if (t < 0 || PY(PyDict_SetItem)(kw, fpy.s_debug, t ? d : fp_knob_debug()) < 0 ||
        PY(PyDict_SetItem)(kw, fpy.s_instrumentation_mode, fp_knob_instr()) < 0)
        goto out;
    PyObject *dc = PY(PyDict_GetItemWithError)(L->dcaches, c->device_obj);
    if (!dc || FP_TYPE(dc) != fpy.t_tuple || PY(PyTuple_Size)(dc) < 5) {
        r = mismatch(e, "device cache");
        goto out;
    }
    PyObject *kcache = PY(PyTuple_GetItem)(dc, 0), *kkcache = PY(PyTuple_GetItem)(dc, 1),
             *binder = PY(PyTuple_GetItem)(dc, 4);
    res = PY(PyObject_Call)(binder, args, kw);
    if (!res || FP_TYPE(res) != fpy.t_tuple || PY(PyTuple_Size)(res) != 3) {
        r = mismatch(e, "binding");
        goto out;
    }
    PyObject *bound = PY(PyTuple_GetItem)(res, 0), *spec = PY(PyTuple_GetItem)(res, 1),
             *opts = PY(PyTuple_GetItem)(res, 2);
    PyObject *cargs[3] = {kkcache, spec, opts};
    key = PY(PyObject_Vectorcall)(fpy.compute_cache_key, cargs, 3, NULL);
    PyObject *kernel = key ? PY(PyDict_GetItemWithError)(kcache, key) : NULL;
    if (!kernel || kernel != e->kernel) {
        r = mismatch(e, "kernel (Triton's cache has another for this call)");
        goto out;
    }
    if (FP_TYPE(bound) != fpy.t_dict) {
        r = mismatch(e, "bound arguments");
        goto out;
    }
    r = check_params(e, c, spec, bound) || check_config(e, kernel);
out:
    PY(PyErr_Clear)();
    trlat_py_drop(kw);
    trlat_py_drop(args);
    trlat_py_drop(res);
    trlat_py_drop(key);
    return r;
}
