/* FlagGems' LibEntry.run for a key its kernel_cache lacks, its first-call
 * path, served in C as run() takes it (FlagGems 5.0.2, the reference in
 * libentry_model.py) for a LibEntry around a plain JITFunction:
 *
 *     while entry_key not in cache:         (libentry.c looked it up)
 *         with self.lock:
 *             if entry_key in cache:
 *                 break
 *             kernel = self.fn.run(*args, **kwargs)
 *             constexprs = {}
 *             for p in self.jit_function.params:
 *                 if p.is_constexpr and p.name not in constexprs and (p.default is not inspect._empty):
 *                     constexprs[p.name] = p.default
 *             cache[entry_key] = (kernel, constexprs, {}, {}, ())
 *         return kernel, constexprs
 *
 * self.fn.run is what the program has for JITFunction.run (trlat's hook,
 * whose fast path launches the kernel where it can), called with the
 * call's own arguments; the parameters' attributes are read as run()
 * reads them. What this skips is run()'s bytecode around them. A decode
 * whose shapes grow every step takes this path on every step for each
 * kernel whose sizes it changes: the key holds specialized ints by value.
 *
 * Served only while self.fn is that JITFunction (an Autotuner's or
 * Heuristics' first call tunes or computes constexprs: the original runs),
 * triton.runtime.JITFunction is its class and self.lock is a
 * multiprocessing Lock (whose __exit__ returns None: it never swallows an
 * error). When another thread stored the key while this one waited for
 * the lock, the original runs from its start, the lock taken once more.
 * Everything runs with the GIL held. */
#include "fastpath/libentry.h"
#include "interpose/log.h"

#include <stdatomic.h>
#include <string.h>

uint64_t fp_found_libentry_first; /* under TRLAT_FASTPATH_DEBUG */

#define FIRST_ARGS (FP_MAX_ARGS + FP_MAX_KW + 1) /* self.fn and what the call passed */

static void *lock_type; /* multiprocessing.synchronize.Lock, once one was seen */

static int named(PyObject *o, PyObject *attr, const char *want)
{
    PyObject *v = fp_getattr(o, attr);
    int ok = v && FP_TYPE(v) == fpy.t_str && !PY(PyUnicode_CompareWithASCIIString)(v, want);
    trlat_py_drop(v);
    PY(PyErr_Clear)();
    return ok;
}

/* The lock's class's __enter__ or __exit__, as `with` looks it up: a
 * Python function (borrowed), else NULL. */
static PyObject *special(PyObject *lock, PyObject *name)
{
    PyObject *f = PY(_PyType_Lookup)(FP_TYPE(lock), name);
    return f && FP_TYPE(f) == fpy.t_function ? f : NULL;
}

static int is_mp_lock(PyObject *lock)
{
    void *t = FP_TYPE(lock);
    if (t == lock_type)
        return 1;
    if (lock_type || !named((PyObject *)t, fpy.s___name__, "Lock") ||
        !named((PyObject *)t, le_cls.s_module, "multiprocessing.synchronize"))
        return 0;
    lock_type = t; /* compared, never followed */
    return 1;
}

/* Whether run()'s first-call path is the one served: the lock's methods
 * (borrowed) in enter and exit. */
static int servable(const struct le *E, PyObject *d, PyObject **lock, PyObject **enter, PyObject **exit)
{
    if (E->first_bad || fp_dget(d, le_cls.s_fn) != E->jit || !PY(_PyType_Lookup) || !PY(PyObject_VectorcallMethod))
        return 0;
    *lock = fp_dget(d, le_cls.s_lock);
    if (!*lock || !is_mp_lock(*lock) || !(*enter = special(*lock, le_cls.s_enter)) ||
        !(*exit = special(*lock, le_cls.s_exit)))
        return 0;
    /* isinstance(self.fn, triton.runtime.JITFunction), as run() asks after fn.run */
    PyObject *tr = fp_dget(le_cls.globals, le_cls.s_triton);
    PyObject *rt = tr ? fp_getattr(tr, fpy.s_runtime) : NULL;
    PyObject *cls = rt ? fp_getattr(rt, le_cls.s_jitcls) : NULL;
    int ok = cls && cls == FP_TYPE(E->jit);
    trlat_py_drop(rt);
    trlat_py_drop(cls);
    PY(PyErr_Clear)();
    return ok;
}

/* constexprs as run() builds it from self.jit_function.params, each
 * attribute read as often and in the order it reads them (new reference;
 * NULL with the error one raised). */
static PyObject *constexprs_of(PyObject *jit)
{
    /* its items as `for p in params` takes them (Triton's is a list) */
    PyObject *params = PY(PyObject_GetAttr)(jit, fpy.s_params);
    PyObject *items = params ? PY(PySequence_Tuple)(params) : NULL, *ce = items ? PY(PyDict_New)() : NULL;
    trlat_py_drop(params);
    if (!ce) {
        trlat_py_drop(items);
        return NULL;
    }
    int err = 0;
    for (Py_ssize_t i = 0; !err && i < trlat_py_size(items); i++) {
        PyObject *p = PY(PyTuple_GetItem)(items, i), *name, *dflt, *c;
        PY(Py_IncRef)(p);
        /* p.is_constexpr and p.name not in constexprs and (p.default is not inspect._empty)
         * (t: 1 so far true, 0 false, -1 raised) */
        int t = (c = PY(PyObject_GetAttr)(p, fpy.s_is_constexpr)) ? PY(PyObject_IsTrue)(c) : -1;
        trlat_py_drop(c);
        if (t > 0) {
            name = PY(PyObject_GetAttr)(p, fpy.s_name);
            PyObject *have = name ? PY(PyDict_GetItemWithError)(ce, name) : NULL;
            t = !name || (!have && PY(PyErr_Occurred)()) ? -1 : !have;
            trlat_py_drop(name);
        }
        if (t > 0) {
            dflt = PY(PyObject_GetAttr)(p, fpy.s_default);
            t = !dflt ? -1 : dflt != fpy.o_empty;
            trlat_py_drop(dflt);
        }
        if (t > 0) { /* constexprs[p.name] = p.default: the value first */
            dflt = PY(PyObject_GetAttr)(p, fpy.s_default);
            name = dflt ? PY(PyObject_GetAttr)(p, fpy.s_name) : NULL;
            t = name && PY(PyDict_SetItem)(ce, name, dflt) == 0 ? 1 : -1;
            trlat_py_drop(name);
            trlat_py_drop(dflt);
        }
        err = t < 0;
        PY(Py_DecRef)(p);
    }
    PY(Py_DecRef)(items);
    if (err) {
        PY(Py_DecRef)(ce);
        return NULL;
    }
    return ce;
}

/* `with`'s exit: __exit__(lock, type, value, traceback) with the error
 * being raised, else with Nones; -1 when __exit__ raised (its error set,
 * the one before dropped). Lock's returns None: it never swallows one. */
static int leave(PyObject *exit, PyObject *lock, int failing)
{
    PyObject *t = NULL, *v = NULL, *tb = NULL;
    if (failing) {
        PY(PyErr_Fetch)(&t, &v, &tb);
        if (PY(PyErr_NormalizeException))
            PY(PyErr_NormalizeException)(&t, &v, &tb);
    }
    PyObject *a[4] = {lock, t ? t : fpy.o_none, v ? v : fpy.o_none, tb ? tb : fpy.o_none};
    PyObject *x = PY(PyObject_Vectorcall)(exit, a, 4, NULL);
    if (!x) {
        trlat_py_drop(t);
        trlat_py_drop(v);
        trlat_py_drop(tb);
        return -1;
    }
    PY(Py_DecRef)(x);
    if (failing)
        PY(PyErr_Restore)(t, v, tb);
    return 0;
}

/* (kernel, constexprs, {}, {}, ()) stored at key; the call's result, (kernel, constexprs). */
static PyObject *store(PyObject *jit, PyObject *cache, PyObject *key, PyObject *kernel)
{
    PyObject *ce = constexprs_of(jit);
    PyObject *e = ce ? PY(PyTuple_New)(5) : NULL;
    if (!e) {
        trlat_py_drop(ce);
        PY(Py_DecRef)(kernel);
        return NULL;
    }
    PyObject *tune = PY(PyDict_New)(), *heur = PY(PyDict_New)(), *hooks = PY(PyTuple_New)(0);
    PY(Py_IncRef)(kernel);
    PY(Py_IncRef)(ce);
    PyObject *items[5] = {kernel, ce, tune, heur, hooks};
    int ok = tune && heur && hooks;
    for (Py_ssize_t i = 0; i < 5; i++)
        if (items[i])
            PY(PyTuple_SetItem)(e, i, items[i]);
    ok = ok && PY(PyDict_SetItem)(cache, key, e) == 0;
    PY(Py_DecRef)(e);
    if (!ok) {
        PY(Py_DecRef)(kernel);
        PY(Py_DecRef)(ce);
        return NULL;
    }
    return le_pair(kernel, ce);
}

PyObject *le_first_call(struct le *E, PyObject *d, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                        PyObject *cache, PyObject *key)
{
    Py_ssize_t nkw = kwnames ? trlat_py_size(kwnames) : 0;
    PyObject *lock, *enter, *exit;
    if (nargs < 1 || nargs + nkw > FIRST_ARGS || !servable(E, d, &lock, &enter, &exit))
        return NULL;
    /* what `with` holds: the lock and its bound __exit__ */
    PY(Py_IncRef)(lock);
    PY(Py_IncRef)(exit);
    PyObject *r = PY(PyObject_Vectorcall)(enter, &lock, 1, NULL);
    if (!r)
        goto out;
    PY(Py_DecRef)(r);
    r = PY(PyDict_GetItemWithError)(cache, key);
    if (r) { /* another thread's first call stored it meanwhile: the original runs */
        r = NULL;
        if (leave(exit, lock, 0) == 0 && fp_conf.debug)
            trlat_log_debug("fast path: libentry: a first call of %s found its key stored meanwhile", E->L->stat->name);
        goto out;
    }
    if (!PY(PyErr_Occurred)()) {
        /* self.fn.run(*args, **kwargs): args[1:] and the keywords as passed */
        PyObject *a[FIRST_ARGS + 1];
        a[1] = E->jit;
        memcpy(a + 2, args + 1, (size_t)(nargs - 1 + nkw) * sizeof *a);
        r = PY(PyObject_VectorcallMethod)(le_cls.s_run, a + 1, (size_t)nargs | TRLAT_PY_VECTORCALL_ARGUMENTS_OFFSET,
                                          kwnames);
        if (r)
            r = store(E->jit, cache, key, r);
    }
    if (leave(exit, lock, !r) < 0) {
        trlat_py_drop(r);
        r = NULL;
    } else if (r) {
        if (E->L->stat)
            E->L->stat->library_hits++;
        if (fp_conf.debug)
            fp_found_libentry_first++;
    }
out:
    PY(Py_DecRef)(exit);
    PY(Py_DecRef)(lock);
    return r;
}

PyObject *le_first_verify(struct le *E, PyObject *d, PyObject *orig, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames, PyObject *cache, PyObject *key)
{
    PyObject *lock, *enter, *exit;
    if (!servable(E, d, &lock, &enter, &exit))
        return NULL;
    PyObject *result = PY(PyObject_Vectorcall)(orig, args, (size_t)nargs, kwnames);
    if (!result)
        return NULL; /* raised as it raises */
    /* the entry the original stored, against the model's */
    PyObject *e = PY(PyDict_GetItemWithError)(cache, key);
    PyObject *ce = e ? constexprs_of(E->jit) : NULL;
    PY(PyErr_Clear)();
    int ok = e && FP_TYPE(e) == fpy.t_tuple && trlat_py_size(e) == 5 && FP_TYPE(result) == fpy.t_tuple &&
             trlat_py_size(result) == 2 && ce;
    PyObject *c = ok ? PY(PyTuple_GetItem)(e, 1) : NULL;
    ok = ok && PY(PyTuple_GetItem)(e, 0) == PY(PyTuple_GetItem)(result, 0) && c == PY(PyTuple_GetItem)(result, 1) &&
         FP_TYPE(c) == fpy.t_dict &&
         PY(PyDict_Size)(c) == PY(PyDict_Size)(ce) + (fp_conf.grid == TRLAT_FP_GRID_SKEW); /* skew: tests only */
    for (unsigned i = 2; ok && i < 4; i++) {
        PyObject *x = PY(PyTuple_GetItem)(e, i);
        ok = FP_TYPE(x) == fpy.t_dict && PY(PyDict_Size)(x) == 0;
    }
    ok = ok && FP_TYPE(PY(PyTuple_GetItem)(e, 4)) == fpy.t_tuple && trlat_py_size(PY(PyTuple_GetItem)(e, 4)) == 0;
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (ok && PY(PyDict_Next)(ce, &pos, &k, &v))
        ok = PY(PyDict_GetItemWithError)(c, k) == v; /* the names hash and compare in C */
    PY(PyErr_Clear)();
    trlat_py_drop(ce);
    if (ok)
        return result;
    static atomic_flag once;
    le_model_wrong(E, &once,
                   "stored an entry other than the model computed on its first call; its first calls run the "
                   "original from now on",
                   &E->first_bad);
    return result;
}
