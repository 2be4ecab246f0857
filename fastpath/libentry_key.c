/* FlagGems' LibEntry.run in C (libentry.c): the call's arguments bound to
 * the function's parameters, and LibEntry.key's items for them, read as
 * run() and key() read them (hasattr, dtype, data_ptr(), a
 * TensorDescriptor's fields). */
#include "fastpath/libentry.h"

#include <string.h>

/* hasattr(v, name): 1, 0, or -1 when the lookup raised something else
 * (hasattr raises it: the original runs and raises). Through the lookup
 * hasattr itself makes: a missing attribute (an int's data_ptr, on most
 * calls) costs no exception. */
static int has(PyObject *v, PyObject *name, PyObject **out)
{
    PyObject *found = NULL;
    int r = le_cls.lookup(v, name, &found);
    if (r > 0 && out)
        *out = found;
    else if (r > 0)
        PY(Py_DecRef)(found);
    return r < 0 ? -1 : r;
}

/* The built-in types key() meets most (exact ints, floats, bools, None,
 * strs, tuples), to which no program can add an attribute or give
 * another name. */
static int builtin_scalar(PyObject *v)
{
    void *t = FP_TYPE(v);
    return t == fpy.t_long || t == fpy.t_float || t == fpy.t_bool || v == fpy.o_none || t == fpy.t_str ||
           t == fpy.t_tuple;
}

/* Whether hasattr(x, "data_ptr") holds for every x of type t: t's
 * attribute lookup is object's and its MRO's first data_ptr is a function
 * or a C method descriptor, neither of which sets or fails to bind, so the
 * lookup finds it or an instance's own value and never raises (a tensor,
 * FlagGems' StridedBuffer). Kept per type while the types are unchanged
 * (3.12+; looked up on every call without type watchers). */
static int always_has_data_ptr(void *t)
{
    static struct fp_typeans seen;
    int a = fp_typeans_get(&seen, t);
    if (a >= 0)
        return a;
    /* the MRO's first data_ptr (borrowed) */
    PyObject *f =
        PY(_PyType_Lookup) && fp_generic_lookup(t) ? PY(_PyType_Lookup)((PyObject *)t, le_cls.s_data_ptr) : NULL;
    a = f && ((fpy.t_function && FP_TYPE(f) == fpy.t_function) || (fpy.t_methdescr && FP_TYPE(f) == fpy.t_methdescr));
    return fp_typeans_put(&seen, t, a);
}

/* hasattr(v, "data_ptr"): never for those built-in types, always for a
 * type that always has it; else asked. */
static int has_data_ptr(PyObject *v)
{
    if (builtin_scalar(v))
        return 0;
    if (always_has_data_ptr(FP_TYPE(v)) > 0)
        return 1;
    return has(v, le_cls.s_data_ptr, NULL);
}

PyObject *le_pair(PyObject *a, PyObject *b) /* steals both */
{
    PyObject *t = a && b ? PY(PyTuple_New)(2) : NULL;
    if (!t) {
        trlat_py_drop(a);
        trlat_py_drop(b);
        return NULL;
    }
    PY(PyTuple_SetItem)(t, 0, a);
    PY(PyTuple_SetItem)(t, 1, b);
    return t;
}

/* tuple(v.name) if hasattr(v, name) else None; NULL on an error. */
static PyObject *field_tuple(PyObject *v, PyObject *name, int as_tuple)
{
    PyObject *a = NULL;
    int h = has(v, name, &a);
    if (h < 0)
        return NULL;
    if (!h) {
        PY(Py_IncRef)(fpy.o_none);
        return fpy.o_none;
    }
    if (!as_tuple)
        return a;
    PyObject *t = PY(PySequence_Tuple)(a);
    PY(Py_DecRef)(a);
    return t;
}

/* run()'s hashable_arg: ("TensorDescriptor", shape, strides, block_shape,
 * padding) for an object of a class named so, else v itself (new references). */
static int is_td_type(void *t)
{
    /* the types of most arguments (tensors, ints, StridedBuffer, Triton's
     * TensorDescriptor) are few, and a class's __name__ can be assigned:
     * the answers are kept while the types are unchanged */
    static struct fp_typeans seen;
    int td = fp_typeans_get(&seen, t);
    if (td >= 0)
        return td;
    PyObject *n = fp_getattr((PyObject *)t, fpy.s___name__);
    td = n && FP_TYPE(n) == fpy.t_str && PY(PyUnicode_Compare)(n, le_cls.s_td) == 0;
    trlat_py_drop(n);
    PY(PyErr_Clear)();
    return fp_typeans_put(&seen, t, td);
}

static PyObject *hashable(PyObject *v)
{
    if (builtin_scalar(v) || !is_td_type(FP_TYPE(v))) {
        PY(Py_IncRef)(v);
        return v;
    }
    PyObject *t = PY(PyTuple_New)(5);
    if (!t)
        return NULL;
    PY(Py_IncRef)(le_cls.s_td);
    PY(PyTuple_SetItem)(t, 0, le_cls.s_td);
    PyObject *names[4] = {le_cls.s_shape, le_cls.s_strides, le_cls.s_block_shape, le_cls.s_padding};
    for (int i = 0; i < 4; i++) {
        PyObject *f = field_tuple(v, names[i], i < 3);
        if (!f) {
            PY(Py_DecRef)(t);
            return NULL;
        }
        PY(PyTuple_SetItem)(t, i + 1, f);
    }
    return t;
}

/* key()'s spec_arg: (arg.dtype, arg.data_ptr() % divisibility == 0) or
 * (type(arg), arg), as a part (new references); -1 when not modelled. */
static int spec_part(PyObject *v, long div, struct fp_le_part *out)
{
    int h = has_data_ptr(v);
    if (h < 0)
        return -1;
    if (!h) {
        PY(Py_IncRef)((PyObject *)FP_TYPE(v));
        PY(Py_IncRef)(v);
        out->a = (PyObject *)FP_TYPE(v);
        out->b = v;
        return 0;
    }
    PyObject *dt = PY(PyObject_GetAttr)(v, le_cls.s_dtype);
    if (!dt)
        return -1;
    int own = 0; /* a tensor's reads are the launch's own (fp_read_tensor) */
    PyObject *p = fp_data_ptr_read(v, fp_is_tensor(v) ? NULL : &own);
    if (p && own)
        fp_ptrreads_keep(v, p);
    uint64_t bits;
    int u;
    if (!p || FP_TYPE(p) != fpy.t_long || fp_read_int(p, &bits, &u) || div <= 0) {
        trlat_py_drop(p);
        PY(Py_DecRef)(dt);
        return -1; /* not an int this models: the original runs */
    }
    PY(Py_DecRef)(p);
    /* Python's % has the sign of the divisor; a zero remainder is the same either way */
    int zero = u ? bits % (uint64_t)div == 0 : (int64_t)bits % div == 0;
    out->a = dt;
    out->b = zero ? fpy.o_true : fpy.o_false;
    PY(Py_IncRef)(out->b);
    return 0;
}

/* key()'s dns_arg: arg.dtype, type(arg), or "i32" / "u64" / "i64". */
static PyObject *dns_key(PyObject *v)
{
    int h = has_data_ptr(v);
    if (h < 0)
        return NULL;
    if (h)
        return PY(PyObject_GetAttr)(v, le_cls.s_dtype);
    void *t = FP_TYPE(v);
    if (t != fpy.t_long && t != fpy.t_bool && !PY(PyType_IsSubtype)((PyObject *)t, (PyObject *)fpy.t_long)) {
        PY(Py_IncRef)((PyObject *)t);
        return (PyObject *)t;
    }
    uint64_t bits;
    int u;
    PyObject *s = le_cls.s_i64; /* past uint64 or below int64 */
    if (fp_read_int(v, &bits, &u) == 0)
        s = u ? le_cls.s_u64 : ((int64_t)bits >= INT32_MIN && (int64_t)bits <= INT32_MAX) ? le_cls.s_i32 : le_cls.s_i64;
    PY(Py_IncRef)(s);
    return s;
}

/* c->kw for the call's keywords: the last call's map when its keyword
 * names are the very same string objects (most calls: a call site's names
 * are its code's constants), else found by comparing; -1 when there are
 * too many. */
int le_bind_keywords(struct le *E, struct lcall *c)
{
    const struct fp_layout *L = E->L;
    Py_ssize_t nk = trlat_py_size(c->kwn);
    if (nk < 0 || nk > FP_MAX_KW)
        return -1;
    int same = (Py_ssize_t)E->nkwseen == nk && E->nkwseen;
    for (Py_ssize_t i = 0; same && i < nk; i++)
        same = PY(PyTuple_GetItem)(c->kwn, i) == E->kwseen[i];
    if (!same) {
        for (unsigned i = 0; i < E->nkwseen; i++)
            PY(Py_DecRef)(E->kwseen[i]);
        for (unsigned j = 0; j < L->n; j++) {
            E->kwmap[j] = -1;
            for (Py_ssize_t i = 0; i < nk && E->kwmap[j] < 0; i++) {
                PyObject *k = PY(PyTuple_GetItem)(c->kwn, i);
                if (k == L->p[j].name || PY(PyUnicode_Compare)(k, L->p[j].name) == 0)
                    E->kwmap[j] = (int8_t)i;
            }
        }
        PY(PyErr_Clear)();
        for (Py_ssize_t i = 0; i < nk; i++)
            E->kwseen[i] = fp_hold(PY(PyTuple_GetItem)(c->kwn, i));
        E->nkwseen = (unsigned)nk;
    }
    memcpy(c->kw, E->kwmap, L->n * sizeof c->kw[0]);
    return 0;
}

/* The call's value of parameter j: positional, keyword or default (NULL: none). */
PyObject *le_value_of(const struct le *E, const struct lcall *c, unsigned j)
{
    if ((Py_ssize_t)j < c->npos)
        return c->pos[j];
    return c->kw[j] >= 0 ? c->kwv[c->kw[j]] : E->L->p[j].dflt;
}

void le_parts_drop(struct fp_le_part *p, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        PY(Py_DecRef)(p[i].a);
        trlat_py_drop(p[i].b);
    }
}

/* key()'s items for the call, in its order (specialized, not, constexprs):
 * new references in out[0..*n); -1 when it is not the hit path modelled. */
int le_entry_parts(const struct le *E, PyObject *d, const struct lcall *c, struct fp_le_part *out, unsigned *n)
{
    PyObject *const *pos = c->pos;
    Py_ssize_t npos = c->npos;
    const struct fp_layout *L = E->L;
    PyObject *divo = fp_dget(d, le_cls.s_div);
    long div = divo && FP_TYPE(divo) == fpy.t_long ? PY(PyLong_AsLong)(divo) : -1;
    struct fp_le_part parts[3][FP_MAX_ARGS];
    unsigned np[3] = {0, 0, 0};
    int ok = div > 0;
    for (unsigned j = 0; ok && j < L->n; j++) {
        PyObject *v = (Py_ssize_t)j < npos ? hashable(pos[j]) : NULL;
        int kind;
        if ((Py_ssize_t)j < npos) {
            kind = E->kind[j];
        } else {
            PyObject *val = le_value_of(E, c, j);
            if (!val)
                continue; /* no default: not in the key */
            PY(Py_IncRef)(val);
            v = val;
            kind = L->p[j].constexpr_ ? K_CONST : L->p[j].dns ? K_DNS : K_SPEC;
        }
        if (!v) {
            ok = 0;
            break;
        }
        struct fp_le_part *k = &parts[kind][np[kind]];
        k->b = NULL;
        if (kind == K_SPEC)
            ok = spec_part(v, div, k) == 0;
        else
            ok = (k->a = kind == K_DNS ? dns_key(v) : fp_hold(v)) != NULL;
        PY(Py_DecRef)(v);
        np[kind] += ok;
    }
    *n = 0;
    for (int p = 0; p < 3; p++)
        for (unsigned i = 0; i < np[p]; i++)
            out[(*n)++] = parts[p][i];
    if (!ok) {
        le_parts_drop(out, *n);
        return -1;
    }
    return 0;
}

/* tuple(parts): the key run() looks up (new reference). */
PyObject *le_key_tuple(const struct fp_le_part *p, unsigned n)
{
    PyObject *key = PY(PyTuple_New)(n);
    for (unsigned i = 0; key && i < n; i++) {
        PyObject *item = p[i].a;
        PY(Py_IncRef)(p[i].a);
        if (p[i].b) {
            PY(Py_IncRef)(p[i].b);
            item = le_pair(p[i].a, p[i].b);
        }
        if (!item) {
            PY(Py_DecRef)(key);
            return NULL;
        }
        PY(PyTuple_SetItem)(key, i, item);
    }
    return key;
}
