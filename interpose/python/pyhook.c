/* Installing the Python hook. Python code never runs inside a driver
 * wrapper: trlat's start and every new kernel handle (cuModuleGetFunction,
 * cuLibraryGetKernel; Triton loads each kernel before its first launch) only
 * queue a pending call (Py_AddPendingCall: any thread, GIL or not), which
 * the interpreter runs soon on its main thread with the GIL held. That call
 * runs trlat's pyhook.py, read by absolute path from trlat's own install
 * directory, never through sys.path: it patches Triton's classes when
 * triton.runtime.jit is loaded, or else watches imports until it is. */
#include "interpose/python/pyhook.h"
#include "interpose/config.h"
#include "interpose/python/pysites.h"
#include "interpose/python/sharefile.h"
#include "interpose/log.h"
#include "interpose/real.h"
#include "interpose/lifecycle.h"
#include "interpose/tstate.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *_Atomic trlat_pyhook_state;
char trlat_pyhook_triton_version[32];
char trlat_pyhook_reason[256];

static atomic_int done;      /* nothing more to install (or never will be) */
static atomic_int scheduled; /* a pending call is queued */
static PyObject *globals;    /* pyhook.py's namespace, once loaded */

static void give_up(const char *state, const char *why)
{
    snprintf(trlat_pyhook_reason, sizeof trlat_pyhook_reason, "%.255s", why);
    atomic_store(&trlat_pyhook_state, state);
    atomic_store(&done, 1);
    trlat_log("%s; profiling without the Python hook (no py->driver times, no Python call sites)", why);
}

/* --- what pyhook.py can call (METH_VARARGS) --- */

static PyObject *arg(PyObject *args, Py_ssize_t i)
{
    return PY(PyTuple_Size)(args) > i ? PY(PyTuple_GetItem)(args, i) : NULL;
}

static PyObject *none(void)
{
    PY(Py_IncRef)(trlat_py.none);
    return trlat_py.none;
}

static const char *str_arg(PyObject *args, Py_ssize_t i)
{
    PyObject *o = arg(args, i);
    const char *s = o && o != trlat_py.none ? PY(PyUnicode_AsUTF8)(o) : NULL;
    if (!s && PY(PyErr_Occurred)())
        PY(PyErr_Clear)();
    return s;
}

/* (lambda code, globals, self_first): see trlat_pyhook_set_subscript_lambda. */
static PyObject *py_subscript_lambda(PyObject *self, PyObject *args)
{
    PyObject *code = arg(args, 0), *g = arg(args, 1), *first = arg(args, 2);
    if (!code || !g || !first) {
        PY(PyErr_SetString)(trlat_py.exc_runtime, "trlat: _trlat_subscript_lambda(code, globals, self_first)");
        return NULL;
    }
    return PY(PyBool_FromLong)(trlat_pyhook_set_subscript_lambda(code, g, PY(PyObject_IsTrue)(first) > 0) == 0);
}

static PyObject *py_wrap(PyObject *self, PyObject *args) /* (orig, kind) */
{
    PyObject *orig = arg(args, 0), *kind = arg(args, 1);
    if (!orig || !kind) {
        PY(PyErr_SetString)(trlat_py.exc_runtime, "trlat: _trlat_wrap(orig, kind)");
        return NULL;
    }
    long k = PY(PyLong_AsLong)(kind);
    if (k == -1 && PY(PyErr_Occurred)())
        return NULL;
    return trlat_pyhook_wrap(orig, (int)k);
}

/* (library, rule): see trlat_pyhook_add_site_rule; True when kept. */
static PyObject *py_site_rule(PyObject *self, PyObject *args)
{
    PyObject *lib = arg(args, 0);
    const char *rule = str_arg(args, 1);
    return PY(PyBool_FromLong)(lib && trlat_pyhook_add_site_rule(PY(PyObject_IsTrue)(lib) > 0, rule) == 0);
}

static PyObject *py_log(PyObject *self, PyObject *args) /* (message) */
{
    const char *m = str_arg(args, 0);
    if (m)
        trlat_log("%s", m);
    return none();
}

static PyObject *py_state(PyObject *self, PyObject *args) /* (state, triton version, reason) */
{
    static const char *const states[] = {"waiting", "installed", "not_recognised", "failed"};
    const char *s = str_arg(args, 0), *v = str_arg(args, 1), *why = str_arg(args, 2);
    for (unsigned i = 0; s && i < sizeof states / sizeof *states; i++)
        if (strcmp(s, states[i]) == 0)
            atomic_store(&trlat_pyhook_state, states[i]);
    if (v)
        snprintf(trlat_pyhook_triton_version, sizeof trlat_pyhook_triton_version, "%s", v);
    if (why)
        snprintf(trlat_pyhook_reason, sizeof trlat_pyhook_reason, "%.255s", why);
    return none();
}

static void finish_at_py_exit(void)
{
    trlat_finish();
}

/* () -> None. pyhook.py's atexit callback, when the interpreter ends on an
 * uncaught KeyboardInterrupt: the report is written at the end of Python's
 * finalization (Py_AtExit: after the other atexit callbacks and the modules'
 * teardown, where a normal exit's C atexit would find the process), just
 * before Python kills itself with SIGINT; now if that cannot be arranged. */
static PyObject *py_finish_at_exit(PyObject *self, PyObject *args)
{
    static atomic_int asked;
    int (*py_at_exit)(void (*)(void)) = (int (*)(void (*)(void)))trlat_real_dlsym(RTLD_DEFAULT, "Py_AtExit");
    if (!atomic_exchange(&asked, 1) && (!py_at_exit || py_at_exit(finish_at_py_exit) != 0))
        trlat_finish();
    return none();
}

static struct trlat_pymethoddef helpers[] = {
    {"_trlat_wrap", (void *)py_wrap, TRLAT_METH_VARARGS, NULL},
    {"_trlat_subscript_lambda", (void *)py_subscript_lambda, TRLAT_METH_VARARGS, NULL},
    {"_trlat_site_rule", (void *)py_site_rule, TRLAT_METH_VARARGS, NULL},
    {"_trlat_log", (void *)py_log, TRLAT_METH_VARARGS, NULL},
    {"_trlat_state", (void *)py_state, TRLAT_METH_VARARGS, NULL},
    {"_trlat_finish_at_exit", (void *)py_finish_at_exit, TRLAT_METH_VARARGS, NULL},
};

/* The current Python error as text (then cleared). */
static void error_text(char *buf, size_t len)
{
    PyObject *t, *v, *tb;
    PY(PyErr_Fetch)(&t, &v, &tb);
    PyObject *s = v ? PY(PyObject_Str)(v) : NULL;
    const char *c = s ? PY(PyUnicode_AsUTF8)(s) : NULL;
    snprintf(buf, len, "%s", c ? c : "unknown error");
    PY(PyErr_Clear)();
    PyObject *all[] = {s, t, v, tb};
    for (int i = 0; i < 4; i++)
        if (all[i])
            PY(Py_DecRef)(all[i]);
}

/* Runs pyhook.py in a namespace of its own. */
static int load(void)
{
    char path[4200], why[512];
    char *src = trlat_share_read("pyhook.py", 1 << 18, path, sizeof path);
    if (!src) {
        snprintf(why, sizeof why, "cannot read %.400s", path);
        give_up("failed", why);
        return -1;
    }
    PyObject *code = PY(Py_CompileString)(src, path, TRLAT_PY_FILE_INPUT);
    free(src);
    PyObject *g = code ? PY(PyDict_New)() : NULL;
    int ok = g && PY(PyDict_SetItemString)(g, "__builtins__", PY(PyEval_GetBuiltins)()) == 0;
    PyObject *name = ok ? PY(PyUnicode_FromString)("trlat_pyhook") : NULL, *file = NULL;
    ok = ok && name && PY(PyDict_SetItemString)(g, "__name__", name) == 0;
    file = ok ? PY(PyUnicode_FromString)(path) : NULL;
    ok = ok && file && PY(PyDict_SetItemString)(g, "__file__", file) == 0;
    for (unsigned i = 0; ok && i < sizeof helpers / sizeof *helpers; i++) {
        PyObject *fn = PY(PyCFunction_NewEx)(&helpers[i], NULL, NULL);
        ok = fn && PY(PyDict_SetItemString)(g, helpers[i].ml_name, fn) == 0;
        if (fn)
            PY(Py_DecRef)(fn);
    }
    PyObject *r = ok ? PY(PyEval_EvalCode)(code, g, g) : NULL;
    PyObject *refs[] = {r, name, file, code};
    for (int i = 0; i < 4; i++)
        if (refs[i])
            PY(Py_DecRef)(refs[i]);
    if (!r) {
        char err[256];
        error_text(err, sizeof err);
        snprintf(why, sizeof why, "%.200s did not load: %.200s", path, err);
        if (g)
            PY(Py_DecRef)(g);
        give_up("failed", why);
        return -1;
    }
    globals = g;
    return 0;
}

/* On the main thread, GIL held, between two bytecodes of whatever runs. */
static int pending(void *unused)
{
    atomic_store(&scheduled, 0);
    if (atomic_load(&done) || !trlat_py_running())
        return 0;
    PyObject *t, *v, *tb;
    PY(PyErr_Fetch)(&t, &v, &tb);
    if (globals || load() == 0) {
        PyObject *poll = PY(PyDict_GetItemString)(globals, "poll");
        PyObject *r = poll ? PY(PyObject_CallObject)(poll, NULL) : NULL;
        if (!r) {
            char err[256], why[400];
            error_text(err, sizeof err);
            snprintf(why, sizeof why, "the Python hook failed: %.200s", err);
            give_up("failed", why);
        } else {
            if (PY(PyObject_IsTrue)(r) > 0)
                atomic_store(&done, 1);
            PY(Py_DecRef)(r);
        }
    }
    PY(PyErr_Clear)();
    PY(PyErr_Restore)(t, v, tb);
    return 0; /* never an error: it would surface in the program */
}

void trlat_pyhook_poke(void)
{
    if (atomic_load_explicit(&done, memory_order_relaxed))
        return;
    if (!trlat_pyapi_resolve()) {
        char why[128];
        snprintf(why, sizeof why, "this Python has no %s", trlat_pyapi_missing());
        if (PY(Py_IsInitialized) && PY(Py_IsInitialized)())
            give_up("failed", why);
        atomic_store(&done, 1); /* else not a Python process */
        return;
    }
    if (!trlat_py_running())
        return; /* not yet (an embedding program) or no more */
    const char *none_yet = NULL;
    atomic_compare_exchange_strong(&trlat_pyhook_state, &none_yet, "waiting");
    if (atomic_exchange(&scheduled, 1))
        return;
    if (PY(Py_AddPendingCall)(pending, NULL) != 0)
        atomic_store(&scheduled, 0); /* queue full: the next poke tries again */
}

static void start(void)
{
    trlat_pyphases_on = (int)trlat_config(TRLAT_OPT_PY_PHASES);
    trlat_pyhook_find_memo();
    trlat_pyhook_poke();
}

static void after_fork_child(void)
{
    atomic_store(&scheduled, 0);
}

static const struct trlat_module pyhook_module = {
    .name = "pyhook", .start = start, .after_fork_child = after_fork_child, .kernel_loaded = trlat_pyhook_poke};

__attribute__((constructor)) static void register_pyhook(void)
{
    trlat_module_register(&pyhook_module);
}
