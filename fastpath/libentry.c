/* FlagGems' LibEntry.run(*args, grid=g, **kwargs) served in C: its hit
 * path, step by step as FlagGems 5.0.2 writes it (flag_gems/utils/
 * libentry.py, the branch for Triton 3.3-3.6), with the same Python
 * operations on the same objects, without the ~20 us of its bytecode:
 *   - the arguments split by the instance's specialize_indices and
 *     do_not_specialize_indices (the trailing parameters from the keywords
 *     or their defaults, by the JITFunction's KernelParam flags), a
 *     TensorDescriptor replaced by its tuple;
 *   - its key, self.key(...) (ints of specialized parameters by value,
 *     tensors by dtype and 16-byte alignment: data_ptr() and dtype read as
 *     key() reads them), looked up in self.kernel_cache[current_device()]
 *     (torch.cuda's read through its builtin, plan() says why), or the
 *     entry one of its last keys found while that dict has not changed
 *     (libentry_last.c);
 *   - not there: the original runs (its first-call path), nothing having
 *     run but those reads;
 *   - the launch arguments by signature from the call, the tuned and
 *     heuristic constexprs and the constexprs (one missing: the original
 *     runs, and raises as it does);
 *   - a callable grid called with the dict run() builds (a grid function
 *     gridprog.c has a program for: evaluated from that dict's values
 *     instead, when it returns a tuple), grid + (1, 1),
 *     each launch pre-hook of the entry (a config's pre_hook: FlagGems'
 *     host-TMA matmul sets its descriptors' block shapes in one) called
 *     with {**dict(zip(arg_names, args)), **kwargs, **its kwargs}, [0:3],
 *     kernel[grid](*all_args) (the hooked CompiledKernel.__getitem__
 *     and the launcher memo below it), and (kernel, constexprs) returned.
 *     Once the grid function was called, whatever follows runs to the end
 *     and raises as run() would.
 * Served only for a class whose run and key compile to exactly the
 * reference trlat models (libentry_model.py, with the running Python),
 * whose module's globals and builtins hold what they held then (watched),
 * and for an instance whose attributes are those its __init__ set. Verify
 * mode serves nothing here: the original runs, and its launch (launcher,
 * grid, argument objects) is checked against what the model computed.
 * Everything runs with the GIL held. */
#include "fastpath/fp_py.h"
#include "fastpath/phases.h"
#include "interpose/log.h"
#include "interpose/tstate.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* calls served, of them with a grid program's grid, and entries found as
 * a last key's, under TRLAT_FASTPATH_DEBUG */
uint64_t fp_found_libentry, fp_found_libentry_gprog, fp_found_libentry_last;

/* The builtins run and key call by name (neither may be the module's own). */
static const char *const bnames[] = {"RuntimeError", "callable", "dict",  "enumerate", "hasattr", "isinstance",
                                     "len",          "list",     "tuple", "zip",       "int",     "type"};
#define NB (sizeof bnames / sizeof *bnames)

static struct {
    int state; /* 0 not looked at, 1 modelled, -1 not */
    void *type;
    PyObject *run, *key;          /* held: as checked */
    PyObject *globals, *builtins; /* held, watched */
    PyObject *bval[NB], *bname[NB];
    PyObject *devfn, *inspect, *odict; /* the module's torch_device_fn, inspect and OrderedDict (held) */
    uint64_t epoch;
    PyObject *one_one, *slice03;
    int (*lookup)(PyObject *, PyObject *, PyObject **); /* hasattr's own lookup */
    PyObject *s_grid, *s_key, *s_run, *s_dtype, *s_data_ptr, *s_current_device, *s_kernel_cache, *s_signature, *s_jit,
        *s_spec, *s_dns, *s_div, *s_arg_names, *s_major, *s_minor, *s_devfn, *s_inspect, *s_odict, *s__empty, *s_i32,
        *s_u64, *s_i64, *s_td, *s_shape, *s_strides, *s_block_shape, *s_padding, *s__run, *s_builtins;
} cls;

struct le {
    PyObject *self, *jit, *sig, *spec, *dns; /* held: as learnt */
    struct fp_layout *L;
    unsigned nspec, ndns;
    PyObject *specv[FP_MAX_ARGS], *dnsv[FP_MAX_ARGS]; /* the lists' items as learnt (held) */
    uint8_t kind[FP_MAX_ARGS];                        /* a positional argument: 0 spec, 1 dns, 2 constexpr */
    const char *bad;                                  /* why never served (NULL: served) */
    /* the keywords of the last call (held: the same objects, the same
     * strings) and the parameter each names (an index into them, -1 none) */
    PyObject *kwseen[FP_MAX_KW];
    unsigned nkwseen;
    int8_t kwmap[FP_MAX_ARGS];
    struct fp_le_last *last; /* the entries of its last keys (libentry_last.c) */
    struct fp_le_phases ph;  /* TRLAT_FASTPATH_PHASES */
};

/* A call run(self, *pos, **kw) as vectorcall passes it, with the keyword
 * that names each parameter (kw[j]: an index into kwn and kwv, -1 none). */
struct lcall {
    PyObject *const *pos, *const *kwv;
    PyObject *kwn;
    Py_ssize_t npos;
    int8_t kw[FP_MAX_ARGS];
};
static struct fp_pmap instances; /* LibEntry -> struct le */

enum { K_SPEC, K_DNS, K_CONST };

static int intern_all(void)
{
    struct {
        PyObject **p;
        const char *s;
    } n[] = {{&cls.s_grid, "grid"},
             {&cls.s_key, "key"},
             {&cls.s_run, "run"},
             {&cls.s_dtype, "dtype"},
             {&cls.s_data_ptr, "data_ptr"},
             {&cls.s_current_device, "current_device"},
             {&cls.s_kernel_cache, "kernel_cache"},
             {&cls.s_signature, "signature"},
             {&cls.s_jit, "jit_function"},
             {&cls.s_spec, "specialize_indices"},
             {&cls.s_dns, "do_not_specialize_indices"},
             {&cls.s_div, "divisibility"},
             {&cls.s_arg_names, "arg_names"},
             {&cls.s_major, "major_version"},
             {&cls.s_minor, "minor_version"},
             {&cls.s_devfn, "torch_device_fn"},
             {&cls.s_inspect, "inspect"},
             {&cls.s_odict, "OrderedDict"},
             {&cls.s__empty, "_empty"},
             {&cls.s_i32, "i32"},
             {&cls.s_u64, "u64"},
             {&cls.s_i64, "i64"},
             {&cls.s_td, "TensorDescriptor"},
             {&cls.s_shape, "shape"},
             {&cls.s_strides, "strides"},
             {&cls.s_block_shape, "block_shape"},
             {&cls.s_padding, "padding"},
             {&cls.s__run, "_run"},
             {&cls.s_builtins, "__builtins__"}};
    for (size_t i = 0; i < sizeof n / sizeof *n; i++)
        if (!(*n[i].p = PY(PyUnicode_InternFromString)(n[i].s)))
            return 0;
    for (size_t i = 0; i < NB; i++)
        if (!(cls.bname[i] = PY(PyUnicode_InternFromString)(bnames[i])))
            return 0;
    /* 3.13's name for it, and before */
    cls.lookup = PY(PyObject_GetOptionalAttr) ? PY(PyObject_GetOptionalAttr) : PY(_PyObject_LookupAttr);
    if (!cls.lookup)
        return 0;
    PyObject *one = PY(PyLong_FromLong)(1), *zero = PY(PyLong_FromLong)(0), *three = PY(PyLong_FromLong)(3);
    cls.one_one = PY(PyTuple_New)(2);
    if (cls.one_one && one) {
        PY(Py_IncRef)(one);
        PY(PyTuple_SetItem)(cls.one_one, 0, one);
        PY(Py_IncRef)(one);
        PY(PyTuple_SetItem)(cls.one_one, 1, one);
    }
    cls.slice03 = zero && three ? PY(PySlice_New)(zero, three, NULL) : NULL;
    trlat_py_drop(one);
    trlat_py_drop(zero);
    trlat_py_drop(three);
    return cls.one_one && cls.slice03;
}

/* The globals and builtins run reads, as found: 1 still so. */
static int globals_current(void)
{
    if (fpy.watchers && cls.epoch == fpy.epoch)
        return 1;
    PyObject *major = fp_dget(cls.globals, cls.s_major), *minor = fp_dget(cls.globals, cls.s_minor);
    long ma = major && FP_TYPE(major) == fpy.t_long ? PY(PyLong_AsLong)(major) : -1;
    long mi = minor && FP_TYPE(minor) == fpy.t_long ? PY(PyLong_AsLong)(minor) : -1;
    PY(PyErr_Clear)();
    PyObject *td = fp_dict_of((PyObject *)cls.type);
    int ok = ma == 3 && mi >= 3 && mi <= 6 && fp_dget(cls.globals, cls.s_devfn) == cls.devfn &&
             fp_dget(cls.globals, cls.s_inspect) == cls.inspect && fp_dget(cls.globals, cls.s_odict) == cls.odict &&
             td && fp_dget(td, cls.s_key) == cls.key;
    PyObject *empty = ok ? fp_getattr(cls.inspect, cls.s__empty) : NULL;
    PY(PyErr_Clear)();
    ok = ok && empty == fpy.o_empty;
    trlat_py_drop(empty);
    for (size_t i = 0; ok && i < NB; i++)
        ok = !fp_dget(cls.globals, cls.bname[i]) && fp_dget(cls.builtins, cls.bname[i]) == cls.bval[i];
    if (ok)
        cls.epoch = fpy.epoch;
    return ok;
}

/* Whether type is a LibEntry whose run (orig) and key are the modelled
 * ones; decided once, for the first class named LibEntry. */
static int learn_class(void *type, PyObject *run)
{
    if (cls.state)
        return cls.state > 0 && type == cls.type && run == cls.run;
    static void *others[8]; /* other KernelInterface subclasses: pointers compared, never followed */
    static unsigned next;
    for (unsigned i = 0; i < 8; i++)
        if (others[i] == type)
            return 0;
    PyObject *n = fp_getattr((PyObject *)type, fpy.s___name__);
    int named = n && FP_TYPE(n) == fpy.t_str && !PY(PyUnicode_CompareWithASCIIString)(n, "LibEntry");
    trlat_py_drop(n);
    PY(PyErr_Clear)();
    if (!named) {
        others[next++ % 8] = type;
        return 0;
    }
    cls.state = -1;
    const char *why = NULL;
    if (!PY(PyObject_GetItem) || !PY(PyNumber_Add) || !PY(PySlice_New) || !PY(PySequence_Tuple) ||
        !PY(PyFunction_GetGlobals) || !PY(PyObject_Vectorcall) || !PY(PyObject_VectorcallMethod) ||
        !PY(PyDict_GetItemWithError) || !PY(PyDict_Next) || !PY(PyType_IsSubtype) || !intern_all())
        why = "this Python lacks what it needs";
    PyObject *td = why ? NULL : fp_dict_of((PyObject *)type);
    PyObject *key = td ? fp_dget(td, cls.s_key) : NULL;
    if (!why && (!key || FP_TYPE(key) != fpy.t_function || FP_TYPE(run) != fpy.t_function))
        why = "its run or key is not a Python function";
    if (!why) {
        static PyObject *check;
        static int loaded;
        char path[4200];
        if (!loaded++) {
            static const char *const names[1] = {"check"};
            if (fp_share_load("libentry_model.py", "trlat_libentry_model", names, &check, 1, path, sizeof path))
                trlat_log("fast path: %s did not load; FlagGems' LibEntry.run is not served", path);
        }
        PyObject *a[2] = {run, key};
        PyObject *r = check ? PY(PyObject_Vectorcall)(check, a, 2, NULL) : NULL;
        if (!r) {
            PY(PyErr_Clear)();
            why = "the reference did not load";
        } else if (r != fpy.o_none) {
            why = FP_TYPE(r) == fpy.t_str ? PY(PyUnicode_AsUTF8)(r) : "it is not the modelled one";
            if (fp_conf.debug)
                trlat_log_debug("fast path: libentry: LibEntry.run is served above its compiled[grid] call only: %s",
                                why ? why : "?");
            why = "it is not the one FlagGems 5.0.2 has";
        }
        trlat_py_drop(r);
    }
    if (!why) {
        cls.globals = PY(PyFunction_GetGlobals)(run);
        cls.builtins = cls.globals ? fp_dget(cls.globals, cls.s_builtins) : NULL;
        if (cls.builtins && FP_TYPE(cls.builtins) != fpy.t_dict)
            cls.builtins = fp_dict_of(cls.builtins); /* the module */
        cls.devfn = cls.globals ? fp_dget(cls.globals, cls.s_devfn) : NULL;
        cls.inspect = cls.globals ? fp_dget(cls.globals, cls.s_inspect) : NULL;
        cls.odict = cls.globals ? fp_dget(cls.globals, cls.s_odict) : NULL;
        for (size_t i = 0; i < NB && cls.builtins; i++)
            cls.bval[i] = fp_dget(cls.builtins, cls.bname[i]);
        int ok = cls.globals && cls.builtins && cls.devfn && cls.inspect && cls.odict;
        for (size_t i = 0; ok && i < NB; i++)
            ok = cls.bval[i] && !fp_dget(cls.globals, cls.bname[i]);
        if (!ok)
            why = "its module is not as modelled";
    }
    if (why) {
        if (fp_conf.debug)
            trlat_log_debug("fast path: libentry: LibEntry.run is never served above its compiled[grid] call: %s", why);
        return 0;
    }
    cls.type = type;
    cls.run = fp_hold(run);
    cls.key = fp_hold(key);
    fp_hold(cls.globals);
    fp_hold(cls.builtins);
    fp_hold(cls.devfn);
    fp_hold(cls.inspect);
    fp_hold(cls.odict);
    for (size_t i = 0; i < NB; i++)
        fp_hold(cls.bval[i]);
    fp_watch_dict(cls.globals);
    fp_watch_dict(cls.builtins);
    fp_watch_type((PyObject *)type);
    cls.epoch = fpy.epoch - 1;
    cls.state = 1;
    if (!globals_current()) {
        cls.state = -1;
        if (fp_conf.debug)
            trlat_log_debug("fast path: libentry: LibEntry.run is never served above its compiled[grid] call: "
                            "Triton is not 3.3-3.6 there");
        return 0;
    }
    return 1;
}

/* A list of small ints held as learnt: 0 when l is still that list with those items. */
static int list_same(PyObject *l, PyObject *was, PyObject *const *items, unsigned n)
{
    if (l != was || (size_t)trlat_py_size(l) != n)
        return -1;
    for (unsigned i = 0; i < n; i++)
        if (PY(PyList_GetItem)(l, (Py_ssize_t)i) != items[i])
            return -1;
    return 0;
}

static int hold_list(PyObject *l, PyObject **items, unsigned *n, unsigned max)
{
    if (!l || FP_TYPE(l) != fpy.t_list || trlat_py_size(l) > (Py_ssize_t)max)
        return -1;
    *n = (unsigned)trlat_py_size(l);
    for (unsigned i = 0; i < *n; i++) {
        PyObject *v = PY(PyList_GetItem)(l, (Py_ssize_t)i);
        if (!v || FP_TYPE(v) != fpy.t_long)
            return -1;
        items[i] = fp_hold(v);
    }
    return 0;
}

static int in_list(PyObject *const *items, unsigned n, long j)
{
    for (unsigned i = 0; i < n; i++)
        if (PY(PyLong_AsLong)(items[i]) == j)
            return 1;
    return 0;
}

/* The instance as its __init__ left it, learnt once. */
static struct le *find(PyObject *self)
{
    struct le *E = fp_pmap_get(&instances, self);
    if (E || fp_pmap_full(&instances))
        return E;
    if (!(E = calloc(1, sizeof *E)))
        return NULL;
    if (fp_pmap_put(&instances, self, E)) {
        free(E);
        return NULL;
    }
    E->self = fp_hold(self);
    E->ph.name = "?";
    PyObject *d = fp_dict_of(self);
    PyObject *jit = d ? fp_dget(d, cls.s_jit) : NULL;
    E->L = jit && FP_TYPE(jit) == (void *)fpy.jit_cls ? fp_layout_get(jit) : NULL;
    PyObject *sig = E->L ? fp_getattr(E->L->jitfn, cls.s_signature) : NULL;
    if (!E->L || E->L->bad)
        E->bad = "its function is not a JITFunction the fast path knows";
    else if (!sig || fp_dget(d, cls.s_signature) != sig)
        E->bad = "its signature is not its function's";
    else if (hold_list(fp_dget(d, cls.s_spec), E->specv, &E->nspec, FP_MAX_ARGS) ||
             hold_list(fp_dget(d, cls.s_dns), E->dnsv, &E->ndns, FP_MAX_ARGS))
        E->bad = "its parameter lists are not as its __init__ makes them";
    PY(PyErr_Clear)();
    if (E->L && E->L->stat)
        E->ph.name = E->L->stat->name;
    if (!E->bad) {
        E->jit = fp_hold(jit);
        E->sig = sig;
        sig = NULL;
        E->spec = fp_hold(fp_dget(d, cls.s_spec));
        E->dns = fp_hold(fp_dget(d, cls.s_dns));
        for (unsigned j = 0; j < E->L->n; j++)
            E->kind[j] = in_list(E->specv, E->nspec, j) ? K_SPEC : in_list(E->dnsv, E->ndns, j) ? K_DNS : K_CONST;
        PY(PyErr_Clear)();
    }
    trlat_py_drop(sig);
    if (fp_conf.debug)
        trlat_log_debug("fast path: libentry: a LibEntry of %s %s", E->L ? E->L->stat->name : "?",
                        E->bad ? E->bad : "is served in C");
    return E;
}

/* The instance's attributes run reads, as learnt: its __dict__, or NULL. */
static PyObject *instance_current(struct le *E)
{
    PyObject *d = fp_dict_of(E->self);
    if (!d || fp_dget(d, cls.s_jit) != E->jit || fp_dget(d, cls.s_signature) != E->sig ||
        list_same(fp_dget(d, cls.s_spec), E->spec, E->specv, E->nspec) ||
        list_same(fp_dget(d, cls.s_dns), E->dns, E->dnsv, E->ndns) || fp_dget(d, cls.s_key) || fp_dget(d, cls.s_run))
        return NULL;
    return d;
}

/* hasattr(v, name): 1, 0, or -1 when the lookup raised something else
 * (hasattr raises it: the original runs and raises). Through the lookup
 * hasattr itself makes: a missing attribute (an int's data_ptr, on most
 * calls) costs no exception. */
static int has(PyObject *v, PyObject *name, PyObject **out)
{
    PyObject *found = NULL;
    int r = cls.lookup(v, name, &found);
    if (r > 0 && out)
        *out = found;
    else if (r > 0)
        PY(Py_DecRef)(found);
    return r < 0 ? -1 : r;
}

static PyObject *pair(PyObject *a, PyObject *b) /* steals both */
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
     * TensorDescriptor) are few: the last ones looked at are held (an
     * address that cannot be another type's) with the answer. A class's
     * __name__ can be assigned: each held one is watched, and the answers
     * are dropped when a watched type or dict changed (none are kept
     * without watchers) */
    static PyObject *seen[8];
    static uint8_t named[8];
    static unsigned next;
    static uint64_t epoch;
    if (!fpy.watchers || epoch != fpy.epoch) {
        for (unsigned i = 0; i < 8; i++)
            trlat_py_drop(seen[i]);
        memset(seen, 0, sizeof seen);
        epoch = fpy.epoch;
    }
    for (unsigned i = 0; i < 8; i++)
        if (seen[i] == t)
            return named[i];
    PyObject *n = fp_getattr((PyObject *)t, fpy.s___name__);
    int td = n && FP_TYPE(n) == fpy.t_str && PY(PyUnicode_Compare)(n, cls.s_td) == 0;
    trlat_py_drop(n);
    PY(PyErr_Clear)();
    unsigned i = next++ % 8;
    trlat_py_drop(seen[i]);
    seen[i] = fp_hold((PyObject *)t);
    named[i] = (uint8_t)td;
    if (fpy.watchers)
        fp_watch_type((PyObject *)t);
    return td;
}

static PyObject *hashable(PyObject *v)
{
    if (!is_td_type(FP_TYPE(v))) {
        PY(Py_IncRef)(v);
        return v;
    }
    PyObject *t = PY(PyTuple_New)(5);
    if (!t)
        return NULL;
    PY(Py_IncRef)(cls.s_td);
    PY(PyTuple_SetItem)(t, 0, cls.s_td);
    PyObject *names[4] = {cls.s_shape, cls.s_strides, cls.s_block_shape, cls.s_padding};
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
    int h = has(v, cls.s_data_ptr, NULL);
    if (h < 0)
        return -1;
    if (!h) {
        PY(Py_IncRef)((PyObject *)FP_TYPE(v));
        PY(Py_IncRef)(v);
        out->a = (PyObject *)FP_TYPE(v);
        out->b = v;
        return 0;
    }
    PyObject *dt = PY(PyObject_GetAttr)(v, cls.s_dtype);
    if (!dt)
        return -1;
    PyObject *a[1] = {v};
    PyObject *p = PY(PyObject_VectorcallMethod)(cls.s_data_ptr, a, 1 | TRLAT_PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
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
    int h = has(v, cls.s_data_ptr, NULL);
    if (h < 0)
        return NULL;
    if (h)
        return PY(PyObject_GetAttr)(v, cls.s_dtype);
    void *t = FP_TYPE(v);
    if (t != fpy.t_long && t != fpy.t_bool && !PY(PyType_IsSubtype)((PyObject *)t, (PyObject *)fpy.t_long)) {
        PY(Py_IncRef)((PyObject *)t);
        return (PyObject *)t;
    }
    uint64_t bits;
    int u;
    PyObject *s = cls.s_i64; /* past uint64 or below int64 */
    if (fp_read_int(v, &bits, &u) == 0)
        s = u ? cls.s_u64 : ((int64_t)bits >= INT32_MIN && (int64_t)bits <= INT32_MAX) ? cls.s_i32 : cls.s_i64;
    PY(Py_IncRef)(s);
    return s;
}

/* Verify mode: the model's launch for the original's call on this thread. */
static _Thread_local struct {
    PyObject *launcher;
    struct le *E;
    unsigned g[3], n;
    int have_grid, seen, differs;
    PyObject *args[FP_MAX_ARGS];
} expect;

void fp_libentry_check(PyObject *launcher, const unsigned g[3], PyObject *const *kargs, Py_ssize_t nk)
{
    /* another kernel's launch first (a grid function's): not this call's;
     * the model's kernel never launched is a difference (verify_done) */
    if (!expect.launcher || expect.seen || launcher != expect.launcher)
        return;
    expect.seen = 1;
    int d = (size_t)nk != expect.n;
    if (!d && expect.have_grid)
        d = !g || g[0] != expect.g[0] || g[1] != expect.g[1] || g[2] != expect.g[2];
    for (unsigned i = 0; !d && i < expect.n; i++)
        d = kargs[i] != expect.args[i];
    expect.differs = d;
}

static void verify_done(PyObject *result)
{
    struct le *E = expect.E;
    int differs = expect.differs || (result && !expect.seen);
    expect.launcher = NULL;
    if (!differs)
        return;
    static atomic_flag once;
    trlat_log_once(&once,
                   "fast path verify: FlagGems' LibEntry.run of %s launched other than the model computed; that "
                   "LibEntry is not served in C from now on",
                   E->L->stat->name);
    E->bad = "verify found the model wrong";
    fp_count_stat(E->L->stat, FP_FALLBACK, FP_R_VERIFY);
}

/* c->kw for the call's keywords: the last call's map when its keyword
 * names are the very same string objects (most calls: a call site's names
 * are its code's constants), else found by comparing; -1 when there are
 * too many. */
static int bind_keywords(struct le *E, struct lcall *c)
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
static PyObject *value_of(const struct le *E, const struct lcall *c, unsigned j)
{
    if ((Py_ssize_t)j < c->npos)
        return c->pos[j];
    return c->kw[j] >= 0 ? c->kwv[c->kw[j]] : E->L->p[j].dflt;
}

static PyObject *meta_dict(PyObject *d, const struct lcall *c, PyObject *constexprs)
{
    PyObject *const *pos = c->pos, *const *kwv = c->kwv, *kwn = c->kwn;
    Py_ssize_t npos = c->npos;
    PyObject *names = fp_dget(d, cls.s_arg_names), *m = PY(PyDict_New)();
    if (!m || !names || FP_TYPE(names) != fpy.t_list) {
        trlat_py_drop(m);
        return NULL;
    }
    Py_ssize_t nn = trlat_py_size(names);
    for (Py_ssize_t i = 0; i < nn && i < npos; i++)
        if (PY(PyDict_SetItem)(m, PY(PyList_GetItem)(names, i), pos[i]) < 0)
            goto fail;
    for (Py_ssize_t i = 0, nk = kwn ? trlat_py_size(kwn) : 0; i < nk; i++)
        if (PY(PyDict_SetItem)(m, PY(PyTuple_GetItem)(kwn, i), kwv[i]) < 0)
            goto fail;
    Py_ssize_t it = 0;
    PyObject *k, *v;
    while (constexprs && PY(PyDict_Next)(constexprs, &it, &k, &v))
        if (PY(PyDict_SetItem)(m, k, v) < 0)
            goto fail;
    return m;
fail:
    PY(Py_DecRef)(m);
    return NULL;
}

/* What the model computed before anything runs: the cache entry's parts
 * (borrowed from it) and the launch arguments; 0 when it is not the hit
 * path modelled (the original runs). */
struct plan {
    PyObject *entry, *kernel, *constexprs, *tune, *heur, *hooks;
    PyObject *all[FP_MAX_ARGS];
    unsigned n;
};

/* all_args as run() builds them, by signature: the call's value, else the
 * tuned, heuristic and other constexprs'. FP_MAX_ARGS, or the parameter
 * that has none. */
static unsigned launch_args(const struct le *E, struct plan *P, const struct lcall *c)
{
    const struct fp_layout *L = E->L;
    P->n = L->n;
    for (unsigned j = 0; j < L->n; j++) {
        PyObject *name = L->p[j].name, *v = value_of(E, c, j);
        if (!v)
            v = PY(PyDict_GetItemWithError)(P->tune, name);
        if (!v)
            v = PY(PyDict_GetItemWithError)(P->heur, name);
        if (!v)
            v = PY(PyDict_GetItemWithError)(P->constexprs, name);
        if (!v) {
            PY(PyErr_Clear)();
            return j;
        }
        P->all[j] = v;
    }
    return FP_MAX_ARGS;
}

static void parts_drop(struct fp_le_part *p, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        PY(Py_DecRef)(p[i].a);
        trlat_py_drop(p[i].b);
    }
}

/* key()'s items for the call, in its order (specialized, not, constexprs):
 * new references in out[0..*n); -1 when it is not the hit path modelled. */
static int entry_parts(const struct le *E, PyObject *d, const struct lcall *c, struct fp_le_part *out, unsigned *n)
{
    PyObject *const *pos = c->pos;
    Py_ssize_t npos = c->npos;
    const struct fp_layout *L = E->L;
    PyObject *divo = fp_dget(d, cls.s_div);
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
            PyObject *val = value_of(E, c, j);
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
        parts_drop(out, *n);
        return -1;
    }
    return 0;
}

/* tuple(parts): the key run() looks up (new reference). */
static PyObject *key_tuple(const struct fp_le_part *p, unsigned n)
{
    PyObject *key = PY(PyTuple_New)(n);
    for (unsigned i = 0; key && i < n; i++) {
        PyObject *item = p[i].a;
        PY(Py_IncRef)(p[i].a);
        if (p[i].b) {
            PY(Py_IncRef)(p[i].b);
            item = pair(p[i].a, p[i].b);
        }
        if (!item) {
            PY(Py_DecRef)(key);
            return NULL;
        }
        PY(PyTuple_SetItem)(key, i, item);
    }
    return key;
}

static int plan(struct le *E, PyObject *d, const struct lcall *c, struct plan *P)
{
    const struct fp_layout *L = E->L;
    PyObject *caches = fp_dget(d, cls.s_kernel_cache);
    if (!caches || FP_TYPE(caches) != fpy.t_tuple || c->npos > (Py_ssize_t)L->n)
        return 0;
    struct fp_le_part parts[FP_MAX_ARGS];
    unsigned np;
    if (entry_parts(E, d, c, parts, &np))
        return 0;
    fp_le_phase(FP_LE_KEY);
    /* torch_device_fn.current_device(), as run() calls it. torch.cuda's is
     * `_lazy_init(); return torch._C._cuda_getDevice()`, and _lazy_init
     * does nothing once CUDA is initialized: run() called it before it
     * stored the entry this call may find (the fast path stands aside in
     * a forked child, where it would raise), so the builtin answers the same */
    PyObject *cd = PY(PyObject_GetAttr)(cls.devfn, cls.s_current_device);
    PyObject *df = cd && cd == fpy.torch_current_device && fpy.torch_get_device ? fpy.torch_get_device : cd;
    PyObject *dev = df ? PY(PyObject_Vectorcall)(df, NULL, 0, NULL) : NULL;
    trlat_py_drop(cd);
    long di = dev && FP_TYPE(dev) == fpy.t_long ? PY(PyLong_AsLong)(dev) : -1;
    trlat_py_drop(dev);
    PyObject *cache = di >= 0 && di < trlat_py_size(caches) ? PY(PyTuple_GetItem)(caches, di) : NULL;
    if (!cache || FP_TYPE(cache) != fpy.t_dict) {
        PY(PyErr_Clear)();
        parts_drop(parts, np);
        return 0;
    }
    /* one of the last keys, the dict unchanged: its entry without the tuple or the lookup */
    struct fp_le_sig sig;
    int memo = fp_le_sig_make(&sig, parts, np) == 0;
    P->entry = memo ? fp_le_last_find(E->last, &sig, cache) : NULL;
    if (P->entry && fp_conf.debug)
        fp_found_libentry_last++;
    if (!P->entry) {
        PyObject *key = key_tuple(parts, np);
        P->entry = key ? PY(PyDict_GetItemWithError)(cache, key) : NULL;
        trlat_py_drop(key);
        PY(PyErr_Clear)();
        if (P->entry && memo)
            fp_le_last_store(&E->last, &sig, cache, P->entry);
    }
    parts_drop(parts, np);
    PyObject *e = P->entry;
    if (!e || FP_TYPE(e) != fpy.t_tuple || trlat_py_size(e) != 5)
        return 0; /* not cached: run()'s first-call path */
    P->kernel = PY(PyTuple_GetItem)(e, 0);
    P->constexprs = PY(PyTuple_GetItem)(e, 1);
    PyObject *tune = PY(PyTuple_GetItem)(e, 2), *heur = PY(PyTuple_GetItem)(e, 3), *hooks = PY(PyTuple_GetItem)(e, 4);
    if (FP_TYPE(P->constexprs) != fpy.t_dict || FP_TYPE(tune) != fpy.t_dict || FP_TYPE(heur) != fpy.t_dict ||
        FP_TYPE(hooks) != fpy.t_tuple)
        return 0;
    /* launch pre-hooks as run() stores them: (pre_hook, config.all_kwargs()) */
    for (Py_ssize_t i = 0, n = trlat_py_size(hooks); i < n; i++) {
        PyObject *h = PY(PyTuple_GetItem)(hooks, i);
        if (FP_TYPE(h) != fpy.t_tuple || trlat_py_size(h) != 2 || FP_TYPE(PY(PyTuple_GetItem)(h, 1)) != fpy.t_dict)
            return 0;
    }
    P->tune = tune;
    P->heur = heur;
    P->hooks = hooks;
    /* run() raises RuntimeError after the grid and hooks: it runs */
    return launch_args(E, P, c) == FP_MAX_ARGS;
}

/* meta[name] for each parameter of the function, of the dict run() gives a
 * grid function, {**dict(zip(self.arg_names, args)), **kwargs,
 * **constexprs}: the constexpr's, else the keyword's, else the positional
 * argument's (NULL: not in it); 0 when self.arg_names are not those names. */
static int meta_vals(const struct le *E, PyObject *d, const struct lcall *c, PyObject *constexprs, PyObject **vals)
{
    const struct fp_layout *L = E->L;
    PyObject *names = fp_dget(d, cls.s_arg_names);
    if (!names || FP_TYPE(names) != fpy.t_list || trlat_py_size(names) != (Py_ssize_t)L->n)
        return 0;
    for (unsigned j = 0; j < L->n; j++) {
        PyObject *n = PY(PyList_GetItem)(names, (Py_ssize_t)j);
        if (n != L->p[j].name && (!n || FP_TYPE(n) != fpy.t_str || PY(PyUnicode_Compare)(n, L->p[j].name) != 0)) {
            PY(PyErr_Clear)();
            return 0;
        }
        PyObject *v = PY(PyDict_GetItemWithError)(constexprs, L->p[j].name);
        if (!v && PY(PyErr_Occurred)()) {
            PY(PyErr_Clear)();
            return 0;
        }
        if (!v && c->kw[j] >= 0)
            v = c->kwv[c->kw[j]];
        if (!v && (Py_ssize_t)j < c->npos)
            v = c->pos[j];
        vals[j] = v;
    }
    return 1;
}

/* The grid a grid function's program computes for this call, without
 * calling it (gridprog.c): (g0, g1, g2) as grid(meta) + (1, 1) cut to
 * [0:3] is (a tuple's items, then 1s); NULL, no error, when it cannot say. */
static PyObject *grid_program(const struct le *E, PyObject *d, PyObject *grid, const struct lcall *c,
                              PyObject *constexprs, unsigned g[3])
{
    PyObject *vals[FP_MAX_ARGS];
    struct fp_gslot *gs;
    int tuple = 0;
    if (FP_TYPE(grid) != fpy.t_function || !meta_vals(E, d, c, constexprs, vals) ||
        fp_gprog_eval_meta(E->L, vals, grid, g, &tuple, &gs) || !tuple)
        return NULL; /* a list: grid + (1, 1) raises, as it will */
    PyObject *t = PY(PyTuple_New)(3);
    for (int i = 0; t && i < 3; i++) {
        PyObject *v = PY(PyLong_FromLong)((long)g[i]);
        if (!v) {
            PY(Py_DecRef)(t);
            PY(PyErr_Clear)();
            return NULL;
        }
        PY(PyTuple_SetItem)(t, i, v);
    }
    return t;
}

/* grid(meta) if callable, + (1, 1): run()'s grid before its pre-hooks
 * (new reference); a grid function's program's grid already cut to [0:3]. */
static PyObject *grid_plus(const struct le *E, PyObject *d, PyObject *grid, const struct lcall *c, PyObject *constexprs)
{
    PyObject *g;
    if (PY(PyCallable_Check)(grid)) {
        unsigned pg[3];
        if ((g = grid_program(E, d, grid, c, constexprs, pg))) {
            if (fp_conf.debug)
                fp_found_libentry_gprog++;
            return g;
        }
        PyObject *m = meta_dict(d, c, constexprs);
        if (!m)
            return NULL;
        g = PY(PyObject_Vectorcall)(grid, &m, 1, NULL);
        PY(Py_DecRef)(m);
    } else {
        g = fp_hold(grid);
    }
    PyObject *g2 = g ? PY(PyNumber_Add)(g, cls.one_one) : NULL;
    trlat_py_drop(g);
    return g2;
}

/* [0:3] of it: the grid run() indexes the kernel with (new reference; steals g2). */
static PyObject *grid_cut(PyObject *g2)
{
    PyObject *g3 = g2 ? PY(PyObject_GetItem)(g2, cls.slice03) : NULL;
    trlat_py_drop(g2);
    return g3;
}

/* Each launch pre-hook called as run() calls it; -1 when one raised. */
static int pre_hooks(PyObject *d, PyObject *hooks, const struct lcall *c)
{
    Py_ssize_t n = trlat_py_size(hooks);
    if (n <= 0)
        return 0;
    PyObject *nargs = meta_dict(d, c, NULL);
    int rc = nargs ? 0 : -1;
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
        PyObject *h = PY(PyTuple_GetItem)(hooks, i), *m = PY(PyDict_Copy)(nargs);
        PyObject *r = m && PY(PyDict_Update)(m, PY(PyTuple_GetItem)(h, 1)) == 0
                          ? PY(PyObject_Vectorcall)(PY(PyTuple_GetItem)(h, 0), &m, 1, NULL)
                          : NULL;
        rc = r ? 0 : -1;
        trlat_py_drop(r);
        trlat_py_drop(m);
    }
    trlat_py_drop(nargs);
    return rc;
}

/* Verify mode: the original runs, its launch compared with the model's. */
static PyObject *verify(PyObject *orig, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, struct le *E,
                        PyObject *d, PyObject *grid, const struct lcall *c, struct plan *P0)
{
    struct plan P = *P0;
    /* the model's launch, then the original's, compared at its launcher
     * (a LibEntry call inside another's, from its grid function: the
     * outer one's is checked, the inner one's blocks at the launcher) */
    if (expect.launcher)
        return NULL;
    PyObject *launcher = fp_getattr(P.kernel, cls.s__run);
    /* the grid, where known without calling anything: a grid function's
     * program's is checked too */
    unsigned pg[3];
    PyObject *g3 = PY(PyCallable_Check)(grid) ? grid_program(E, d, grid, c, P.constexprs, pg)
                                              : grid_cut(grid_plus(E, d, grid, c, P.constexprs));
    PY(PyErr_Clear)();
    expect.launcher = launcher;
    expect.E = E;
    expect.n = P.n;
    memcpy(expect.args, P.all, P.n * sizeof P.all[0]);
    expect.seen = expect.differs = 0;
    expect.have_grid = g3 && FP_TYPE(g3) == fpy.t_tuple && trlat_py_size(g3) == 3;
    for (int i = 0; expect.have_grid && i < 3; i++)
        expect.have_grid = fp_grid_dim(PY(PyTuple_GetItem)(g3, i), &expect.g[i]) == 0;
    trlat_py_drop(g3);
    PyObject *r = PY(PyObject_Vectorcall)(orig, args, (size_t)nargs, kwnames);
    if (launcher)
        verify_done(r);
    expect.launcher = NULL;
    trlat_py_drop(launcher);
    return r;
}

/* The hit path from the grid on, as run() takes it. */
static PyObject *serve(struct le *E, PyObject *d, PyObject *grid, const struct lcall *c, struct plan *P0)
{
    struct plan P = *P0;
    /* from the grid function's call on, run() runs to the end: so does this.
     * The arguments are looked up again after it, as run() looks them up
     * (a grid function may change the dicts it was given) */
    PyObject *g2 = grid_plus(E, d, grid, c, P.constexprs);
    fp_le_phase(FP_LE_GRID);
    if (g2 && pre_hooks(d, P.hooks, c) < 0) {
        PY(Py_DecRef)(g2);
        return NULL; /* raised as run() raises */
    }
    unsigned missing = g2 ? launch_args(E, &P, c) : FP_MAX_ARGS;
    if (missing != FP_MAX_ARGS) {
        const char *nm = PY(PyUnicode_AsUTF8)(E->L->p[missing].name);
        char msg[320];
        snprintf(msg, sizeof msg, "[libentry]: probably a bug, the following kernel params where not captured: ['%s']",
                 nm ? nm : "?");
        PY(PyErr_SetString)(trlat_py.exc_runtime, msg);
        PY(Py_DecRef)(g2);
        return NULL;
    }
    fp_le_phase(FP_LE_HOOKS);
    PyObject *g3 = grid_cut(g2);
    PyObject *k = g3 ? PY(PyObject_GetItem)(P.kernel, g3) : NULL;
    trlat_py_drop(g3);
    fp_le_phase(FP_LE_GETITEM);
    PyObject *res = k ? PY(PyObject_Vectorcall)(k, P.all, P.n, NULL) : NULL;
    trlat_py_drop(k);
    if (!res)
        return NULL; /* raised as run() raises */
    PY(Py_DecRef)(res);
    if (__builtin_expect(fp_phases_on, 0)) {
        fp_le_phase(FP_LE_LAUNCH);
        fp_le_phases_commit(&E->ph);
    }
    if (E->L->stat)
        E->L->stat->library_hits++;
    if (fp_conf.debug)
        fp_found_libentry++;
    PY(Py_IncRef)(P.kernel);
    PY(Py_IncRef)(P.constexprs);
    return pair(P.kernel, P.constexprs);
}

PyObject *fp_libentry_run(PyObject *orig, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!fp_conf.libentry || nargs < 1 || !kwnames || !fp_ready() || !fp_memo.cap || fp_capturing())
        return NULL;
    if (__builtin_expect(fp_phases_on, 0)) {
        const struct trlat_tstate *ts = trlat_tls;
        memset(fp_le_t, 0, sizeof fp_le_t);
        fp_le_t[FP_LE_ENTRY] = ts && ts->py_t0 > TRLAT_PY_UNTIMED ? ts->py_t0 : 0;
        fp_le_phase(FP_LE_RUN);
    }
    PyObject *self = args[0];
    if (!learn_class(FP_TYPE(self), orig) || !globals_current())
        return NULL;
    struct le *E = find(self);
    PyObject *d = E && !E->bad ? instance_current(E) : NULL;
    if (!d)
        return NULL;
    struct lcall c = {.pos = args + 1, .kwv = args + nargs, .kwn = kwnames, .npos = nargs - 1};
    PyObject *grid = NULL;
    for (Py_ssize_t i = 0, nk = trlat_py_size(kwnames); i < nk && !grid; i++)
        if (PY(PyTuple_GetItem)(kwnames, i) == cls.s_grid ||
            !PY(PyUnicode_CompareWithASCIIString)(PY(PyTuple_GetItem)(kwnames, i), "grid"))
            grid = c.kwv[i];
    struct plan P;
    fp_le_phase(FP_LE_GUARDS);
    if (!grid || bind_keywords(E, &c) || !plan(E, d, &c, &P)) {
        PY(PyErr_Clear)();
        return NULL;
    }
    fp_le_phase(FP_LE_LOOKUP);
    /* held as run()'s locals hold its parts: a grid function may clear the cache */
    PY(Py_IncRef)(P.entry);
    PyObject *r = fp_conf.verify ? verify(orig, args, nargs, kwnames, E, d, grid, &c, &P) : serve(E, d, grid, &c, &P);
    PY(Py_DecRef)(P.entry);
    return r;
}
