/* The layout of a JITFunction, read once from its KernelParam list (jit.py
 * JITFunction.__init__ builds self.params; create_function_from_signature
 * turns the same flags into the binder): each parameter's name, default,
 * constexpr-ness, do_not_specialize, do_not_specialize_on_alignment and
 * whether it has a type annotation (then Triton's type comes from the
 * annotation: the memo keys an int annotated i32, i64 or u64 by Triton's
 * class of it and any other annotated value exactly). Kept in a fixed table: the
 * layout holds its function, so the table never meets a reused address. */
#include "fastpath/fp_py.h"
#include "interpose/log.h"

#include <stdlib.h>

#define FP_LAYOUTS 512
static struct fp_layout *table[FP_LAYOUTS];
static unsigned nlayouts;

static int truthy(PyObject *o, PyObject *name, int *out)
{
    PyObject *v = fp_getattr(o, name);
    if (!v)
        return -1;
    int t = PY(PyObject_IsTrue)(v);
    PY(Py_DecRef)(v);
    if (t < 0) {
        PY(PyErr_Clear)();
        return -1;
    }
    *out = t;
    return 0;
}

static int is_named(PyObject *s, const char *text)
{
    int r = PY(PyUnicode_CompareWithASCIIString)(s, text);
    if (PY(PyErr_Occurred)())
        PY(PyErr_Clear)();
    return r == 0;
}

/* FP_R_NONE, or the reason every call of this function falls back for. */
static int read_params(struct fp_layout *L)
{
    PyObject *ps = L->params_obj;
    if (!ps || FP_TYPE(ps) != fpy.t_list)
        return FP_R_KNOBS;
    Py_ssize_t n = PY(PyList_Size)(ps);
    if (n < 0 || n > FP_MAX_ARGS)
        return FP_R_ARGTYPE;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *kp = PY(PyList_GetItem)(ps, i);
        struct fp_param *p = &L->p[i];
        PyObject *name = fp_getattr(kp, fpy.s_name);
        if (!name || FP_TYPE(name) != fpy.t_str)
            return FP_R_KNOBS;
        p->name = name;
        L->n = (unsigned)i + 1; /* what the layout holds, for release */
        /* run() writes kwargs["debug"] and ["instrumentation_mode"] before
         * binding: a parameter of that name would be bound to them. */
        if (is_named(name, "debug") || is_named(name, "instrumentation_mode"))
            return FP_R_BINDING;
        int ce, dns, dnsa;
        if (truthy(kp, fpy.s_is_constexpr, &ce) || truthy(kp, fpy.s_dns, &dns) || truthy(kp, fpy.s_dnsa, &dnsa))
            return FP_R_KNOBS;
        p->constexpr_ = (uint8_t)ce;
        p->dns = (uint8_t)dns;
        p->dnsa = (uint8_t)dnsa;
        PyObject *ann = fp_getattr(kp, fpy.s_annotation_type);
        if (!ann)
            return FP_R_KNOBS;
        int has_ann = PY(PyObject_IsTrue)(ann);
        PY(Py_DecRef)(ann);
        if (has_ann < 0) {
            PY(PyErr_Clear)();
            return FP_R_KNOBS;
        }
        p->annotated = (uint8_t)has_ann;
        p->ann_int = 0;
        if (has_ann && (ann = fp_getattr(kp, fpy.s_annotation_type))) {
            p->ann_int = FP_TYPE(ann) != fpy.t_str ? 0
                         : is_named(ann, "i32")    ? FP_S_I32
                         : is_named(ann, "i64")    ? FP_S_I64
                         : is_named(ann, "u64")    ? FP_S_U64
                                                   : 0;
            PY(Py_DecRef)(ann);
        } else if (has_ann) {
            PY(PyErr_Clear)();
        }
        /* the binder is `def dynamic_func(p0, p1=default_p1, ..., **options)`:
         * every parameter positional-or-keyword (inspect kind 1) */
        PyObject *ip = fp_getattr(kp, fpy.s__param);
        PyObject *kind = ip ? fp_getattr(ip, fpy.s_kind) : NULL;
        PyObject *dflt = ip ? fp_getattr(ip, fpy.s_default) : NULL;
        long k = kind ? PY(PyLong_AsLong)(kind) : -1;
        if (k == -1 && PY(PyErr_Occurred)())
            PY(PyErr_Clear)();
        if (ip)
            PY(Py_DecRef)(ip);
        if (kind)
            PY(Py_DecRef)(kind);
        if (k != 1 || !dflt) {
            if (dflt)
                PY(Py_DecRef)(dflt);
            return FP_R_BINDING;
        }
        if (dflt == fpy.o_empty)
            PY(Py_DecRef)(dflt);
        else
            p->dflt = dflt;
    }
    L->n = (unsigned)n;
    return 0;
}

static struct fp_layout *make(PyObject *jitfn)
{
    struct fp_layout *L = calloc(1, sizeof *L);
    if (!L)
        return NULL;
    PY(Py_IncRef)(jitfn);
    L->jitfn = jitfn;
    L->id = fpy.next_layout_id++;
    PyObject *nm = fp_getattr(jitfn, fpy.s___name__);
    const char *name = nm && FP_TYPE(nm) == fpy.t_str ? PY(PyUnicode_AsUTF8AndSize)(nm, NULL) : NULL;
    if (!name)
        PY(PyErr_Clear)();
    /* Triton's kernel name is the function's __name__ (compiler.py ASTSource) */
    L->stat = fp_stat_get(name ? name : "<unnamed jit function>");
    if (nm)
        PY(Py_DecRef)(nm);
    if (FP_TYPE(jitfn) != (void *)fpy.jit_cls) {
        L->bad = FP_R_CLASS; /* a subclass may run differently */
        return L;
    }
    L->params_obj = fp_getattr(jitfn, fpy.s_params);
    L->bad = read_params(L);
    if (!L->bad)
        fp_last_init(L);
    PyObject *d = fp_getattr(jitfn, fpy.s___dict__);
    fp_watch_dict(d);
    if (d)
        PY(Py_DecRef)(d);
    return L;
}

struct fp_layout *fp_layout_get(PyObject *jitfn)
{
    uint32_t h = (uint32_t)((((uintptr_t)jitfn) >> 4) * 0x9e3779b1u) % FP_LAYOUTS;
    for (unsigned i = 0; i < FP_LAYOUTS; i++) {
        struct fp_layout *L = table[(h + i) % FP_LAYOUTS];
        if (!L)
            break;
        if (L->jitfn == jitfn)
            return L;
    }
    if (nlayouts >= FP_LAYOUTS * 3 / 4) {
        static atomic_flag once;
        trlat_log_once(&once, "fast path: more than %d distinct JITFunctions; the rest run through Triton",
                       FP_LAYOUTS * 3 / 4);
        return NULL;
    }
    struct fp_layout *L = make(jitfn);
    if (!L)
        return NULL;
    for (unsigned i = 0;; i++)
        if (!table[(h + i) % FP_LAYOUTS]) {
            table[(h + i) % FP_LAYOUTS] = L;
            break;
        }
    nlayouts++;
    return L;
}

int fp_layout_kwindex(struct fp_layout *L, PyObject *name)
{
    for (unsigned i = 0; i < L->nkwc; i++)
        if (L->kwc[i].name == name)
            return L->kwc[i].idx;
    int idx = -1;
    for (unsigned j = 0; j < L->n && idx < 0; j++) {
        if (L->p[j].name == name) {
            idx = (int)j;
        } else {
            int r = PY(PyUnicode_Compare)(L->p[j].name, name);
            if (r == -1 && PY(PyErr_Occurred)())
                PY(PyErr_Clear)();
            if (r == 0)
                idx = (int)j;
        }
    }
    /* Strings are immutable and the cache holds the name: its address keeps
     * meaning this text. */
    if (L->nkwc < FP_KWCACHE) {
        PY(Py_IncRef)(name);
        L->kwc[L->nkwc].name = name;
        L->kwc[L->nkwc].idx = idx;
        L->nkwc++;
    }
    return idx;
}
