/* The C wrapper that replaces JITFunction.run (and Autotuner.run,
 * Heuristics.run): notes the call's entry time and its caller's site in the
 * thread's launch state, calls the original with the very same arguments
 * (vectorcall: nothing repacked), and puts the state back. The driver
 * wrapper that sees the launch (GIL released by then) reads the state
 * without touching Python. Only the outermost hooked call on a thread is
 * timed: an Autotuner's py->driver time includes its own overhead.
 *
 * The wrapper is an object of a method-descriptor type (below), which binds
 * like a Python function: it gets (original run, [self, *args], kwnames).
 * Exceptions pass through untouched (a C function adds no traceback entry).
 *
 * A call's Python entry is when `kernel[grid]` was evaluated, not when
 * run() was entered: KernelInterface.__getitem__ is wrapped too (profile
 * mode), notes the time and the caller's site, and returns Triton's lambda
 * as before. The run hook takes that time when the same kernel is run from
 * the same file:line on the same thread, with no hooked call in between:
 * what it then counts includes the lambda, the packing of its arguments
 * and the call's argument expressions. `f = kernel[grid]` on one line and
 * `f(...)` on another falls back to run()'s own entry. */
#include "interpose/python/pyhook.h"
#include "interpose/lifecycle.h"
#include "interpose/clock.h"
#include "interpose/config.h"
#include "interpose/tstate.h"

#include <stddef.h>

/* Whether the call had warmup=<true> among its keywords. */
static int is_warmup(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!kwnames)
        return 0;
    Py_ssize_t n = PY(PyTuple_Size)(kwnames);
    for (Py_ssize_t i = 0; i < n; i++)
        if (PY(PyUnicode_CompareWithASCIIString)(PY(PyTuple_GetItem)(kwnames, i), "warmup") == 0) {
            int t = PY(PyObject_IsTrue)(args[nargs + i]);
            if (t < 0)
                PY(PyErr_Clear)();
            return t > 0;
        }
    return 0;
}

/* (args[0..nargs), kwnames) as a tuple and a dict; 0 or -1 (error set). */
static int pack(PyObject *const *args, Py_ssize_t from, Py_ssize_t nargs, PyObject *kwnames, PyObject **tuple,
                PyObject **kw)
{
    *tuple = PY(PyTuple_New)(nargs - from);
    *kw = PY(PyDict_New)();
    Py_ssize_t nkw = kwnames ? PY(PyTuple_Size)(kwnames) : 0;
    int ok = *tuple && *kw;
    for (Py_ssize_t i = from; ok && i < nargs; i++) {
        PY(Py_IncRef)(args[i]);
        ok = PY(PyTuple_SetItem)(*tuple, i - from, args[i]) == 0;
    }
    for (Py_ssize_t i = 0; ok && i < nkw; i++)
        ok = PY(PyDict_SetItem)(*kw, PY(PyTuple_GetItem)(kwnames, i), args[nargs + i]) == 0;
    return ok ? 0 : -1;
}

static void unpack(PyObject *tuple, PyObject *kw)
{
    if (tuple)
        PY(Py_DecRef)(tuple);
    if (kw)
        PY(Py_DecRef)(kw);
}

/* PyObject_Vectorcall, or its slower equivalent where Python (3.9, 3.10)
 * does not export it. */
static PyObject *vectorcall(PyObject *fn, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (__builtin_expect(PY(PyObject_Vectorcall) != NULL, 1))
        return PY(PyObject_Vectorcall)(fn, args, (size_t)nargs, kwnames);
    PyObject *tuple, *kw, *r = NULL;
    if (pack(args, 0, nargs, kwnames, &tuple, &kw) == 0)
        r = PY(PyObject_Call)(fn, tuple, kw);
    unpack(tuple, kw);
    return r;
}

/* The fast path's memo, when a module offers one (trlat_pyhook_find_memo). */
static const struct trlat_pymemo *memo_ops;

/* JITFunction.run through the launch memo: (self, args tuple, kwargs dict)
 * as struct trlat_pymemo says. Falls back to Triton when the memo has no answer. A
 * call from the memo's kernel[grid] launcher was keyed there: its arguments
 * are not packed again (a tuple and a dict per miss). */
static PyObject *run_with_fastpath(PyObject *orig, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    const struct trlat_pymemo *memo = memo_ops;
    PyObject *tuple = NULL, *kw = NULL, *r = NULL;
    void *state = NULL;
    int ok = memo && (memo->prekeyed(args[0]) || pack(args, 1, nargs, kwnames, &tuple, &kw) == 0);
    if (ok)
        r = memo->before(args[0], tuple, kw, &state);
    if (!r && PY(PyErr_Occurred)())
        PY(PyErr_Clear)(); /* no error may reach Triton's run from here */
    if (!r) {
        r = vectorcall(orig, args, nargs, kwnames);
        if (ok)
            memo->after(state, r);
    }
    unpack(tuple, kw);
    return r;
}

static PyObject *none_ref(void)
{
    PY(Py_IncRef)(trlat_py.none);
    return trlat_py.none;
}

/* CudaLauncher.__call__ (or a static launcher's run) through the memo's
 * launcher layer (or its static one). */
static PyObject *launch_with_fastpath(PyObject *orig, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                                      PyObject *(*launch)(PyObject *const *, Py_ssize_t, PyObject *, void **),
                                      void (*launched)(void *, PyObject *))
{
    void *state = NULL;
    PyObject *r = launch(args, nargs, kwnames, &state);
    if (r || PY(PyErr_Occurred)())
        return r; /* replayed, or its launch failed and raised as the launcher's would */
    r = vectorcall(orig, args, nargs, kwnames);
    launched(state, r);
    return r;
}

/* A KernelInterface subclass's run through the memo's entry layer. */
static PyObject *entry_with_fastpath(PyObject *orig, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *r = memo_ops->entry(orig, args, nargs, kwnames);
    if (r || PY(PyErr_Occurred)())
        return r;
    return vectorcall(orig, args, nargs, kwnames);
}

static inline PyObject *call_orig(int kind, PyObject *orig, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if ((kind == TRLAT_PYHOOK_JIT || kind == TRLAT_PYHOOK_LAUNCHER || kind == TRLAT_PYHOOK_ENTRY ||
         kind == TRLAT_PYHOOK_STATIC_RUN) &&
        nargs >= 1 && trlat_config(TRLAT_OPT_FASTPATH) != TRLAT_FASTPATH_OFF) {
        if (kind == TRLAT_PYHOOK_JIT)
            return run_with_fastpath(orig, args, nargs, kwnames);
        if (kind == TRLAT_PYHOOK_ENTRY && memo_ops && memo_ops->entry)
            return entry_with_fastpath(orig, args, nargs, kwnames);
        if (kind == TRLAT_PYHOOK_LAUNCHER && memo_ops)
            return launch_with_fastpath(orig, args, nargs, kwnames, memo_ops->launch, memo_ops->launched);
        if (kind == TRLAT_PYHOOK_STATIC_RUN && memo_ops && memo_ops->static_launch)
            return launch_with_fastpath(orig, args, nargs, kwnames, memo_ops->static_launch, memo_ops->static_launched);
    }
    return vectorcall(orig, args, nargs, kwnames);
}

/* The last kernel[grid] evaluated on this thread (profile mode), or
 * compiled[grid] (compiled: then the launcher's call is the one it times,
 * when made from the same site). */
static _Thread_local struct {
    PyObject *kernel; /* compared by identity only */
    uint64_t t0, site;
    int compiled;
} subscript __attribute__((tls_model("initial-exec"))); /* no __tls_get_addr call per access */

/* KernelInterface.__getitem__'s lambda, when pyhook.py found that the
 * method is exactly `return lambda ...` over (self, grid): the wrapper then
 * makes the very function Triton's method would (same code object, globals,
 * qualified name, closure contents) without running the method's frame. */
static struct {
    PyObject *code, *globals;
    int self_first; /* co_freevars is (self, grid), else (grid, self) */
} lambda;

void trlat_pyhook_find_memo(void)
{
    int n;
    const struct trlat_module *const *m = trlat_modules(&n);
    for (int i = 0; i < n && !memo_ops; i++)
        memo_ops = m[i]->pymemo;
}

int trlat_pyhook_set_subscript_lambda(PyObject *code, PyObject *globals, int self_first)
{
    if (!PY(PyFunction_New) || !PY(PyFunction_SetClosure) || !PY(PyCell_New))
        return -1;
    PY(Py_IncRef)(code);
    PY(Py_IncRef)(globals);
    lambda.code = code;
    lambda.globals = globals;
    lambda.self_first = self_first;
    return 0;
}

static PyObject *make_lambda(PyObject *self, PyObject *grid)
{
    PyObject *f = PY(PyFunction_New)(lambda.code, lambda.globals);
    PyObject *cl = f ? PY(PyTuple_New)(2) : NULL;
    int ok = cl != NULL;
    for (int i = 0; ok && i < 2; i++) {
        PyObject *cell = PY(PyCell_New)((i == 0) == (lambda.self_first != 0) ? self : grid);
        ok = cell && PY(PyTuple_SetItem)(cl, i, cell) == 0; /* steals cell */
    }
    ok = ok && PY(PyFunction_SetClosure)(f, cl) == 0;
    if (cl)
        PY(Py_DecRef)(cl);
    if (!ok && f) {
        PY(Py_DecRef)(f);
        f = NULL;
    }
    return f;
}

void trlat_pyhook_note_subscript(PyObject *compiled, uint64_t t0, uint64_t site)
{
    subscript.kernel = compiled;
    subscript.t0 = t0;
    subscript.site = site;
    subscript.compiled = 1;
}

static PyObject *getitem(int kind, PyObject *orig, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs != 2 || kwnames)
        return vectorcall(orig, args, nargs, kwnames);
    struct trlat_tstate *ts = trlat_tls;
    if (ts && ts->py_lib)
        trlat_pylib_mark(ts); /* a library's run evaluating kernel[grid] or compiled[grid] */
    if (kind == TRLAT_PYHOOK_COMPILED_GETITEM && memo_ops && trlat_config(TRLAT_OPT_FASTPATH) != TRLAT_FASTPATH_OFF) {
        PyObject *runner = memo_ops->compiled_getitem(orig, args[0], args[1]);
        if (runner)
            return runner; /* it times its own call */
    }
    uint64_t t0 = trlat_py_stamp();
    subscript.site = trlat_pyhook_caller_site();
    subscript.kernel = args[0];
    subscript.t0 = t0;
    subscript.compiled = kind == TRLAT_PYHOOK_COMPILED_GETITEM;
    return lambda.code && !subscript.compiled ? make_lambda(args[0], args[1]) : vectorcall(orig, args, nargs, kwnames);
}

static inline PyObject *hooked(int kind, PyObject *orig, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    struct trlat_tstate *ts = trlat_tstate_get();
    PyObject *kernel = subscript.kernel;
    subscript.kernel = NULL;                                        /* one run per kernel[grid] */
    if (__builtin_expect(!ts || (ts->slow & TRLAT_SLOW_PAUSED), 0)) /* profiling paused */
        return call_orig(kind, orig, args, nargs, kwnames);
    if (ts->py_t0) { /* inside another hooked call on this thread */
        if (kind == TRLAT_PYHOOK_LAUNCHER && trlat_pyphases_on)
            trlat_pyphase_mark(ts, TRLAT_PHM_LAUNCHER);
        if (ts->py_lib && kind != TRLAT_PYHOOK_ENTRY)
            trlat_pylib_mark(ts); /* Triton's, inside a library's run */
        trlat_pyhook_count(ts, TRLAT_PYC_NESTED);
        return call_orig(kind, orig, args, nargs, kwnames);
    }
    uint64_t t0, site;
    const struct trlat_pymemo *memo = memo_ops;
    if (nargs >= 1 && memo && memo->prekey_entry(args[0], &t0, &site)) {
        /* from the fast path's kernel[grid] launcher: timed from its entry */
    } else if (kernel && nargs >= 1 && (subscript.compiled ? kind == TRLAT_PYHOOK_LAUNCHER : kernel == args[0])) {
        site = trlat_pyhook_caller_site();
        /* kernel[grid](...) on one line: timed from the subscript; else from
         * here (late by the site lookup, a rare case: `f = kernel[grid]`) */
        t0 = subscript.site == site && site ? subscript.t0 : trlat_py_stamp();
    } else {
        t0 = trlat_py_stamp();
        site = trlat_pyhook_caller_site();
    }
    struct trlat_pycall saved;
    trlat_pycall_open(ts, t0, site, &saved);
    if (kind == TRLAT_PYHOOK_ENTRY)
        ts->py_lib = TRLAT_PY_LIB_OPEN;
    if (kind == TRLAT_PYHOOK_LAUNCHER && trlat_pyphases_on) /* compiled[grid](...): the launcher is outermost */
        trlat_pyphase_mark(ts, TRLAT_PHM_LAUNCHER);
    PyObject *r = call_orig(kind, orig, args, nargs, kwnames);
    uint32_t launches = trlat_pycall_close(ts, &saved);
    trlat_pyhook_count_call(ts, launches, !r, !launches && r && is_warmup(args, nargs, kwnames));
    return r;
}

void trlat_pyhook_count_call(struct trlat_tstate *ts, uint32_t launches, int raised, int warmup)
{
    trlat_pyhook_count(ts, launches == 1  ? TRLAT_PYC_ONE_LAUNCH
                           : launches > 1 ? TRLAT_PYC_MULTI_LAUNCH
                           : raised       ? TRLAT_PYC_NO_LAUNCH_ERROR
                           : warmup       ? TRLAT_PYC_NO_LAUNCH_WARMUP
                                          : TRLAT_PYC_NO_LAUNCH_OTHER);
}

/* A wrapper is an object of a small type of trlat's: it binds like a
 * Python function but, being a method descriptor, CPython calls it with the
 * instance first and no bound-method object in between (kernel[grid], an
 * Autotuner's self.fn.run(...)); it keeps the original as __wrapped__
 * (inspect.signature follows it) with its __name__, __qualname__ and
 * __module__ (CPython names a function by the last two in its TypeErrors). */
struct hook_obj {
    struct trlat_pyhead head;
    void *vectorcall;
    PyObject *orig, *name, *qualname, *module;
    int kind;
};

static PyObject *hook_type;

static PyObject *hook_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    const struct hook_obj *h = (const struct hook_obj *)self;
    Py_ssize_t nargs = (Py_ssize_t)(nargsf & ~TRLAT_PY_VECTORCALL_ARGUMENTS_OFFSET);
    if (h->kind == TRLAT_PYHOOK_GETITEM || h->kind == TRLAT_PYHOOK_COMPILED_GETITEM)
        return getitem(h->kind, h->orig, args, nargs, kwnames);
    if (h->kind == TRLAT_PYHOOK_PHASE_KEY || h->kind == TRLAT_PYHOOK_PHASE_META) {
        struct trlat_tstate *ts = trlat_tls;
        if (ts)
            trlat_pyphase_mark(ts, h->kind == TRLAT_PYHOOK_PHASE_KEY ? TRLAT_PHM_KEY : TRLAT_PHM_META);
        return vectorcall(h->orig, args, nargs, kwnames);
    }
    if (h->kind == TRLAT_PYHOOK_LAUNCHER_INIT) {
        PyObject *r = vectorcall(h->orig, args, nargs, kwnames);
        if (r && nargs >= 1 && memo_ops)
            memo_ops->launcher_made(args[0], args + 1, nargs - 1, kwnames);
        return r;
    }
    return hooked(h->kind, h->orig, args, nargs, kwnames);
}

/* As a Python function's __get__: the function itself from the class, a
 * bound method from an instance. */
static PyObject *hook_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (!obj || obj == trlat_py.none) {
        PY(Py_IncRef)(self);
        return self;
    }
    return PY(PyMethod_New)(self, obj);
}

static void hook_dealloc(PyObject *self)
{
    struct hook_obj *h = (struct hook_obj *)self;
    void *tp = h->head.type;
    trlat_py_drop(h->orig);
    trlat_py_drop(h->name);
    trlat_py_drop(h->qualname);
    trlat_py_drop(h->module);
    PY(PyObject_Free)(self);
    PY(Py_DecRef)(tp); /* instances of heap types hold their type */
}

static struct py_member hook_members[] = {
    {"__vectorcalloffset__", PY_T_PYSSIZET, offsetof(struct hook_obj, vectorcall), PY_READONLY, NULL},
    {"__wrapped__", PY_T_OBJECT, offsetof(struct hook_obj, orig), PY_READONLY, NULL},
    {"__name__", PY_T_OBJECT, offsetof(struct hook_obj, name), PY_READONLY, NULL},
    {"__qualname__", PY_T_OBJECT, offsetof(struct hook_obj, qualname), PY_READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};

/* An instance's __module__ is its original's (a member would shadow the
 * type's own in the type's dict). */
static PyObject *hook_getattro(PyObject *self, PyObject *name)
{
    PyObject *m = ((const struct hook_obj *)self)->module;
    if (m && !PY(PyUnicode_CompareWithASCIIString)(name, "__module__")) {
        PY(Py_IncRef)(m);
        return m;
    }
    return PY(PyObject_GenericGetAttr)(self, name);
}

/* The type, or NULL with a Python error set. */
static PyObject *make_hook_type(void)
{
    if (!PY(PyType_FromSpec) || !PY(PyType_GenericAlloc) || !PY(PyObject_Free) || !PY(PyVectorcall_Call) ||
        !PY(PyMethod_New)) {
        PY(PyErr_SetString)(trlat_py.exc_runtime, "trlat: this Python lacks what the hook's wrapper type needs");
        return NULL;
    }
    static struct py_slot slots[] = {
        {PY_TP_DEALLOC, (void *)hook_dealloc},
        {PY_TP_DESCR_GET, (void *)hook_descr_get},
        {PY_TP_MEMBERS, hook_members},
        {PY_TP_DOC, (void *)"A Triton method timed by trlat (libtrlat.so); the original is __wrapped__."},
        {0, NULL}, /* tp_call: PyVectorcall_Call, set below */
        {0, NULL}, /* tp_getattro, where CPython exports the generic one */
        {0, NULL}};
    slots[4] = (struct py_slot){PY_TP_CALL, (void *)PY(PyVectorcall_Call)};
    if (PY(PyObject_GenericGetAttr))
        slots[5] = (struct py_slot){PY_TP_GETATTRO, (void *)hook_getattro};
    static struct py_spec spec = {"trlat.Hook", sizeof(struct hook_obj), 0,
                                  PY_TPFLAGS_DEFAULT | PY_TPFLAGS_HAVE_VECTORCALL | PY_TPFLAGS_METHOD_DESCRIPTOR,
                                  slots};
    return PY(PyType_FromSpec)(&spec);
}

PyObject *trlat_pyhook_wrap(PyObject *orig, int kind)
{
    if (kind < 0 || kind >= TRLAT_PYHOOK_KINDS) {
        PY(PyErr_SetString)(trlat_py.exc_runtime, "trlat: unknown hook kind");
        return NULL;
    }
    if (kind == TRLAT_PYHOOK_GETITEM && trlat_config(TRLAT_OPT_FASTPATH) != TRLAT_FASTPATH_OFF)
        return none_ref(); /* the fast path's own launcher notes the call's entry */
    if (kind == TRLAT_PYHOOK_LAUNCHER_INIT && trlat_config(TRLAT_OPT_FASTPATH) == TRLAT_FASTPATH_OFF)
        return none_ref(); /* only the fast path wants it */
    if ((kind == TRLAT_PYHOOK_PHASE_KEY || kind == TRLAT_PYHOOK_PHASE_META) && !trlat_pyphases_on)
        return none_ref(); /* TRLAT_PY_PHASES only */
    if (!hook_type && !(hook_type = make_hook_type()))
        return NULL;
    struct hook_obj *h = (struct hook_obj *)PY(PyType_GenericAlloc)(hook_type, 0);
    if (!h)
        return NULL;
    h->vectorcall = (void *)hook_vectorcall;
    PY(Py_IncRef)(orig);
    h->orig = orig;
    h->name = trlat_py_attr(orig, "__name__");
    h->qualname = trlat_py_attr(orig, "__qualname__");
    h->module = trlat_py_attr(orig, "__module__");
    h->kind = kind;
    return (PyObject *)h;
}
