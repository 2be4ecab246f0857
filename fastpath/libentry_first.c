/* FlagGems' LibEntry.run for a key its kernel_cache lacks, its first-call
 * path, served in C as run() takes it (FlagGems 5.0.2, the reference in
 * libentry_model.py) for a LibEntry around a plain JITFunction or
 * Triton's Heuristics around one:
 *
 *     while entry_key not in cache:         (libentry.c looked it up)
 *         with self.lock:
 *             if entry_key in cache:
 *                 break
 *             kernel = self.fn.run(*args, **kwargs)
 *             fn = self.fn
 *             constexprs, heur_constexprs = {}, {}
 *             while not isinstance(fn, triton.runtime.JITFunction):
 *                 (isinstance(fn, triton.runtime.Heuristics))
 *                 for v, heur in fn.values.items():
 *                     heur_constexprs[v] = heur({**dict(zip(fn.arg_names, args)), **kwargs, **constexprs})
 *                     constexprs[v] = heur_constexprs[v]
 *                 fn = fn.fn
 *             for p in self.jit_function.params:
 *                 if p.is_constexpr and p.name not in constexprs and (p.default is not inspect._empty):
 *                     constexprs[p.name] = p.default
 *             cache[entry_key] = (kernel, constexprs, {}, heur_constexprs, ())
 *         return kernel, constexprs
 *
 * self.fn.run is what the program has (for a JITFunction trlat's hook,
 * whose fast path launches the kernel where it can), called with the
 * call's own arguments; each heuristic is called with a dict equal to
 * run()'s, in its order; the parameters' attributes are read as run()
 * reads them. What this skips is run()'s bytecode around them. A decode
 * whose shapes grow every step takes this path on every step for each
 * kernel whose sizes it changes: the key holds specialized ints by value.
 *
 * Served only while self.fn is that JITFunction or a chain of up to
 * LE_CHAIN Heuristics (exactly Triton's class, its values a dict) ending
 * in it, as found before the call: an Autotuner's first call tunes, and
 * the original runs. triton.runtime.JITFunction must be the kernel's
 * class and self.lock a multiprocessing Lock (whose __exit__ returns None:
 * it never swallows an error). When another thread stored the key while
 * this one waited for the lock, the original runs from its start, the
 * lock taken once more. Everything runs with the GIL held. */
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

#define LE_CHAIN 4 /* Heuristics around the JITFunction, at most */

/* self.fn down to the JITFunction (borrowed, as found before the call):
 * the Heuristics in link[0..n), their values dicts and arg_names in
 * values[] and names[]. */
struct chain {
    PyObject *link[LE_CHAIN], *values[LE_CHAIN], *names[LE_CHAIN];
    unsigned n;
};

/* The chain from fn to E->jit through instances of rt.Heuristics (Triton's
 * class, looked up when fn is not E->jit): 1, or 0 when it is anything
 * else. */
static int heuristics_chain(const struct le *E, PyObject *fn, PyObject *rt, struct chain *ch)
{
    PyObject *heur = NULL;
    int ok = 1;
    for (ch->n = 0; ok && fn != E->jit;) {
        if (!heur && !(heur = fp_getattr(rt, le_cls.s_heurcls)))
            break;
        PyObject *fd = FP_TYPE(fn) == heur && ch->n < LE_CHAIN ? fp_dict_of(fn) : NULL;
        PyObject *v = fp_dget(fd, le_cls.s_values), *an = fp_dget(fd, le_cls.s_arg_names);
        ok = v && FP_TYPE(v) == fpy.t_dict && an && (FP_TYPE(an) == fpy.t_list || FP_TYPE(an) == fpy.t_tuple);
        if (ok) {
            ch->link[ch->n] = fn;
            ch->values[ch->n] = v;
            ch->names[ch->n++] = an;
            ok = (fn = fp_dget(fd, le_cls.s_fn)) != NULL;
        }
    }
    trlat_py_drop(heur);
    PY(PyErr_Clear)();
    return ok && fn == E->jit;
}

/* Whether run()'s first-call path is the one served: the lock's methods
 * (borrowed) in enter and exit, self.fn's chain in ch. */
static int servable(const struct le *E, PyObject *d, PyObject **lock, PyObject **enter, PyObject **exit,
                    struct chain *ch)
{
    if (E->first_bad || !PY(_PyType_Lookup) || !PY(PyObject_VectorcallMethod))
        return 0;
    *lock = fp_dget(d, le_cls.s_lock);
    if (!*lock || !is_mp_lock(*lock) || !(*enter = special(*lock, le_cls.s_enter)) ||
        !(*exit = special(*lock, le_cls.s_exit)))
        return 0;
    /* isinstance(fn, triton.runtime.JITFunction), as run() asks after fn.run */
    PyObject *tr = fp_dget(le_cls.globals, le_cls.s_triton);
    PyObject *rt = tr ? fp_getattr(tr, fpy.s_runtime) : NULL;
    PyObject *cls = rt ? fp_getattr(rt, le_cls.s_jitcls) : NULL;
    PyObject *fn = fp_dget(d, le_cls.s_fn);
    int ok = cls && cls == FP_TYPE(E->jit) && fn && heuristics_chain(E, fn, rt, ch);
    trlat_py_drop(rt);
    trlat_py_drop(cls);
    PY(PyErr_Clear)();
    return ok;
}

/* The parameters' defaults added to constexprs as run() adds them from
 * self.jit_function.params, each attribute read as often and in the order
 * it reads them: 0, or -1 with the error one raised. */
static int defaults_into(PyObject *jit, PyObject *ce)
{
    /* its items as `for p in params` takes them (Triton's is a list) */
    PyObject *params = PY(PyObject_GetAttr)(jit, fpy.s_params);
    PyObject *items = params ? PY(PySequence_Tuple)(params) : NULL;
    trlat_py_drop(params);
    if (!items)
        return -1;
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
    return err ? -1 : 0;
}

/* The chain's heuristics called as run() calls them, each with
 * {**dict(zip(fn.arg_names, args)), **kwargs, **constexprs}, its value
 * put in heur and constexprs: 0, or -1 with the error one raised. */
static int heuristics_into(const struct chain *ch, PyObject *const *pos, Py_ssize_t npos, PyObject *const *kwv,
                           PyObject *kwnames, PyObject *ce, PyObject *heur)
{
    Py_ssize_t nkw = kwnames ? trlat_py_size(kwnames) : 0;
    for (unsigned i = 0; i < ch->n; i++) {
        PyObject *v, *h;
        /* `for v, heur in fn.values.items()` over its items as they were when the loop began */
        PyObject *values = PY(PyDict_Copy)(ch->values[i]);
        int err = !values;
        for (Py_ssize_t at = 0; !err && PY(PyDict_Next)(values, &at, &v, &h);) {
            /* zip(fn.arg_names, args) over the names as they are now (a heuristic may change the list) */
            PyObject *names = PY(PySequence_Tuple)(ch->names[i]), *r = NULL;
            PyObject *m = names ? PY(PyDict_New)() : NULL;
            for (Py_ssize_t j = 0; m && !err && j < trlat_py_size(names) && j < npos; j++)
                err = PY(PyDict_SetItem)(m, PY(PyTuple_GetItem)(names, j), pos[j]) < 0;
            trlat_py_drop(names);
            for (Py_ssize_t j = 0; m && !err && j < nkw; j++)
                err = PY(PyDict_SetItem)(m, PY(PyTuple_GetItem)(kwnames, j), kwv[j]) < 0;
            err = err || !m || PY(PyDict_Update)(m, ce) < 0 || !(r = PY(PyObject_Vectorcall)(h, &m, 1, NULL)) ||
                  PY(PyDict_SetItem)(heur, v, r) < 0 || PY(PyDict_SetItem)(ce, v, r) < 0;
            trlat_py_drop(r);
            trlat_py_drop(m);
        }
        trlat_py_drop(values);
        if (err)
            return -1;
    }
    return 0;
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

/* (kernel, constexprs, {}, heur_constexprs, ()) stored at key; the
 * call's result, (kernel, constexprs). Steals kernel. */
static PyObject *store(const struct le *E, const struct chain *ch, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames, PyObject *cache, PyObject *key, PyObject *kernel)
{
    PyObject *ce = PY(PyDict_New)(), *heur = PY(PyDict_New)();
    PyObject *e = ce && heur && heuristics_into(ch, args + 1, nargs - 1, args + nargs, kwnames, ce, heur) == 0 &&
                          defaults_into(E->jit, ce) == 0
                      ? PY(PyTuple_New)(5)
                      : NULL;
    if (!e) {
        trlat_py_drop(ce);
        trlat_py_drop(heur);
        PY(Py_DecRef)(kernel);
        return NULL;
    }
    PyObject *tune = PY(PyDict_New)(), *hooks = PY(PyTuple_New)(0);
    PY(Py_IncRef)(kernel);
    PY(Py_IncRef)(ce);
    PyObject *items[5] = {kernel, ce, tune, heur, hooks};
    int ok = tune && hooks;
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

/* The chain's objects held while run() holds them, or let go. */
static void chain_hold(const struct chain *ch, int hold)
{
    for (unsigned i = 0; i < ch->n; i++) {
        PyObject *o[3] = {ch->link[i], ch->values[i], ch->names[i]};
        for (unsigned j = 0; j < 3; j++)
            hold ? PY(Py_IncRef)(o[j]) : PY(Py_DecRef)(o[j]);
    }
}

PyObject *le_first_call(struct le *E, PyObject *d, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                        PyObject *cache, PyObject *key)
{
    Py_ssize_t nkw = kwnames ? trlat_py_size(kwnames) : 0;
    PyObject *lock, *enter, *exit;
    struct chain ch;
    if (nargs < 1 || nargs + nkw > FIRST_ARGS || !servable(E, d, &lock, &enter, &exit, &ch))
        return NULL;
    /* what `with` holds: the lock and its bound __exit__ */
    PY(Py_IncRef)(lock);
    PY(Py_IncRef)(exit);
    chain_hold(&ch, 1);
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
        a[1] = ch.n ? ch.link[0] : E->jit;
        memcpy(a + 2, args + 1, (size_t)(nargs - 1 + nkw) * sizeof *a);
        r = PY(PyObject_VectorcallMethod)(le_cls.s_run, a + 1, (size_t)nargs | TRLAT_PY_VECTORCALL_ARGUMENTS_OFFSET,
                                          kwnames);
        if (r)
            r = store(E, &ch, args, nargs, kwnames, cache, key, r);
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
    chain_hold(&ch, 0);
    PY(Py_DecRef)(exit);
    PY(Py_DecRef)(lock);
    return r;
}

/* The constexprs run() stores given the heuristics' values it stored
 * (heur): each chain value's name in order, then the defaults (new
 * reference; NULL when heur lacks one or has others). */
static PyObject *model_constexprs(const struct le *E, const struct chain *ch, PyObject *heur)
{
    PyObject *ce = FP_TYPE(heur) == fpy.t_dict ? PY(PyDict_New)() : NULL, *v, *h;
    int ok = ce != NULL;
    for (unsigned i = 0; ok && i < ch->n; i++)
        for (Py_ssize_t at = 0; ok && PY(PyDict_Next)(ch->values[i], &at, &v, &h);) {
            PyObject *x = PY(PyDict_GetItemWithError)(heur, v);
            ok = x && PY(PyDict_SetItem)(ce, v, x) == 0;
        }
    ok = ok && PY(PyDict_Size)(ce) == PY(PyDict_Size)(heur) && defaults_into(E->jit, ce) == 0;
    PY(PyErr_Clear)();
    if (!ok)
        trlat_py_drop(ce);
    return ok ? ce : NULL;
}

PyObject *le_first_verify(struct le *E, PyObject *d, PyObject *orig, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames, PyObject *cache, PyObject *key)
{
    PyObject *lock, *enter, *exit;
    struct chain ch;
    if (!servable(E, d, &lock, &enter, &exit, &ch))
        return NULL;
    chain_hold(&ch, 1);
    PyObject *result = PY(PyObject_Vectorcall)(orig, args, (size_t)nargs, kwnames);
    if (!result) {
        chain_hold(&ch, 0);
        return NULL; /* raised as it raises */
    }
    /* the entry the original stored, against the model's */
    PyObject *e = PY(PyDict_GetItemWithError)(cache, key);
    int ok = e && FP_TYPE(e) == fpy.t_tuple && trlat_py_size(e) == 5 && FP_TYPE(result) == fpy.t_tuple &&
             trlat_py_size(result) == 2;
    PyObject *ce = ok ? model_constexprs(E, &ch, PY(PyTuple_GetItem)(e, 3)) : NULL;
    PY(PyErr_Clear)();
    PyObject *c = ok ? PY(PyTuple_GetItem)(e, 1) : NULL, *t = ok ? PY(PyTuple_GetItem)(e, 2) : NULL;
    ok = ok && ce && PY(PyTuple_GetItem)(e, 0) == PY(PyTuple_GetItem)(result, 0) &&
         c == PY(PyTuple_GetItem)(result, 1) && FP_TYPE(c) == fpy.t_dict &&
         PY(PyDict_Size)(c) == PY(PyDict_Size)(ce) + (fp_conf.grid == TRLAT_FP_GRID_SKEW) && /* skew: tests only */
         FP_TYPE(t) == fpy.t_dict && PY(PyDict_Size)(t) == 0;
    ok = ok && FP_TYPE(PY(PyTuple_GetItem)(e, 4)) == fpy.t_tuple && trlat_py_size(PY(PyTuple_GetItem)(e, 4)) == 0;
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (ok && PY(PyDict_Next)(ce, &pos, &k, &v))
        ok = PY(PyDict_GetItemWithError)(c, k) == v; /* the names hash and compare in C */
    PY(PyErr_Clear)();
    trlat_py_drop(ce);
    chain_hold(&ch, 0);
    if (ok)
        return result;
    static atomic_flag once;
    le_model_wrong(E, &once,
                   "stored an entry other than the model computed on its first call; its first calls run the "
                   "original from now on",
                   &E->first_bad);
    return result;
}
