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
 *   - not there: its first-call path, served in C for a LibEntry around a
 *     plain JITFunction (libentry_first.c), else the original runs,
 *     nothing having run but those reads;
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
#include "fastpath/libentry.h"
#include "interpose/log.h"
#include "interpose/python/pyhook.h"
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
_Static_assert(NB == LE_NB, "libentry.h's count of the builtins");

struct le_cls le_cls;

static struct fp_pmap instances; /* LibEntry -> struct le */

static int intern_all(void)
{
    struct {
        PyObject **p;
        const char *s;
    } n[] = {{&le_cls.s_grid, "grid"},
             {&le_cls.s_key, "key"},
             {&le_cls.s_run, "run"},
             {&le_cls.s_dtype, "dtype"},
             {&le_cls.s_data_ptr, "data_ptr"},
             {&le_cls.s_current_device, "current_device"},
             {&le_cls.s_kernel_cache, "kernel_cache"},
             {&le_cls.s_signature, "signature"},
             {&le_cls.s_jit, "jit_function"},
             {&le_cls.s_spec, "specialize_indices"},
             {&le_cls.s_dns, "do_not_specialize_indices"},
             {&le_cls.s_div, "divisibility"},
             {&le_cls.s_arg_names, "arg_names"},
             {&le_cls.s_major, "major_version"},
             {&le_cls.s_minor, "minor_version"},
             {&le_cls.s_devfn, "torch_device_fn"},
             {&le_cls.s_inspect, "inspect"},
             {&le_cls.s_odict, "OrderedDict"},
             {&le_cls.s__empty, "_empty"},
             {&le_cls.s_i32, "i32"},
             {&le_cls.s_u64, "u64"},
             {&le_cls.s_i64, "i64"},
             {&le_cls.s_td, "TensorDescriptor"},
             {&le_cls.s_shape, "shape"},
             {&le_cls.s_strides, "strides"},
             {&le_cls.s_block_shape, "block_shape"},
             {&le_cls.s_padding, "padding"},
             {&le_cls.s__run, "_run"},
             {&le_cls.s_builtins, "__builtins__"},
             {&le_cls.s_fn, "fn"},
             {&le_cls.s_lock, "lock"},
             {&le_cls.s_triton, "triton"},
             {&le_cls.s_jitcls, "JITFunction"},
             {&le_cls.s_heurcls, "Heuristics"},
             {&le_cls.s_values, "values"},
             {&le_cls.s_enter, "__enter__"},
             {&le_cls.s_exit, "__exit__"},
             {&le_cls.s_module, "__module__"}};
    for (size_t i = 0; i < sizeof n / sizeof *n; i++)
        if (!(*n[i].p = PY(PyUnicode_InternFromString)(n[i].s)))
            return 0;
    for (size_t i = 0; i < NB; i++)
        if (!(le_cls.bname[i] = PY(PyUnicode_InternFromString)(bnames[i])))
            return 0;
    /* 3.13's name for it, and before */
    le_cls.lookup = PY(PyObject_GetOptionalAttr) ? PY(PyObject_GetOptionalAttr) : PY(_PyObject_LookupAttr);
    if (!le_cls.lookup)
        return 0;
    PyObject *one = PY(PyLong_FromLong)(1), *zero = PY(PyLong_FromLong)(0), *three = PY(PyLong_FromLong)(3);
    le_cls.one_one = PY(PyTuple_New)(2);
    if (le_cls.one_one && one) {
        PY(Py_IncRef)(one);
        PY(PyTuple_SetItem)(le_cls.one_one, 0, one);
        PY(Py_IncRef)(one);
        PY(PyTuple_SetItem)(le_cls.one_one, 1, one);
    }
    le_cls.slice03 = zero && three ? PY(PySlice_New)(zero, three, NULL) : NULL;
    trlat_py_drop(one);
    trlat_py_drop(zero);
    trlat_py_drop(three);
    return le_cls.one_one && le_cls.slice03;
}

/* The globals and builtins run reads, as found: 1 still so. */
static int globals_current(void)
{
    if (fpy.watchers && le_cls.epoch == fpy.epoch)
        return 1;
    PyObject *major = fp_dget(le_cls.globals, le_cls.s_major), *minor = fp_dget(le_cls.globals, le_cls.s_minor);
    long ma = major && FP_TYPE(major) == fpy.t_long ? PY(PyLong_AsLong)(major) : -1;
    long mi = minor && FP_TYPE(minor) == fpy.t_long ? PY(PyLong_AsLong)(minor) : -1;
    PY(PyErr_Clear)();
    PyObject *td = fp_dict_of((PyObject *)le_cls.type);
    int ok = ma == 3 && mi >= 3 && mi <= 6 && fp_dget(le_cls.globals, le_cls.s_devfn) == le_cls.devfn &&
             fp_dget(le_cls.globals, le_cls.s_inspect) == le_cls.inspect &&
             fp_dget(le_cls.globals, le_cls.s_odict) == le_cls.odict && td && fp_dget(td, le_cls.s_key) == le_cls.key;
    PyObject *empty = ok ? fp_getattr(le_cls.inspect, le_cls.s__empty) : NULL;
    PY(PyErr_Clear)();
    ok = ok && empty == fpy.o_empty;
    trlat_py_drop(empty);
    for (size_t i = 0; ok && i < NB; i++)
        ok = !fp_dget(le_cls.globals, le_cls.bname[i]) && fp_dget(le_cls.builtins, le_cls.bname[i]) == le_cls.bval[i];
    if (ok)
        le_cls.epoch = fpy.epoch;
    return ok;
}

/* Whether type is a LibEntry whose run (orig) and key are the modelled
 * ones; decided once, for the first class named LibEntry. */
static int learn_class(void *type, PyObject *run)
{
    if (le_cls.state)
        return le_cls.state > 0 && type == le_cls.type && run == le_cls.run;
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
    le_cls.state = -1;
    const char *why = NULL;
    if (!PY(PyObject_GetItem) || !PY(PyNumber_Add) || !PY(PySlice_New) || !PY(PySequence_Tuple) ||
        !PY(PyFunction_GetGlobals) || !PY(PyObject_Vectorcall) || !PY(PyObject_VectorcallMethod) ||
        !PY(PyDict_GetItemWithError) || !PY(PyDict_Next) || !PY(PyType_IsSubtype) || !intern_all())
        why = "this Python lacks what it needs";
    PyObject *td = why ? NULL : fp_dict_of((PyObject *)type);
    PyObject *key = td ? fp_dget(td, le_cls.s_key) : NULL;
    if (!why && (!key || FP_TYPE(key) != fpy.t_function || FP_TYPE(run) != fpy.t_function))
        why = "its run or key is not a Python function";
    if (!why) {
        PyObject *check = fp_model_fn("check");
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
        le_cls.globals = PY(PyFunction_GetGlobals)(run);
        le_cls.builtins = le_cls.globals ? fp_dget(le_cls.globals, le_cls.s_builtins) : NULL;
        if (le_cls.builtins && FP_TYPE(le_cls.builtins) != fpy.t_dict)
            le_cls.builtins = fp_dict_of(le_cls.builtins); /* the module */
        le_cls.devfn = le_cls.globals ? fp_dget(le_cls.globals, le_cls.s_devfn) : NULL;
        le_cls.inspect = le_cls.globals ? fp_dget(le_cls.globals, le_cls.s_inspect) : NULL;
        le_cls.odict = le_cls.globals ? fp_dget(le_cls.globals, le_cls.s_odict) : NULL;
        for (size_t i = 0; i < NB && le_cls.builtins; i++)
            le_cls.bval[i] = fp_dget(le_cls.builtins, le_cls.bname[i]);
        int ok = le_cls.globals && le_cls.builtins && le_cls.devfn && le_cls.inspect && le_cls.odict;
        for (size_t i = 0; ok && i < NB; i++)
            ok = le_cls.bval[i] && !fp_dget(le_cls.globals, le_cls.bname[i]);
        if (!ok)
            why = "its module is not as modelled";
    }
    if (why) {
        if (fp_conf.debug)
            trlat_log_debug("fast path: libentry: LibEntry.run is never served above its compiled[grid] call: %s", why);
        return 0;
    }
    le_cls.type = type;
    le_cls.run = fp_hold(run);
    le_cls.key = fp_hold(key);
    fp_hold(le_cls.globals);
    fp_hold(le_cls.builtins);
    fp_hold(le_cls.devfn);
    fp_hold(le_cls.inspect);
    fp_hold(le_cls.odict);
    for (size_t i = 0; i < NB; i++)
        fp_hold(le_cls.bval[i]);
    fp_watch_dict(le_cls.globals);
    fp_watch_dict(le_cls.builtins);
    fp_watch_type((PyObject *)type);
    le_cls.epoch = fpy.epoch - 1;
    le_cls.state = 1;
    if (!globals_current()) {
        le_cls.state = -1;
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
    PyObject *jit = d ? fp_dget(d, le_cls.s_jit) : NULL;
    E->L = jit && FP_TYPE(jit) == (void *)fpy.jit_cls ? fp_layout_get(jit) : NULL;
    PyObject *sig = E->L ? fp_getattr(E->L->jitfn, le_cls.s_signature) : NULL;
    if (!E->L || E->L->bad)
        E->bad = "its function is not a JITFunction the fast path knows";
    else if (!sig || fp_dget(d, le_cls.s_signature) != sig)
        E->bad = "its signature is not its function's";
    else if (hold_list(fp_dget(d, le_cls.s_spec), E->specv, &E->nspec, FP_MAX_ARGS) ||
             hold_list(fp_dget(d, le_cls.s_dns), E->dnsv, &E->ndns, FP_MAX_ARGS))
        E->bad = "its parameter lists are not as its __init__ makes them";
    PY(PyErr_Clear)();
    if (E->L && E->L->stat)
        E->ph.name = E->L->stat->name;
    if (!E->bad) {
        E->jit = fp_hold(jit);
        E->sig = sig;
        sig = NULL;
        E->spec = fp_hold(fp_dget(d, le_cls.s_spec));
        E->dns = fp_hold(fp_dget(d, le_cls.s_dns));
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
    if (!d)
        return NULL;
    /* the dict as last found (its version: CPython 3.11-3.13) holds the
     * same objects; the lists' items are looked at every time */
    uint64_t v = fp_dict_version(d);
    if (!v || d != E->dict || v != E->dict_version) {
        E->dict = NULL;
        if (fp_dget(d, le_cls.s_jit) != E->jit || fp_dget(d, le_cls.s_signature) != E->sig ||
            fp_dget(d, le_cls.s_spec) != E->spec || fp_dget(d, le_cls.s_dns) != E->dns || fp_dget(d, le_cls.s_key) ||
            fp_dget(d, le_cls.s_run))
            return NULL;
        E->dict = d; /* compared, never followed: a new dict at its address has another version */
        E->dict_version = v;
    }
    if (list_same(E->spec, E->spec, E->specv, E->nspec) || list_same(E->dns, E->dns, E->dnsv, E->ndns))
        return NULL;
    return d;
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
    le_model_wrong(E, &once, "launched other than the model computed; that LibEntry is not served in C from now on",
                   &E->bad);
}

void le_model_wrong(struct le *E, atomic_flag *once, const char *what, const char **flag)
{
    trlat_log_once(once, "fast path verify: FlagGems' LibEntry.run of %s %s", E->L->stat->name, what);
    *flag = "verify found the model wrong";
    fp_count_stat(E->L->stat, FP_FALLBACK, FP_R_VERIFY);
}

/* What the model computed before anything runs: the cache entry's parts
 * (borrowed from it) and the launch arguments; 0 when it is not the hit
 * path modelled (the original runs). */
struct plan {
    PyObject *entry, *kernel, *constexprs, *tune, *heur, *hooks;
    PyObject *cache, *key; /* held where the key was not in the cache: run()'s first-call path */
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
        PyObject *name = L->p[j].name, *v = le_value_of(E, c, j);
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

static int plan(struct le *E, PyObject *d, const struct lcall *c, struct plan *P)
{
    const struct fp_layout *L = E->L;
    PyObject *caches = fp_dget(d, le_cls.s_kernel_cache);
    if (!caches || FP_TYPE(caches) != fpy.t_tuple || c->npos > (Py_ssize_t)L->n)
        return 0;
    struct fp_le_part parts[FP_MAX_ARGS];
    unsigned np;
    if (le_entry_parts(E, d, c, parts, &np))
        return 0;
    fp_le_phase(FP_LE_KEY);
    /* torch_device_fn.current_device(), as run() calls it (torch.cuda's
     * through its builtin: run() called it before it stored the entry this
     * call may find) */
    PyObject *cd = PY(PyObject_GetAttr)(le_cls.devfn, le_cls.s_current_device);
    PyObject *df = fp_device_builtin(cd);
    PyObject *dev = df ? PY(PyObject_Vectorcall)(df, NULL, 0, NULL) : NULL;
    trlat_py_drop(cd);
    long di = dev && FP_TYPE(dev) == fpy.t_long ? PY(PyLong_AsLong)(dev) : -1;
    trlat_py_drop(dev);
    PyObject *cache = di >= 0 && di < trlat_py_size(caches) ? PY(PyTuple_GetItem)(caches, di) : NULL;
    if (!cache || FP_TYPE(cache) != fpy.t_dict) {
        PY(PyErr_Clear)();
        le_parts_drop(parts, np);
        return 0;
    }
    /* one of the last keys, the dict unchanged: its entry without the tuple or the lookup */
    struct fp_le_sig sig;
    int memo = fp_le_sig_make(&sig, parts, np) == 0;
    P->entry = memo ? fp_le_last_find(E->last, &sig, cache) : NULL;
    if (P->entry && fp_conf.debug)
        fp_found_libentry_last++;
    if (!P->entry) {
        PyObject *key = le_key_tuple(parts, np);
        P->entry = key ? PY(PyDict_GetItemWithError)(cache, key) : NULL;
        if (P->entry && memo)
            fp_le_last_store(&E->last, &sig, cache, P->entry);
        if (!P->entry && key && !PY(PyErr_Occurred)()) {
            P->cache = fp_hold(cache);
            P->key = key;
            key = NULL;
        }
        trlat_py_drop(key);
        PY(PyErr_Clear)();
    }
    le_parts_drop(parts, np);
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
    PyObject *launcher = fp_getattr(P.kernel, le_cls.s__run);
    /* the grid, where known without calling anything: a grid function's
     * program's is checked too */
    unsigned pg[3];
    PyObject *g3 = PY(PyCallable_Check)(grid) ? le_grid_program(E, d, grid, c, P.constexprs, pg)
                                              : le_grid_cut(le_grid_plus(E, d, grid, c, P.constexprs));
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
    PyObject *g2 = le_grid_plus(E, d, grid, c, P.constexprs);
    fp_le_phase(FP_LE_GRID);
    if (g2 && le_pre_hooks(d, P.hooks, c) < 0) {
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
    PyObject *g3 = le_grid_cut(g2), *res = NULL;
    /* the library's own part ends where run() evaluates kernel[grid], as the
     * hooked __getitem__ marks it; the runner it would return is served
     * without being made, or else made and called */
    struct trlat_tstate *ts = trlat_tls;
    if (ts && ts->py_lib)
        trlat_pylib_mark(ts);
    /* with a tuple grid and no pre-hooks no Python ran since the key read
     * the pointer objects: the launch takes those reads */
    fp_ptrreads_arm(FP_TYPE(grid) == fpy.t_tuple && !trlat_py_size(P.hooks));
    fp_le_phase(FP_LE_GETITEM); /* no runner made: the launch's from here */
    int direct = g3 && fp_compiled_call(P.kernel, g3, P.all, P.n, &res);
    fp_ptrreads_clear();
    if (!direct) {
        PyObject *k = g3 ? PY(PyObject_GetItem)(P.kernel, g3) : NULL;
        fp_le_phase(FP_LE_GETITEM);
        res = k ? PY(PyObject_Vectorcall)(k, P.all, P.n, NULL) : NULL;
        trlat_py_drop(k);
    }
    trlat_py_drop(g3);
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
    return le_pair(P.kernel, P.constexprs);
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
        if (PY(PyTuple_GetItem)(kwnames, i) == le_cls.s_grid ||
            !PY(PyUnicode_CompareWithASCIIString)(PY(PyTuple_GetItem)(kwnames, i), "grid"))
            grid = c.kwv[i];
    struct plan P;
    P.cache = P.key = NULL; /* set where the key was not there */
    fp_le_phase(FP_LE_GUARDS);
    if (!grid || le_bind_keywords(E, &c) || !plan(E, d, &c, &P)) {
        fp_ptrreads_clear(); /* the original reads them again */
        PY(PyErr_Clear)();
        PyObject *r = NULL;
        if (P.key) {
            r = fp_conf.verify ? le_first_verify(E, d, orig, args, nargs, kwnames, P.cache, P.key)
                               : le_first_call(E, d, args, nargs, kwnames, P.cache, P.key);
            PY(Py_DecRef)(P.key);
            PY(Py_DecRef)(P.cache);
        }
        return r;
    }
    fp_le_phase(FP_LE_LOOKUP);
    /* held as run()'s locals hold its parts: a grid function may clear the cache */
    PY(Py_IncRef)(P.entry);
    if (fp_conf.verify)
        fp_ptrreads_clear(); /* the original reads them again */
    PyObject *r = fp_conf.verify ? verify(orig, args, nargs, kwnames, E, d, grid, &c, &P) : serve(E, d, grid, &c, &P);
    PY(Py_DecRef)(P.entry);
    fp_ptrreads_clear();
    return r;
}
