/* The key's Python half: one call's arguments read as Triton 3.6 reads
 * them, turned into key bytes (fp.h's classes) and the parameter values a
 * value-mode replay writes into its slots. What Triton does, by file:
 *   jit.py run(): kwargs["debug"] = kwargs.get("debug", self.debug) or
 *     knobs.runtime.debug; kwargs["instrumentation_mode"] = knobs...; the
 *     binder binds the rest; options = the keywords that are not
 *     parameters, in call order; key = str(specialization) + str(options).
 *   jit.py create_function_from_signature(): constexpr parameters key by
 *     value; annotated ones take the annotation as type; others go through
 *     specialize_impl(arg, is_const, specialize=not do_not_specialize,
 *     align=not do_not_specialize_on_alignment).
 *   specialize.cc specialize_arg(): dispatch on the exact type: int, bool,
 *     float, tuple, torch.Tensor (a tensor subclass goes through its
 *     data_ptr attribute), None -> ("constexpr", None).
 *   A constexpr parameter keys by the value's str(): a triton.language.dtype
 *   (tl.float16, what Liger passes for its kernels' dtype parameters) keys
 *   here by identity, the object held by the entry so that its address
 *   stays its own: the same object gives the same str; another object of
 *   equal value is a miss, never a wrong hit.
 * Anything else (tuples, tensor descriptors, other constexpr objects,
 * functions, other numbers) is a fallback: the key could not describe it. */
#include "fastpath/fp_py.h"
#include "fastpath/phases.h"

static int is_name(PyObject *s, PyObject *interned)
{
    if (s == interned)
        return 1;
    int r = PY(PyUnicode_Compare)(s, interned);
    if (r == -1 && PY(PyErr_Occurred)())
        PY(PyErr_Clear)();
    return r == 0;
}

/* The fields every way of describing a call starts from. */
static inline void call_init(struct fp_call *c, PyObject *jitfn, PyObject *grid, int getitem)
{
    c->jitfn = jitfn;
    c->L = NULL;
    c->device_obj = NULL;
    c->grid = grid;
    c->warmup = 0;
    c->getitem = getitem;
    c->nkw = 0;
    c->shortcut = NULL;
}

int fp_call_from_vector(struct fp_call *c, PyObject *jitfn, PyObject *grid, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames)
{
    call_init(c, jitfn, grid, 1);
    c->pos = args;
    c->npos = nargs;
    Py_ssize_t nk = kwnames ? PY(PyTuple_Size)(kwnames) : 0;
    if (nk > FP_MAX_KW)
        return -1;
    for (Py_ssize_t i = 0; i < nk; i++) {
        c->kwn[i] = PY(PyTuple_GetItem)(kwnames, i);
        c->kwv[i] = args[nargs + i];
    }
    c->nkw = (unsigned)nk;
    return 0;
}

int fp_call_from_dict(struct fp_call *c, PyObject *jitfn, PyObject *args, PyObject *kwargs)
{
    call_init(c, jitfn, NULL, 0);
    Py_ssize_t n = args ? PY(PyTuple_Size)(args) : 0;
    if (n < 0 || n > FP_MAX_ARGS) {
        PY(PyErr_Clear)();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        c->posbuf[i] = PY(PyTuple_GetItem)(args, i);
    c->pos = c->posbuf;
    c->npos = n;
    Py_ssize_t it = 0;
    PyObject *k, *v;
    while (kwargs && PY(PyDict_Next)(kwargs, &it, &k, &v)) {
        if (FP_TYPE(k) != fpy.t_str)
            return -1;
        if (is_name(k, fpy.s_grid)) {
            c->grid = v;
        } else if (is_name(k, fpy.s_warmup)) {
            int t = PY(PyObject_IsTrue)(v);
            if (t < 0) {
                PY(PyErr_Clear)();
                return -1;
            }
            c->warmup = t;
        } else {
            if (c->nkw == FP_MAX_KW)
                return -1;
            c->kwn[c->nkw] = k;
            c->kwv[c->nkw++] = v;
        }
    }
    return 0;
}

void fp_call_release(struct fp_call *c)
{
    if (c->device_obj) {
        PY(Py_DecRef)(c->device_obj);
        c->device_obj = NULL;
    }
}

/* An exact int as Triton's specialization sees it: its bits and whether it
 * needs uint64 (past int64); -1 where Python cannot convert it (Triton
 * raises OverflowError). */
int fp_read_int(PyObject *v, uint64_t *bits, int *is_u64)
{
    int ovf = 0;
    long long x;
    if (!fp_small_int(v, &x))
        x = PY(PyLong_AsLongLongAndOverflow)(v, &ovf);
    *is_u64 = ovf;
    if (ovf)
        *bits = PY(PyLong_AsUnsignedLongLong)(v);
    else
        *bits = (uint64_t)x;
    if ((ovf || x == -1) && PY(PyErr_Occurred)()) {
        PY(PyErr_Clear)();
        return -1;
    }
    return 0;
}

/* A value keyed exactly: constexprs, options, annotated parameters. */
int fp_key_scalar(struct fp_key *k, PyObject *v)
{
    void *t = FP_TYPE(v);
    if (v == fpy.o_none) {
        fp_key_u64(k, FP_T_NONE);
    } else if (t == fpy.t_bool) {
        fp_key_u64(k, FP_T_BOOL | (uint64_t)(v == fpy.o_true) << 8);
    } else if (t == fpy.t_long) {
        uint64_t bits;
        int is_u64;
        if (fp_read_int(v, &bits, &is_u64))
            return -1;
        fp_key_u64(k, is_u64 ? FP_T_UINT : FP_T_INT);
        fp_key_u64(k, bits);
    } else if (t == fpy.t_float) {
        double d = PY(PyFloat_AsDouble)(v);
        uint64_t bits;
        memcpy(&bits, &d, 8);
        fp_key_u64(k, FP_T_FLOAT);
        fp_key_u64(k, bits);
    } else if (t == fpy.t_str) {
        Py_ssize_t n;
        const char *s = PY(PyUnicode_AsUTF8AndSize)(v, &n);
        if (!s) {
            PY(PyErr_Clear)();
            return -1;
        }
        fp_key_u64(k, FP_T_STR);
        fp_key_text(k, s, (size_t)n);
    } else {
        return -1;
    }
    return 0;
}

static void add_ref(struct fp_call *c, PyObject *o, int *ok)
{
    for (unsigned i = 0; i < c->nrefs; i++)
        if (c->refs[i] == o)
            return;
    if (c->nrefs == FP_MAX_REFS)
        *ok = 0;
    else
        c->refs[c->nrefs++] = o;
}

/* torch's own getters of dtype and is_cuda (getset descriptors of
 * torch._C.TensorBase), called directly for arguments whose type is exactly
 * torch.Tensor or nn.Parameter. What PyObject_GetAttr does for them, minus
 * the lookups: the type's tp_getattro is PyObject_GenericGetAttr, which
 * calls the getter of a data descriptor found on the type before looking
 * at the instance's dict. data_ptr is a method (a non-data descriptor: an
 * instance attribute of that name would shadow it), so it is still looked
 * up on every call as x.data_ptr() does (_PyObject_GetMethod, which checks
 * the instance's dict), and only when that finds TensorBase's
 * METH_NOARGS descriptor is its C function called directly. Resolved again
 * whenever fpy.epoch changes (a type watcher on each type: a change to it
 * or a base bumps it); without watchers (before 3.12) attributes are read
 * the usual way. */
typedef PyObject *(*fp_getter)(PyObject *, void *);
struct fp_getsetdef { /* PyGetSetDef */
    const char *name;
    fp_getter get;
    void *set;
    const char *doc;
    void *closure;
};
struct fp_descr { /* PyDescr_COMMON, then the PyGetSetDef or the PyMethodDef */
    struct trlat_pyhead head;
    PyObject *d_type, *d_name, *d_qualname;
    void *d_def;
};
typedef PyObject *(*fp_noargs)(PyObject *, PyObject *);
static struct tgetters {
    uint64_t epoch;
    int ok, watched;
    fp_getter dtype, is_cuda;
    void *dtype_c, *is_cuda_c;
    PyObject *data_ptr; /* the method descriptor (held), NULL: call it the usual way */
    fp_noargs data_ptr_fn;
    int attrs_words; /* the type keeps instance attributes where fp_no_instance_attrs reads */
} tg[2];             /* torch.Tensor, nn.Parameter */
struct fp_tplain fp_tplain[2];

/* The descriptor named name found on type's MRO, of Python type dtype and
 * defined by a base of type; a new reference or NULL. */
static PyObject *descr_of(void *type, PyObject *name, void *dtype)
{
    PyObject *d = fp_getattr((PyObject *)type, name); /* a descriptor read from its class is itself */
    if (d && (FP_TYPE(d) != dtype || !((const struct fp_descr *)d)->d_def ||
              PY(PyType_IsSubtype)((PyObject *)type, ((const struct fp_descr *)d)->d_type) != 1)) {
        PY(Py_DecRef)(d);
        d = NULL;
    }
    return d;
}

static int getter_of(void *type, PyObject *name, fp_getter *get, void **closure)
{
    PyObject *d = descr_of(type, name, fpy.t_getset);
    const struct fp_getsetdef *gs = d ? ((const struct fp_descr *)d)->d_def : NULL;
    int ok = gs && gs->get;
    if (ok) {
        *get = gs->get; /* static data of torch's extension: lives as long as the process */
        *closure = gs->closure;
    }
    if (d)
        PY(Py_DecRef)(d);
    return ok;
}

static struct tgetters *getters(void *type)
{
    struct tgetters *g = &tg[type != fpy.t_tensor];
    if (g->epoch == fpy.epoch)
        return g->ok ? g : NULL;
    g->epoch = fpy.epoch;
    g->ok = 0;
    struct fp_tplain *t = &fp_tplain[g - tg]; /* current from here on, whatever the answer */
    t->epoch = fpy.epoch;
    t->plain = 0;
    if (!fpy.watchers || !fpy.t_getset || !PY(PyObject_GenericGetAttr) || !PY(PyType_GetSlot) || !PY(PyType_IsSubtype))
        return NULL;
    if (!g->watched) {
        if (PY(PyType_Watch)(fpy.type_wid, (PyObject *)type) < 0) {
            PY(PyErr_Clear)();
            return NULL; /* no events would tell a change: read attributes the usual way */
        }
        g->watched = 1;
    }
    g->ok = fp_generic_lookup(type) && getter_of(type, fpy.s_dtype, &g->dtype, &g->dtype_c) &&
            getter_of(type, fpy.s_is_cuda, &g->is_cuda, &g->is_cuda_c);
    if (g->data_ptr)
        PY(Py_DecRef)(g->data_ptr);
    g->data_ptr = NULL;
    g->attrs_words = 0;
    PyObject *d =
        g->ok && fpy.t_methdescr && PY(_PyObject_GetMethod) ? descr_of(type, fpy.s_data_ptr, fpy.t_methdescr) : NULL;
    const struct trlat_pymethoddef *md = d ? ((const struct fp_descr *)d)->d_def : NULL;
    if (md && md->ml_meth && md->ml_flags == TRLAT_METH_NOARGS) {
        g->data_ptr = d;
        g->data_ptr_fn = (fp_noargs)md->ml_meth;
        unsigned long fl = fpy.idict ? PY(PyType_GetFlags)((PyObject *)type) : 0;
        g->attrs_words = (fl & (1UL << 4)) /* Py_TPFLAGS_MANAGED_DICT */ &&
                         !(fpy.inline_values_flag && (fl & (1UL << 2))) /* Py_TPFLAGS_INLINE_VALUES */;
    } else if (d) {
        PY(Py_DecRef)(d);
    }
    t->plain = g->ok && g->data_ptr && g->attrs_words;
    return g->ok ? g : NULL;
}

/* fp_read_tensor past its common case: v.data_ptr looked up (every 256th
 * read of a type whose instances keep no attributes, and every read of
 * the others), or torch's getters asked. plain: the caller found data_ptr
 * unshadowed without asking (its fields read failed). */
static int read_tensor_slow(struct fp_call *c, PyObject *v, struct tgetters *g, int plain, PyObject **dtype, int *cuda,
                            uint64_t *ptr)
{
    PyObject *m = NULL;
    int unbound = 0;
    if (g && g->data_ptr && !plain) {
        /* v.data_ptr is TensorBase.data_ptr unless the instance shadows it */
        int none = g->attrs_words && fp_no_instance_attrs(v); /* 0 once fpy.idict is */
        unbound = PY(_PyObject_GetMethod)(v, fpy.s_data_ptr, &m);
        if (!m)
            goto fail;
        plain = unbound == 1 && m == g->data_ptr;
        if (none && !plain)
            fpy.idict = 0; /* the words said no attributes, CPython found one: ask it from now on */
        if (plain && fp_tensor_direct(v, &c->modes, dtype, cuda, ptr) == 0) {
            trlat_py_drop(m);
            return 0;
        }
    }
    PyObject *p = NULL;
    c->modes = -1; /* the getters may run Python (a mode, a shadowing data_ptr) */
    PyObject *dt = g ? g->dtype(v, g->dtype_c) : PY(PyObject_GetAttr)(v, fpy.s_dtype);
    if (!dt)
        goto fail;
    PY(Py_DecRef)(dt);
    *dtype = dt;
    PyObject *ic = g ? g->is_cuda(v, g->is_cuda_c) : PY(PyObject_GetAttr)(v, fpy.s_is_cuda);
    if (!ic)
        goto fail;
    PY(Py_DecRef)(ic);
    if (ic != fpy.o_true && ic != fpy.o_false) {
        trlat_py_drop(m);
        return -1;
    }
    *cuda = ic == fpy.o_true;
    if (plain) {
        p = g->data_ptr_fn(v, NULL);
    } else if (m) {
        p = PY(PyObject_Vectorcall)(m, unbound == 1 ? &v : NULL, unbound == 1 ? 1 : 0, NULL);
    } else {
        PyObject *argv[2] = {NULL, v};
        p = PY(PyObject_VectorcallMethod)(fpy.s_data_ptr, argv + 1, 1 | TRLAT_PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    }
    if (!p)
        goto fail;
    /* addresses fit an int64: the signed conversion skips the byte-array path */
    int ovf = 0;
    long long sv = PY(PyLong_AsLongLongAndOverflow)(p, &ovf);
    *ptr = (uint64_t)sv;
    if (ovf || sv < 0) {
        PY(PyErr_Clear)();
        *ptr = PY(PyLong_AsUnsignedLongLong)(p);
    }
    PY(Py_DecRef)(p);
    if (PY(PyErr_Occurred)())
        goto fail;
    if (plain)
        fp_tensor_direct_check(v, *dtype, *cuda, *ptr);
    trlat_py_drop(m);
    return 0;
fail:
    trlat_py_drop(m);
    PY(PyErr_Clear)();
    return -1;
}

/* dtype (borrowed: torch's dtypes live as long as torch), is_cuda, data_ptr():
 * from torch's structs where tensor_direct.c can, else through the getters
 * (whose answers that reader learns from). fp_read_tensor (fp_py.h) takes
 * the common case inline and comes here for the rest. */
int fp_read_tensor_slow(struct fp_call *c, PyObject *v, int plain, PyObject **dtype, int *cuda, uint64_t *ptr)
{
    struct fp_tplain *t = &fp_tplain[FP_TYPE(v) != fpy.t_tensor];
    int stale = t->epoch != fpy.epoch; /* the test could not tell */
    struct tgetters *g = getters(FP_TYPE(v));
    if (stale) { /* its answer for this epoch (getters made t current), this read counted once */
        plain = fp_tplain_test(t, v);
        if (plain && fp_tensor_direct(v, &c->modes, dtype, cuda, ptr) == 0)
            return 0;
    }
    return read_tensor_slow(c, v, g, plain, dtype, cuda, ptr);
}

int fp_read_ptrobj(PyObject *v, PyObject **dtype, uint64_t *ptr)
{
    static struct fp_typeans only_object; /* whose only base is object (its MRO, kept while unchanged) */
    int plain = fp_typeans_get(&only_object, FP_TYPE(v));
    if (plain < 0) {
        PyObject *mro = PY(PyObject_GetAttr)((PyObject *)FP_TYPE(v), fpy.s___mro__);
        plain =
            fp_typeans_put(&only_object, FP_TYPE(v), mro && FP_TYPE(mro) == fpy.t_tuple && PY(PyTuple_Size)(mro) == 2);
        trlat_py_drop(mro);
        PY(PyErr_Clear)();
    }
    PyObject *dt = NULL, *p = NULL;
    if (plain && dtype)
        dt = PY(PyObject_GetAttr)(v, fpy.s_dtype);
    else if (plain)
        p = fp_ptrreads_take(v); /* a launcher's read that LibEntry's key made */
    if (plain && (dt || !dtype) && !p)
        p = fp_data_ptr(v);
    /* as PyLong_AsUnsignedLongLong, Triton's getPointer's read: an exact
     * int in [0, 2**64), else it raises */
    uint64_t bits = 0;
    int u = 0;
    int bad = !p || FP_TYPE(p) != fpy.t_long || fp_read_int(p, &bits, &u) || (!u && (int64_t)bits < 0);
    *ptr = bad ? 0 : bits;
    trlat_py_drop(p);
    if (bad) {
        trlat_py_drop(dt);
        PY(PyErr_Clear)();
        return FP_R_ARGTYPE;
    }
    if (*ptr && !fp_devptr_known(*ptr)) {
        trlat_py_drop(dt);
        return FP_R_NOTDEVICE;
    }
    if (dtype)
        *dtype = dt;
    else
        trlat_py_drop(dt);
    return 0;
}

int fp_int_class(const struct fp_param *P, PyObject *v, uint8_t *spec, uint8_t *d16, uint64_t *val)
{
    uint64_t bits;
    int is_u64, div16;
    if (fp_read_int(v, &bits, &is_u64))
        return -1;
    *spec = (uint8_t)fp_int_spec(is_u64, bits, !P->dns, !P->dnsa, &div16);
    *d16 = (uint8_t)div16;
    *val = *spec == FP_S_I32 ? (uint64_t)(uint32_t)(int32_t)(int64_t)bits : bits;
    return 0;
}

/* An exact int for a parameter annotated i32, i64 or u64 (P->ann_int;
 * `x: int` is i32): Triton keys it ("<annotation>",) +
 * specialize_impl(...)[1:], the class alone (1 when specialized, else the
 * 16-divisibility), and its launcher packs it as the annotation's type.
 * *flags: div16, or 2 for a specialized 1 (a parameter still, unlike an
 * unannotated 1). -1 when v is not an int that type holds: then it is
 * keyed exactly, as any other annotated value. */
int fp_annint_class(const struct fp_param *P, PyObject *v, uint8_t *flags, uint64_t *val)
{
    uint64_t bits;
    int is_u64, div16;
    if (FP_TYPE(v) != fpy.t_long || fp_read_int(v, &bits, &is_u64))
        return -1;
    int64_t s = (int64_t)bits;
    if (P->ann_int == FP_S_I32   ? is_u64 || s < INT32_MIN || s > INT32_MAX
        : P->ann_int == FP_S_I64 ? is_u64
        : P->ann_int == FP_S_U64 ? !is_u64 && s < 0
                                 : 1)
        return -1;
    *flags = fp_int_spec(is_u64, bits, !P->dns, !P->dnsa, &div16) == FP_S_CONST ? 2 : (uint8_t)div16;
    *val = P->ann_int == FP_S_I32 ? (uint64_t)(uint32_t)(int32_t)s : bits;
    return 0;
}

/* Another object with data_ptr() (fp_read_ptrobj): keyed as a tensor is,
 * by its type and dtype (both held by the entry) and alignment; never
 * taken as the same by the layout's last hits, whose identity shortcut
 * is for immutable objects (fp_last_save). */
static int key_ptrobj(struct fp_call *c, unsigned j, PyObject *v)
{
    const struct fp_param *P = &c->L->p[j];
    struct fp_argkey *ak = &c->ak[j];
    struct fp_want *w = &c->want[c->nwant];
    PyObject *dtype;
    uint64_t ptr;
    int ok = 1, r = fp_read_ptrobj(v, &dtype, &ptr);
    if (r)
        return r;
    add_ref(c, (PyObject *)FP_TYPE(v), &ok);
    add_ref(c, dtype, &ok);
    PY(Py_DecRef)(dtype); /* v holds it through the call; the entry, once it is keyed */
    if (!ok)
        return FP_R_ARGTYPE;
    int d16 = !P->dns && !P->dnsa && (ptr & 15) == 0;
    fp_key_u64(&c->key, FP_T_PTROBJ | (uint64_t)d16 << 9);
    fp_key_u64(&c->key, (uint64_t)(uintptr_t)FP_TYPE(v));
    fp_key_u64(&c->key, (uint64_t)(uintptr_t)dtype);
    w->spec = FP_S_PTR;
    w->val = ptr;
    ak->tag = FP_T_PTROBJ;
    ak->dtype = dtype;
    ak->flags = (uint8_t)(1 | d16 << 1);
    ak->wi = (int8_t)c->nwant++;
    return 0;
}

static int key_param(struct fp_call *c, unsigned j, PyObject *v)
{
    const struct fp_param *P = &c->L->p[j];
    struct fp_key *k = &c->key;
    struct fp_argkey *ak = &c->ak[j];
    ak->wi = -1;
    ak->tag = 0;
    fp_key_u64(k, FP_T_PARAM | (uint64_t)j << 8);
    if (P->constexpr_) {
        if (fp_key_scalar(k, v) == 0) /* writes nothing when it fails */
            return 0;
        if (!fpy.t_tl_dtype || FP_TYPE(v) != fpy.t_tl_dtype)
            return FP_R_ARGTYPE;
        int ok = 1;
        add_ref(c, v, &ok);
        if (!ok)
            return FP_R_ARGTYPE;
        fp_key_u64(k, FP_T_OBJECT);
        fp_key_u64(k, (uint64_t)(uintptr_t)v);
        return 0;
    }
    struct fp_want *w = &c->want[c->nwant];
    w->arg = (uint16_t)j;
    w->val = 0;
    if (fp_is_tensor(v)) {
        PyObject *dtype;
        int cuda, ok = 1;
        uint64_t ptr;
        if (fp_read_tensor(c, v, &dtype, &cuda, &ptr))
            return FP_R_ARGTYPE;
        add_ref(c, dtype, &ok);
        if (!ok)
            return FP_R_ARGTYPE;
        /* handle_tensor: key "D" when specialized, aligned and 16-byte aligned */
        int spec = !P->dns, d16 = spec && !P->dnsa && (ptr & 15) == 0;
        fp_key_u64(k, FP_T_TENSOR | (uint64_t)cuda << 8 | (uint64_t)d16 << 9);
        fp_key_u64(k, (uint64_t)(uintptr_t)dtype);
        if (P->annotated)
            fp_key_u64(k, ptr);
        w->spec = P->annotated ? FP_S_FIXED : FP_S_PTR;
        w->val = ptr;
        ak->tag = FP_T_TENSOR;
        ak->dtype = dtype;
        ak->flags = (uint8_t)(cuda | d16 << 1);
        ak->wi = (int8_t)c->nwant++;
        return 0;
    }
    if (P->annotated) {
        /* ("ann",) + specialize(...)[1:]: the annotation is the type.
         * Always a kernel parameter. An int of an integer annotation keys
         * by its class; anything else by the exact value. */
        uint8_t flags;
        if (P->ann_int && fp_annint_class(P, v, &flags, &w->val) == 0) {
            fp_key_u64(k, FP_T_ANNINT | (uint64_t)flags << 8);
            w->spec = P->ann_int;
            ak->tag = FP_T_ANNINT;
            ak->spec = P->ann_int;
            ak->flags = flags;
            ak->wi = (int8_t)c->nwant++;
            return 0;
        }
        if (fp_key_scalar(k, v))
            return FP_R_ARGTYPE;
        w->spec = FP_S_FIXED;
        ak->wi = (int8_t)c->nwant++;
        return 0;
    }
    void *t = FP_TYPE(v);
    if (t == fpy.t_long) {
        if (fp_int_class(P, v, &ak->spec, &ak->flags, &w->val))
            return FP_R_ARGTYPE;
        fp_key_u64(k, FP_T_INT | (uint64_t)ak->spec << 8 | (uint64_t)ak->flags << 16);
        ak->tag = FP_T_INT;
        if (ak->spec == FP_S_CONST)
            return 0; /* ("constexpr", 1): not a kernel parameter */
        w->spec = ak->spec;
        ak->wi = (int8_t)c->nwant++;
        return 0;
    }
    if (t == fpy.t_float) {
        double d = PY(PyFloat_AsDouble)(v);
        fp_key_u64(k, FP_T_FLOAT);
        w->spec = FP_S_FP32;
        w->val = fp_float_bits(d);
        ak->tag = FP_T_FLOAT;
        ak->wi = (int8_t)c->nwant++;
        return 0;
    }
    if (t == fpy.t_bool) {
        fp_key_u64(k, FP_T_BOOL);
        w->spec = FP_S_U1;
        w->val = v == fpy.o_true;
        ak->tag = FP_T_BOOL;
        ak->wi = (int8_t)c->nwant++;
        return 0;
    }
    if (v == fpy.o_none) {
        fp_key_u64(k, FP_T_NONE); /* ("constexpr", None) */
        ak->tag = FP_T_NONE;
        return 0;
    }
    return key_ptrobj(c, j, v);
}

int fp_read_device(struct fp_call *c)
{
    PyObject *gd = fp_get_device_fn(), *gs = fp_get_stream_fn();
    int torch_fns = fp_device_fns_are_torch();
    uint64_t t0 = fp_sub_begin();
    int d;
    uint64_t st;
    if (fp_torch_device_stream(torch_fns, &d, &st, &c->ctx_current) == 0) {
        c->device_obj = PY(PyLong_FromLong)(d); /* a small int: no allocation */
        c->device = d;
        c->stream = st;
        fp_sub_end(FP_SUB_DEVICE, t0);
        return c->device_obj ? 0 : -1;
    }
    PyObject *dev = PY(PyObject_Vectorcall)(gd, NULL, 0, NULL);
    fp_sub_end(FP_SUB_DEVICE, t0);
    if (!dev || FP_TYPE(dev) != fpy.t_long)
        goto fail;
    c->device_obj = dev;
    c->device = PY(PyLong_AsLong)(dev);
    t0 = fp_sub_begin();
    PyObject *s = PY(PyObject_Vectorcall)(gs, &dev, 1, NULL);
    if (!s)
        goto fail;
    c->stream = PY(PyLong_AsUnsignedLongLong)(s);
    fp_sub_end(FP_SUB_STREAM, t0);
    PY(Py_DecRef)(s);
    if (PY(PyErr_Occurred)())
        goto fail;
    fp_torch_device_stream_check(torch_fns, (int)c->device, c->stream);
    return 0;
fail:
    PY(PyErr_Clear)();
    return -1;
}

int fp_call_key(struct fp_call *c)
{
    struct fp_layout *L = c->L;
    if ((size_t)c->npos > L->n)
        return FP_R_BINDING; /* the binder raises TypeError */
    size_t np = (size_t)c->npos;
    if (np) /* pos may be NULL when empty */
        memcpy(c->vals, c->pos, np * sizeof c->vals[0]);
    memset(c->vals + np, 0, (L->n - np) * sizeof c->vals[0]);
    c->nopts = 0;
    c->ui_debug = c->ui_instr = -1;
    for (unsigned i = 0; i < c->nkw; i++) {
        int j = fp_layout_kwindex(L, c->kwn[i]);
        if (j >= 0) {
            if (c->vals[j])
                return FP_R_BINDING; /* multiple values: TypeError */
            c->vals[j] = c->kwv[i];
            continue;
        }
        if (is_name(c->kwn[i], fpy.s_debug))
            c->ui_debug = (int8_t)i;
        else if (is_name(c->kwn[i], fpy.s_instrumentation_mode))
            c->ui_instr = (int8_t)i;
        c->opts[c->nopts++] = (uint8_t)i;
    }
    for (unsigned j = (unsigned)np; j < L->n; j++) /* positional ones are never NULL */
        if (!c->vals[j]) {
            if (!L->p[j].dflt)
                return FP_R_BINDING; /* missing argument: TypeError */
            c->vals[j] = L->p[j].dflt;
        }
    if (fp_read_device(c))
        return FP_R_DEVICE;
    fp_phase(FP_PH_DEVICE);
    if (!c->nopts && fp_last_match(c))
        return 0; /* the same key as the layout's last hit: not built */
    return fp_call_key_build(c);
}

int fp_call_key_build(struct fp_call *c)
{
    const struct fp_layout *L = c->L;
    int nopts = c->nopts, ui_debug = c->ui_debug, ui_instr = c->ui_instr;
    struct fp_key *k = &c->key;
    fp_key_reset(k);
    fp_key_u64(k, L->id);
    fp_key_u64(k, (uint64_t)c->device);
    fp_key_u64(k, (uint64_t)fp_conf.mode);
    c->nwant = 0;
    c->nrefs = 0;
    c->modes = -1;
    for (unsigned j = 0; j < L->n; j++) {
        uint64_t t0 = fp_sub_begin();
        int r = key_param(c, j, c->vals[j]);
        if (r)
            return r;
        if (__builtin_expect(fp_phases_on, 0)) /* the part's class only when timing */
            fp_sub_end(fp_is_tensor(c->vals[j])            ? FP_SUB_TENSOR
                       : FP_TYPE(c->vals[j]) == fpy.t_long ? FP_SUB_INT
                                                           : FP_SUB_OTHER,
                       t0);
    }
    uint64_t t_opt = fp_sub_begin();
    /* options in call order, debug and instrumentation_mode where run()
     * put them (in place when given, else appended in that order) */
    PyObject *dbg = ui_debug >= 0 ? c->kwv[ui_debug] : L->jdebug;
    int t = PY(PyObject_IsTrue)(dbg);
    if (t < 0) {
        PY(PyErr_Clear)();
        return FP_R_KWARGS;
    }
    PyObject *eff_debug = t ? dbg : fp_knob_debug();
    for (int i = 0; i < nopts; i++) {
        int o = c->opts[i];
        Py_ssize_t n;
        const char *s = PY(PyUnicode_AsUTF8AndSize)(c->kwn[o], &n);
        if (!s) {
            PY(PyErr_Clear)();
            return FP_R_KWARGS;
        }
        fp_key_u64(k, FP_T_OPTION);
        fp_key_text(k, s, (size_t)n);
        PyObject *v = o == ui_debug ? eff_debug : o == ui_instr ? fp_knob_instr() : c->kwv[o];
        if (fp_key_scalar(k, v))
            return FP_R_KWARGS;
    }
    if (ui_debug < 0) {
        fp_key_u64(k, FP_T_DEBUG);
        if (fp_key_scalar(k, eff_debug))
            return FP_R_KNOBS;
    }
    if (ui_instr < 0) {
        fp_key_u64(k, FP_T_INSTR);
        if (fp_key_scalar(k, fp_knob_instr()))
            return FP_R_KNOBS;
    }
    if (fp_conf.mode == TRLAT_FP_MODE_IDENTICAL) { /* identical mode: every value and the stream */
        fp_key_u64(k, c->stream);
        for (unsigned i = 0; i < c->nwant; i++)
            fp_key_u64(k, c->want[i].val);
    }
    if (k->overflow)
        return FP_R_ARGTYPE;
    fp_key_finish(k);
    fp_sub_end(FP_SUB_OPTIONS, t_opt);
    return 0;
}

PyObject *fp_call_bound_dict(const struct fp_call *c)
{
    PyObject *d = PY(PyDict_New)();
    for (unsigned j = 0; d && j < c->L->n; j++)
        if (PY(PyDict_SetItem)(d, c->L->p[j].name, c->vals[j]) < 0) {
            PY(Py_DecRef)(d);
            d = NULL;
        }
    return d;
}
