/* kernel[grid](...) without Python in between: JITFunction.__getitem__
 * (KernelInterface's, jit.py: `return lambda *args, **kwargs:
 * self.run(grid=grid, warmup=False, *args, **kwargs)`) is replaced by a C
 * method returning a small C callable bound to (jitfn, grid). Called, it
 * keys the call and replays on a hit; otherwise it calls self.run(grid=grid,
 * warmup=False, *args, **kwargs) exactly as the lambda would, handing the
 * key it computed to the run hook (fp_prekey_tls) so a miss is keyed once.
 * Calls it cannot mirror exactly (grid or warmup among the keywords, a
 * subclass, a fast path that is off) go through the original lambda.
 * KernelInterface's other subclasses (FlagGems' LibEntry) get a launcher
 * that makes the lambda's call, self.run(...), without the lambda. */
#include "fastpath/fp_py.h"
#include "fastpath/keep.h"
#include "fastpath/phases.h"
#include "interpose/python/pyhook.h"
#include "interpose/clock.h"
#include "interpose/log.h"
#include "interpose/tstate.h"

#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

struct fp_launcher {
    struct fp_bound b; /* owner: the JITFunction */
};

_Thread_local struct fp_prekey *fp_prekey_tls __attribute__((tls_model("initial-exec")));
static PyObject *launcher_type, *orig_getitem, *s_grid_warmup;

static struct fp_pool pool; /* freed launchers (keep.h) */

static void launcher_dealloc(PyObject *self)
{
    fp_pool_put(&pool, &((struct fp_launcher *)self)->b);
}

/* Launchers kept for held tuple grids (keep.h). */
static struct fp_keep kept;

/* The original: KernelInterface.__getitem__(jitfn, grid)(*args, **kwargs). */
static PyObject *via_lambda(struct fp_launcher *l, PyObject *grid, PyObject *const *args, size_t nargsf,
                            PyObject *kwnames)
{
    PyObject *a[2] = {l->b.owner, grid};
    PyObject *f = PY(PyObject_Vectorcall)(orig_getitem, a, 2, NULL);
    if (!f)
        return NULL;
    PyObject *r = PY(PyObject_Vectorcall)(f, args, nargsf, kwnames);
    PY(Py_DecRef)(f);
    return r;
}

static int names_run_keyword(PyObject *kwnames)
{
    Py_ssize_t n = PY(PyTuple_Size)(kwnames);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *k = PY(PyTuple_GetItem)(kwnames, i);
        if (PY(PyUnicode_Compare)(k, fpy.s_grid) == 0 || PY(PyUnicode_Compare)(k, fpy.s_warmup) == 0)
            return 1;
    }
    PY(PyErr_Clear)();
    return 0;
}

/* What the launcher needs of a call's keyword names, cached by the tuple's
 * identity (a call site passes the same constant tuple every time; the
 * tuple is held, so its address stays its own): whether they name grid or
 * warmup (run()'s own), and ("grid", "warmup") + kwnames for calling run().
 * NULL with a Python error set when out of memory. */
struct kwinfo {
    PyObject *in, *out;
    int run_kw;
};

static struct kwinfo *kw_info(PyObject *kwnames)
{
    static struct kwinfo cache[16];
    static unsigned next;
    for (unsigned i = 0; i < 16; i++)
        if (cache[i].in == kwnames)
            return &cache[i];
    Py_ssize_t n = PY(PyTuple_Size)(kwnames);
    PyObject *t = PY(PyTuple_New)(n + 2);
    if (!t)
        return NULL;
    PyObject *names[2] = {fpy.s_grid, fpy.s_warmup};
    for (Py_ssize_t i = 0; i < n + 2; i++) {
        PyObject *x = i < 2 ? names[i] : PY(PyTuple_GetItem)(kwnames, i - 2);
        PY(Py_IncRef)(x);
        PY(PyTuple_SetItem)(t, i, x);
    }
    struct kwinfo *e = &cache[next++ % 16];
    trlat_py_drop(e->in);
    trlat_py_drop(e->out);
    PY(Py_IncRef)(kwnames);
    e->in = kwnames;
    e->out = t;
    e->run_kw = names_run_keyword(kwnames);
    return e;
}

/* Whether kwnames names grid or warmup (1 too when that cannot be told). */
static int has_run_keyword(PyObject *kwnames)
{
    if (!kwnames)
        return 0;
    struct kwinfo *e = kw_info(kwnames);
    if (!e)
        PY(PyErr_Clear)();
    return e ? e->run_kw : 1;
}

/* ("grid", "warmup") + kwnames (new reference), or NULL with an error set. */
static PyObject *kwnames_for(PyObject *kwnames)
{
    PyObject *t = s_grid_warmup;
    if (kwnames) {
        struct kwinfo *e = kw_info(kwnames);
        if (!e)
            return NULL;
        t = e->out;
    }
    PY(Py_IncRef)(t);
    return t;
}

static int too_many(Py_ssize_t nargs, PyObject *kwnames)
{
    return nargs > FP_MAX_ARGS || (kwnames && trlat_py_size(kwnames) > FP_MAX_KW);
}

/* self.run(grid=grid, warmup=False, *args, **kwargs), as the lambda calls
 * it (not too_many): kn is ("grid", "warmup") + kwnames, held by the caller. */
static PyObject *call_run(struct fp_launcher *l, PyObject *grid, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames, PyObject *kn)
{
    Py_ssize_t nkw = kwnames ? trlat_py_size(kwnames) : 0;
    PyObject *argv[1 + 1 + FP_MAX_ARGS + 2 + FP_MAX_KW];
    PyObject **a = argv + 1; /* argv[0]: room for the callee (ARGUMENTS_OFFSET) */
    a[0] = l->b.owner;
    for (Py_ssize_t i = 0; i < nargs; i++)
        a[1 + i] = args[i];
    a[1 + nargs] = grid;
    a[2 + nargs] = fpy.o_false;
    for (Py_ssize_t i = 0; i < nkw; i++)
        a[3 + nargs + i] = args[nargs + i];
    return PY(PyObject_VectorcallMethod)(fpy.s_run, a, (size_t)(nargs + 1) | TRLAT_PY_VECTORCALL_ARGUMENTS_OFFSET, kn);
}

/* The same, with pk for the hook. */
static PyObject *via_run(struct fp_launcher *l, PyObject *grid, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames, struct fp_call *pk_call, uint64_t t0, uint64_t site)
{
    if (too_many(nargs, kwnames))
        return via_lambda(l, grid, args, (size_t)nargs, kwnames);
    PyObject *kn = kwnames_for(kwnames);
    if (!kn)
        return NULL;
    struct fp_prekey pk = {l->b.owner, pk_call, t0, site}, *saved = fp_prekey_tls;
    fp_prekey_tls = &pk;
    PyObject *r = call_run(l, grid, args, nargs, kwnames, kn);
    fp_prekey_tls = saved;
    PY(Py_DecRef)(kn);
    return r;
}

static PyObject *launcher_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (__builtin_expect(fp_phases_on, 0)) {
        memset(fp_phase_t, 0, sizeof fp_phase_t);
        memset(fp_sub_t, 0, sizeof fp_sub_t);
    }
    fp_phase(FP_PH_ENTRY);
    struct fp_launcher *l = (struct fp_launcher *)self;
    Py_ssize_t nargs = (Py_ssize_t)(nargsf & ~TRLAT_PY_VECTORCALL_ARGUMENTS_OFFSET);
    if (!__atomic_load_n(&fp_conf.on, __ATOMIC_RELAXED) || fpy.ready <= 0 || has_run_keyword(kwnames))
        return via_lambda(l, l->b.grid, args, nargsf, kwnames);
    /* What the run hook notes for a call (pyhook_call.c), for a replay that
     * never reaches it: the entry time and the caller's site. */
    struct trlat_pyserve ps;
    trlat_pyserve_open(&ps);
    struct fp_call c;
    struct fp_call *miss = NULL;
    PyObject *grid = l->b.grid, *odd = NULL, *k = NULL;
    int reason = FP_R_BINDING, served = 0;
    struct fp_entry *e;
    if (fp_call_from_vector(&c, l->b.owner, l->b.grid, args, nargs, kwnames) == 0) {
        fp_phase(FP_PH_ARGS);
        switch (fp_lookup(&c, &e, &reason)) {
        case FP_HIT:
            k = fp_serve(&c, e, 1, &reason, &odd);
            fp_phase(FP_PH_SERVE);
            if (k) {
                served = 1;
                fp_count(c.L, FP_HIT, 0);
            } else if (PY(PyErr_Occurred)()) { /* raised as Triton would */
                served = 1;
                fp_count(c.L, FP_FALLBACK, reason);
            } else {
                fp_count(c.L, FP_FALLBACK, reason);
                if (odd)
                    grid = odd; /* the grid function ran: Triton gets its result */
            }
            break;
        case FP_MISS:
            miss = &c; /* the run hook captures it */
            break;
        default:
            fp_count(c.L, FP_FALLBACK, reason);
        }
    } else {
        fp_count(fp_layout_get(l->b.owner), FP_FALLBACK, FP_R_BINDING);
        c.device_obj = NULL;
    }
    if (ps.ts) {
        uint32_t launches = trlat_pycall_close(ps.ts, &ps.saved);
        if (served) /* a replay (or its launch error, raised as Triton would) */
            trlat_pyhook_count_call(ps.ts, k ? launches : 0, 0, 0);
    }
    if (!served)
        k = via_run(l, grid, args, nargs, kwnames, miss, ps.t0, ps.site); /* the run hook times it from t0 */
    trlat_py_drop(odd);
    fp_call_release(&c);
    if (__builtin_expect(fp_phases_on, 0) && served && k) {
        fp_phase(FP_PH_EXIT);
        fp_phases_commit();
    }
    return k;
}

/* kernel[grid](...) of another KernelInterface subclass (a library's
 * LibEntry, Triton's Autotuner and Heuristics): the lambda's one call,
 * self.run(grid=grid, warmup=False, *args, **kwargs), made without the
 * lambda. Its run times the call from its own entry, as it does when the
 * lambda calls it. */
static PyObject *sub_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    struct fp_launcher *l = (struct fp_launcher *)self;
    Py_ssize_t nargs = (Py_ssize_t)(nargsf & ~TRLAT_PY_VECTORCALL_ARGUMENTS_OFFSET);
    struct kwinfo *e = NULL;
    int lambda = !__atomic_load_n(&fp_conf.on, __ATOMIC_RELAXED) || too_many(nargs, kwnames);
    if (!lambda && kwnames && (!(e = kw_info(kwnames)) || e->run_kw)) {
        PY(PyErr_Clear)();
        lambda = 1;
    }
    if (lambda)
        return via_lambda(l, l->b.grid, args, nargsf, kwnames);
    PyObject *kn = e ? e->out : s_grid_warmup;
    PY(Py_IncRef)(kn); /* a nested call's kw_info may replace its entry */
    PyObject *r = call_run(l, l->b.grid, args, nargs, kwnames, kn);
    PY(Py_DecRef)(kn);
    return r;
}

static PyObject *bind(PyObject *self, PyObject *grid, void *call)
{
    int keep;
    struct fp_launcher *l = (struct fp_launcher *)fp_keep_take(&kept, self, grid, &keep);
    if (l)
        return (PyObject *)l;
    if (!(l = (struct fp_launcher *)fp_pool_get(&pool, launcher_type)))
        return NULL;
    l->b.vectorcall = call;
    PY(Py_IncRef)(self);
    PY(Py_IncRef)(grid);
    l->b.owner = self;
    l->b.grid = grid;
    if (keep)
        fp_keep_add(&kept, &l->b);
    return (PyObject *)l;
}

static PyObject *sub_getitem(PyObject *self, PyObject *grid)
{
    return bind(self, grid, (void *)sub_call);
}

static PyObject *getitem(PyObject *self, PyObject *grid)
{
    if (FP_TYPE(self) != (void *)fpy.jit_cls) { /* a subclass: its own semantics */
        PyObject *a[2] = {self, grid};
        return PY(PyObject_Vectorcall)(orig_getitem, a, 2, NULL);
    }
    return bind(self, grid, (void *)launcher_call);
}

static struct py_member members[] = {
    {"__vectorcalloffset__", PY_T_PYSSIZET, offsetof(struct fp_launcher, b.vectorcall), PY_READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};

static struct trlat_pymethoddef getitem_def = {
    "__getitem__", (void *)getitem, TRLAT_METH_O,
    "kernel[grid] -> a launcher that replays memoized launches (trlat TRLAT_FASTPATH)"};
static struct trlat_pymethoddef sub_getitem_def = {
    "__getitem__", (void *)sub_getitem, TRLAT_METH_O,
    "kernel[grid] -> a launcher that calls kernel.run(grid=grid, warmup=False, ...) (trlat TRLAT_FASTPATH)"};

/* kernel[grid] straight to getitem(): setting __getitem__ on the class made
 * its mp_subscript CPython's generic slot, which looks the name up on the
 * type and calls the descriptor; the same function is put there directly.
 * A later assignment of JITFunction.__getitem__ resets the slot (CPython's
 * update_slot); subclasses get the generic slot (the descriptor is not a
 * slot wrapper), which finds the same descriptor. Only where the slot reads
 * as PyType_GetSlot says it is. */
static void direct_slot(void)
{
    if (!PY(PyType_GetSlot))
        return;
    void *generic = PY(PyType_GetSlot)(fpy.jit_cls, 5 /* Py_mp_subscript */);
    PY(PyErr_Clear)();
    void **mapping = *(void ***)((char *)fpy.jit_cls + 112); /* PyTypeObject.tp_as_mapping (3.9-3.13, 64-bit) */
    if (generic && mapping && mapping[1] == generic)         /* PyMappingMethods: mp_length, mp_subscript, ... */
        mapping[1] = (void *)getitem;
}

/* KernelInterface.__getitem__ for its other subclasses, where it is the
 * method JITFunction had (Triton's lambda): a subclass with its own keeps
 * it. Where this fails they keep Triton's lambda. */
static void install_sub(void)
{
    PyObject *ki = fpy.ki_cls, *td = ki ? fp_dict_of(ki) : NULL;
    PyObject *descr = td && PY(PyDict_GetItemString)(td, "__getitem__") == orig_getitem
                          ? PY(PyDescr_NewMethod)(ki, &sub_getitem_def)
                          : NULL;
    if (descr && PY(PyObject_SetAttrString)(ki, "__getitem__", descr) < 0)
        PY(PyErr_Clear)();
    PY(PyErr_Clear)();
    trlat_py_drop(descr);
}

void fp_getitem_install(void)
{
    if (!PY(PyType_FromSpec) || !PY(PyDescr_NewMethod) || !PY(PyType_GenericAlloc) || !PY(PyObject_Free) ||
        !PY(PyVectorcall_Call))
        return;
    static struct py_slot slots[] = {{PY_TP_DEALLOC, (void *)launcher_dealloc},
                                     {0, NULL},
                                     {PY_TP_MEMBERS, members},
                                     {PY_TP_DOC, (void *)"kernel[grid] through trlat's launch memo"},
                                     {0, NULL}};
    slots[1] = (struct py_slot){PY_TP_CALL, (void *)PY(PyVectorcall_Call)};
    static struct py_spec spec = {"trlat.FastLauncher", sizeof(struct fp_launcher), 0,
                                  PY_TPFLAGS_DEFAULT | PY_TPFLAGS_HAVE_VECTORCALL, slots};
    PyObject *names[2] = {fpy.s_grid, fpy.s_warmup};
    s_grid_warmup = PY(PyTuple_New)(2);
    for (int i = 0; s_grid_warmup && i < 2; i++) {
        PY(Py_IncRef)(names[i]);
        PY(PyTuple_SetItem)(s_grid_warmup, i, names[i]);
    }
    fp_phases_init();
    orig_getitem = PY(PyObject_GetAttrString)(fpy.jit_cls, "__getitem__");
    launcher_type = PY(PyType_FromSpec)(&spec);
    PyObject *descr =
        launcher_type && orig_getitem && s_grid_warmup ? PY(PyDescr_NewMethod)(fpy.jit_cls, &getitem_def) : NULL;
    if (!descr || PY(PyObject_SetAttrString)(fpy.jit_cls, "__getitem__", descr) < 0) {
        PY(PyErr_Clear)();
        static atomic_flag once;
        trlat_log_once(&once, "fast path: could not install its kernel[grid] launcher; calls take Triton's path to it");
    } else {
        direct_slot();
        install_sub();
    }
    trlat_py_drop(descr);
}
