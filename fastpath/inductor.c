/* Inductor's CachingAutotuner.run(*args, stream=s) served above its
 * launcher. torch 2.11's run (torch/_inductor/runtime/triton_heuristics.py),
 * when no DebugMode records and the autotuner has one launcher and nothing
 * to tune, save, dump or profile, sets Triton's allocator and returns
 * launchers[0](*args, stream=s): a function Inductor generated
 * (TritonCompileResult.make_launcher) that computes the grid from its int
 * arguments and calls its runner, the kernel's CudaLauncher, with the
 * kernel's function, metadata, bin.launch_metadata(...) (emitted whenever a
 * launch hook object is set, as Triton 3.6's idle HookChain is) and the
 * hooks. A hit does the same in C: the launcher was analysed once
 * (gridcheck.py analyze_launcher) into a grid program and a map of the
 * runner's arguments; the grid is evaluated (gridprog.c) and the runner's
 * call goes to the launcher memo (compiled.c fp_launcher_serve), which
 * replays it or declines. launch_metadata is skipped only while both hooks
 * are idle: then only they would read it, and the analysis proved it a
 * pure read of a loaded kernel. Declined, or whenever the autotuner is not
 * in the state modelled, run() runs as it would and its launcher's call is
 * the launcher layer's to serve or capture; so every miss and capture is
 * counted there, once.
 *
 * run() itself is modelled, not analysed: its code must read no name but
 * the ones torch 2.11's reads (run_names), so a torch whose run does
 * anything else is never served here. get_active_debug_mode() is called as
 * run() calls it. The allocator run() sets on every call is left as it is
 * when it already is one run() made for a device of the same type (the same
 * code, a closure over an autotuner of that type): the allocation it would
 * make is the same. Verify mode serves nothing here; it checks each grid the
 * program computes against the one the launcher gets, and the launcher
 * layer checks the block. A launcher whose runner is torch's static CUDA
 * launcher (StaticallyLaunchedCudaKernel.run) passes the grid, the stream
 * and the kernel arguments alone: a hit hands them to that layer's memo
 * (static_launcher.c fp_static_serve) instead, and no launch hook is
 * asked (that launcher calls none). Everything runs with the GIL held. */
#include "fastpath/fp_py.h"
#include "interpose/log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* The names torch 2.11's CachingAutotuner.run reads (co_names). */
static const char *const run_names[] = {"_C",
                                        "_RecordFunctionFast",
                                        "__name__",
                                        "_dump_launch_params",
                                        "_dump_launch_tensors",
                                        "_interpret_args_grid",
                                        "_is_profiler_enabled",
                                        "_profiler",
                                        "any",
                                        "autograd_profiler",
                                        "autotune_to_one_config",
                                        "config",
                                        "configs",
                                        "coordinate_descent_tuning",
                                        "cuda_kernel_saved",
                                        "dict",
                                        "dump_launch_params",
                                        "dump_launch_tensors",
                                        "filename",
                                        "finalize",
                                        "fn",
                                        "get",
                                        "get_active_debug_mode",
                                        "get_device_interface",
                                        "get_profiler_kwargs",
                                        "getattr",
                                        "hasattr",
                                        "inductor_meta",
                                        "kernel_hash",
                                        "kernels_to_dump",
                                        "keys",
                                        "kwargs",
                                        "launchers",
                                        "len",
                                        "list",
                                        "precompile",
                                        "precompile_time_taken_ns",
                                        "record_triton_kernel",
                                        "save_gpu_kernel",
                                        "set_allocator",
                                        "store_cubin",
                                        "time",
                                        "time_ns",
                                        "torch",
                                        "triton",
                                        "triton_interpret",
                                        "triton_meta",
                                        "tuple",
                                        "update",
                                        "zip"};
/* ... and the allocator it makes (alloc_fn), and triton.set_allocator. */
static const char *const alloc_names[] = {"torch", "empty", "int8", "device_props", "type"};
static const char *const set_allocator_names[] = {"_allocator", "set"};

struct py_cell { /* PyCellObject */
    struct trlat_pyhead head;
    PyObject *ref;
};

/* What the class's run was found to be, once. */
static struct {
    int state;                                   /* 0 not looked at, 1 modelled, -1 not */
    void *type;                                  /* CachingAutotuner */
    PyObject *run;                               /* its run (held), as the hook wraps it */
    PyObject *globals;                           /* run's module globals (held, watched) */
    PyObject *triton, *set_allocator, *profiler; /* what run's globals held (held): the epoch guards */
    PyObject *debug_mode;                        /* run's get_active_debug_mode (held), called on a hit */
    PyObject *profiler_dict;                     /* torch.autograd.profiler's __dict__ (held, watched) */
    PyObject *alloc_var;                         /* triton's allocator ContextVar (held); NULL: no set_allocator */
    PyObject *alloc_code;                        /* run's alloc_fn code (held) */
    PyObject *last_alloc, *last_type;            /* an allocator found equivalent for device type last_type (held) */
    uint64_t epoch;
    PyObject *s_launchers, *s_stream, *s_is_prof, *s_device_props, *s_type, *s_config, *s_found, *s_store_cubin,
        *s_interp, *s_dump, *s_meta, *s_coordesc, *s_triton, *s_set_alloc, *s_profiler, *s_debug, *s_dump_tensors;
} cls;

struct ind {
    PyObject *tuner;                                     /* held: the key */
    PyObject *launcher;                                  /* held: launchers[0] as analysed (NULL: none yet) */
    PyObject *devtype;                                   /* held: self.device_props.type */
    struct gp_prog *p;                                   /* never freed */
    PyObject *runner, *function, *packed, *enter, *exit; /* borrowed from the analysis p holds */
    PyObject *static_k;       /* a static launcher's kernel object (borrowed, as runner), else NULL */
    unsigned nparams, nk;     /* the launcher's arguments but the stream; kernel arguments */
    int16_t src[FP_MAX_ARGS]; /* a kernel argument: >= 0 the launcher's argument, -1 obj[] */
    PyObject *obj[FP_MAX_ARGS];
    const char *bad; /* why never served (NULL: served when the state allows) */
    unsigned tries;
    uint64_t epoch; /* fpy.epoch when the state was last found as modelled */
};

#define IND_TRIES 4           /* launchers analysed for one autotuner (autotuning replaces it) */
static struct fp_pmap tuners; /* CachingAutotuner -> struct ind */

/* Whether code's co_names are all in names[0..n). */
static int names_within(PyObject *code, const char *const *names, size_t n)
{
    PyObject *cn = PY(PyObject_GetAttrString)(code, "co_names");
    int ok = cn && FP_TYPE(cn) == fpy.t_tuple;
    for (Py_ssize_t i = 0; ok && i < PY(PyTuple_Size)(cn); i++) {
        PyObject *s = PY(PyTuple_GetItem)(cn, i);
        int found = 0;
        for (size_t j = 0; j < n && !found && s && FP_TYPE(s) == fpy.t_str; j++)
            found = PY(PyUnicode_CompareWithASCIIString)(s, names[j]) == 0;
        if (!found && fp_conf.debug) {
            const char *t = s && FP_TYPE(s) == fpy.t_str ? PY(PyUnicode_AsUTF8)(s) : NULL;
            trlat_log_debug("fast path: inductor: a run that reads %s is not modelled", t ? t : "?");
        }
        ok = found;
    }
    trlat_py_drop(cn);
    PY(PyErr_Clear)();
    return ok;
}

static int type_named(PyObject *o, const char *name)
{
    PyObject *t = (PyObject *)FP_TYPE(o);
    PyObject *n = fp_getattr(t, fpy.s___name__);
    int r = n && FP_TYPE(n) == fpy.t_str && PY(PyUnicode_CompareWithASCIIString)(n, name) == 0;
    trlat_py_drop(n);
    return r;
}

/* run's nested alloc_fn code object, when it is the one modelled. */
static PyObject *find_alloc_code(PyObject *code)
{
    PyObject *consts = PY(PyObject_GetAttrString)(code, "co_consts"), *found = NULL;
    for (Py_ssize_t i = 0; consts && FP_TYPE(consts) == fpy.t_tuple && i < PY(PyTuple_Size)(consts); i++) {
        PyObject *c = PY(PyTuple_GetItem)(consts, i);
        if (!c || !type_named(c, "code"))
            continue;
        PyObject *nm = PY(PyObject_GetAttrString)(c, "co_name");
        PyObject *fv = PY(PyObject_GetAttrString)(c, "co_freevars");
        if (nm && FP_TYPE(nm) == fpy.t_str && !PY(PyUnicode_CompareWithASCIIString)(nm, "alloc_fn") && fv &&
            FP_TYPE(fv) == fpy.t_tuple && PY(PyTuple_Size)(fv) == 1 &&
            names_within(c, alloc_names, sizeof alloc_names / sizeof *alloc_names))
            found = c;
        trlat_py_drop(nm);
        trlat_py_drop(fv);
    }
    trlat_py_drop(consts);
    PY(PyErr_Clear)();
    return found;
}

static int intern_names(void)
{
    struct {
        PyObject **p;
        const char *s;
    } n[] = {{&cls.s_launchers, "launchers"},
             {&cls.s_stream, "stream"},
             {&cls.s_is_prof, "_is_profiler_enabled"},
             {&cls.s_device_props, "device_props"},
             {&cls.s_type, "type"},
             {&cls.s_config, "config"},
             {&cls.s_found, "found_by_coordesc"},
             {&cls.s_store_cubin, "store_cubin"},
             {&cls.s_interp, "triton_interpret"},
             {&cls.s_dump, "dump_launch_params"},
             {&cls.s_meta, "inductor_meta"},
             {&cls.s_coordesc, "coordinate_descent_tuning"},
             {&cls.s_triton, "triton"},
             {&cls.s_set_alloc, "set_allocator"},
             {&cls.s_profiler, "autograd_profiler"},
             {&cls.s_debug, "get_active_debug_mode"},
             {&cls.s_dump_tensors, "dump_launch_tensors"}};
    if (!PY(PyUnicode_InternFromString))
        return 0;
    for (size_t i = 0; i < sizeof n / sizeof *n; i++)
        if (!*n[i].p && !(*n[i].p = PY(PyUnicode_InternFromString)(n[i].s)))
            return 0;
    return 1;
}

/* The globals run reads that decide what it does, as found: 1 still so. */
static int globals_current(void)
{
    if (fpy.watchers && cls.epoch == fpy.epoch)
        return 1;
    PyObject *sa = cls.triton ? fp_dget(fp_dict_of(cls.triton), cls.s_set_alloc) : NULL;
    int ok = fp_dget(cls.globals, cls.s_triton) == cls.triton && sa == cls.set_allocator &&
             fp_dget(cls.globals, cls.s_profiler) == cls.profiler && fp_dict_of(cls.profiler) == cls.profiler_dict &&
             fp_dget(cls.globals, cls.s_debug) == cls.debug_mode;
    if (ok)
        cls.epoch = fpy.epoch;
    return ok;
}

static int is_caching_autotuner(void *type)
{
    PyObject *n = fp_getattr((PyObject *)type, fpy.s___name__);
    PyObject *m = PY(PyObject_GetAttrString)((PyObject *)type, "__module__");
    PY(PyErr_Clear)();
    int r = n && FP_TYPE(n) == fpy.t_str && !PY(PyUnicode_CompareWithASCIIString)(n, "CachingAutotuner") && m &&
            FP_TYPE(m) == fpy.t_str &&
            !PY(PyUnicode_CompareWithASCIIString)(m, "torch._inductor.runtime.triton_heuristics");
    trlat_py_drop(n);
    trlat_py_drop(m);
    return r;
}

/* Whether type is CachingAutotuner and run its run as modelled; looked at
 * once (other KernelInterface subclasses, a library's, are remembered as
 * not it, a few at a time). */
static int learn_class(void *type, PyObject *run)
{
    if (cls.state)
        return cls.state > 0 && type == cls.type && run == cls.run;
    static void *others[8];
    static unsigned next;
    for (unsigned i = 0; i < 8; i++)
        if (others[i] == type)
            return 0;
    if (!is_caching_autotuner(type)) {
        others[next++ % 8] = type; /* a pointer compared, never followed */
        return 0;
    }
    cls.state = -1;
    const char *why = NULL;
    PyObject *code = NULL;
    if (!intern_names() || !PY(PyContextVar_Get) || FP_TYPE(run) != fpy.t_function ||
        !(code = PY(PyFunction_GetCode)(run)))
        why = "this Python lacks what it needs";
    else if (!names_within(code, run_names, sizeof run_names / sizeof *run_names))
        why = "its run reads names torch 2.11's does not";
    if (!why) {
        cls.globals = PY(PyFunction_GetGlobals)(run);
        cls.triton = fp_dget(cls.globals, cls.s_triton);
        cls.profiler = fp_dget(cls.globals, cls.s_profiler);
        cls.debug_mode = fp_dget(cls.globals, cls.s_debug);
        cls.profiler_dict = cls.profiler ? fp_dict_of(cls.profiler) : NULL;
        cls.set_allocator = cls.triton ? fp_dget(fp_dict_of(cls.triton), cls.s_set_alloc) : NULL;
        if (!cls.triton || !cls.profiler_dict || fp_dget(cls.profiler_dict, cls.s_is_prof) == NULL || !cls.debug_mode ||
            FP_TYPE(cls.debug_mode) != fpy.t_function)
            why = "its module is not as modelled";
    }
    if (!why && cls.set_allocator) {
        PyObject *sc = FP_TYPE(cls.set_allocator) == fpy.t_function ? PY(PyFunction_GetCode)(cls.set_allocator) : NULL;
        PyObject *name = PY(PyUnicode_InternFromString)("_allocator");
        PyObject *var = sc && name ? fp_dget(PY(PyFunction_GetGlobals)(cls.set_allocator), name) : NULL;
        PyObject *ac = var ? find_alloc_code(code) : NULL;
        trlat_py_drop(name);
        if (!sc || !names_within(sc, set_allocator_names, 2) || !var || !type_named(var, "ContextVar") || !ac) {
            why = "triton.set_allocator or run's allocator is not as modelled";
        } else {
            cls.alloc_var = fp_hold(var);
            cls.alloc_code = fp_hold(ac); /* held by run's code too */
        }
    }
    if (why) {
        if (fp_conf.debug)
            trlat_log_debug("fast path: inductor: CachingAutotuner.run is never served above its launcher: %s", why);
        return 0;
    }
    cls.type = type;
    cls.run = fp_hold(run);
    fp_hold(cls.globals);
    fp_hold(cls.triton);
    fp_hold(cls.profiler);
    fp_hold(cls.profiler_dict);
    fp_hold(cls.debug_mode);
    if (cls.set_allocator)
        fp_hold(cls.set_allocator);
    fp_watch_dict(cls.globals);
    fp_watch_dict(cls.profiler_dict);
    fp_watch_dict(fp_dict_of(cls.triton));
    cls.epoch = fpy.epoch - 1;
    cls.state = 1;
    return 1;
}

/* The allocator run() would set is equivalent to the one set: 1 yes. */
static int allocator_same(struct ind *I)
{
    if (!cls.alloc_var)
        return 1; /* a Triton without set_allocator: run() sets none */
    PyObject *v = NULL;
    if (PY(PyContextVar_Get)(cls.alloc_var, NULL, &v) < 0 || !v) {
        PY(PyErr_Clear)();
        return 0;
    }
    int same = v == cls.last_alloc && I->devtype == cls.last_type;
    if (!same && FP_TYPE(v) == fpy.t_function && PY(PyFunction_GetCode)(v) == cls.alloc_code) {
        PyObject *cl = PY(PyFunction_GetClosure)(v);
        PyObject *cell =
            cl && FP_TYPE(cl) == fpy.t_tuple && PY(PyTuple_Size)(cl) == 1 ? PY(PyTuple_GetItem)(cl, 0) : NULL;
        PyObject *owner = cell && FP_TYPE(cell) == fpy.t_cell ? ((struct py_cell *)cell)->ref : NULL;
        PyObject *props = owner ? fp_getattr(owner, cls.s_device_props) : NULL;
        PyObject *t = props ? fp_getattr(props, cls.s_type) : NULL;
        int eq = t && FP_TYPE(t) == fpy.t_str && FP_TYPE(I->devtype) == fpy.t_str &&
                 PY(PyUnicode_Compare)(t, I->devtype) == 0;
        PY(PyErr_Clear)();
        trlat_py_drop(t);
        trlat_py_drop(props);
        if (eq) {
            trlat_py_drop(cls.last_alloc);
            trlat_py_drop(cls.last_type);
            cls.last_alloc = fp_hold(v);
            cls.last_type = fp_hold(I->devtype);
            same = 1;
        }
    }
    PY(Py_DecRef)(v);
    return same;
}

static int truthy(PyObject *v)
{
    if (!v || v == fpy.o_none || v == fpy.o_false)
        return 0;
    if (v == fpy.o_true)
        return 1;
    return -1; /* anything else: not modelled */
}

/* Analyses launcher for I; I->bad says why when it cannot be served. */
static void analyse(struct ind *I, PyObject *launcher)
{
    trlat_py_drop(I->launcher);
    I->launcher = fp_hold(launcher);
    I->p = NULL;
    I->bad = NULL;
    if (++I->tries > IND_TRIES) {
        I->bad = "its launchers kept changing";
        return;
    }
    PyObject *call;
    const char *why;
    struct gp_prog *p = fp_gprog_launcher(launcher, &call, &why);
    PyObject *runner =
        call && FP_TYPE(call) == fpy.t_tuple && PY(PyTuple_Size)(call) == 3 ? PY(PyTuple_GetItem)(call, 0) : NULL;
    PyObject *spec = runner ? PY(PyTuple_GetItem)(call, 1) : NULL;
    PyObject *argc = runner ? PY(PyTuple_GetItem)(call, 2) : NULL;
    Py_ssize_t ns = spec && FP_TYPE(spec) == fpy.t_tuple ? PY(PyTuple_Size)(spec) : -1;
    PyObject *sk = NULL;
    int is_static = p && runner ? fp_static_kernel_of(runner, &sk) : 0;
    I->static_k = NULL;
    if (is_static < 0) {
        /* a static launcher's, whose class its layer has not learnt yet */
        trlat_py_drop(I->launcher);
        I->launcher = NULL;
        I->tries--;
        I->bad = "its static launcher is not known yet";
    } else if (is_static) {
        /* runner(grid_0, grid_1, grid_2, stream, *kernel arguments) */
        if (ns > FP_MAX_ARGS)
            I->bad = "its runner call is not a static launcher's";
        for (Py_ssize_t i = 0; i < ns && !I->bad; i++) {
            PyObject *t = PY(PyTuple_GetItem)(spec, i), *a = PY(PyTuple_GetItem)(t, 0), *b = PY(PyTuple_GetItem)(t, 1);
            long src = PY(PyLong_AsLong)(a);
            if (src == 2)
                I->bad = "its runner call is not a static launcher's";
            I->src[i] = (int16_t)(src == 1 ? -1 : PY(PyLong_AsLong)(b));
            I->obj[i] = src == 1 ? b : NULL;
        }
        if (!I->bad) {
            I->runner = runner;
            I->static_k = sk;
            I->nk = (unsigned)ns;
            I->nparams = (unsigned)PY(PyLong_AsLong)(argc) - 1;
            I->p = p;
        }
    } else if (!p) {
        I->bad = why ? why : "not analysed";
    } else if (ns < 5 || ns - 5 > FP_MAX_ARGS || !argc || FP_TYPE(argc) != fpy.t_long) {
        I->bad = "its runner call is not a CudaLauncher's";
    } else {
        PyObject *fixed[5];
        for (Py_ssize_t i = 0; i < ns && !I->bad; i++) {
            PyObject *t = PY(PyTuple_GetItem)(spec, i), *a = PY(PyTuple_GetItem)(t, 0), *b = PY(PyTuple_GetItem)(t, 1);
            long src = PY(PyLong_AsLong)(a);
            int is_obj = src == 1;
            if (i < 5) {
                if (i == 2 && src == 2)
                    fixed[i] = NULL; /* bin.launch_metadata(...): read by the launch hooks alone */
                else if (!is_obj)
                    I->bad = "its runner call passes an argument where a CudaLauncher takes its own";
                else
                    fixed[i] = b;
            } else if (src == 2) {
                I->bad = "its runner call is not a CudaLauncher's";
            } else if (is_obj) {
                I->src[i - 5] = -1;
                I->obj[i - 5] = b;
            } else {
                long k = PY(PyLong_AsLong)(b);
                I->src[i - 5] = (int16_t)k;
                I->obj[i - 5] = NULL;
            }
        }
        if (!I->bad) {
            I->runner = runner;
            I->function = fixed[0];
            I->packed = fixed[1];
            I->enter = fixed[3];
            I->exit = fixed[4];
            I->nk = (unsigned)(ns - 5);
            I->nparams = (unsigned)PY(PyLong_AsLong)(argc) - 1;
            I->p = p;
        }
    }
    PY(PyErr_Clear)();
    if (fp_conf.debug) {
        if (I->bad)
            trlat_log_debug("fast path: inductor: a launcher is not served above its runner: %s", I->bad);
        else
            trlat_log_debug("fast path: inductor: a launcher of %u arguments is served above its %s", I->nparams,
                            I->static_k ? "static launcher" : "runner");
    }
}

static struct ind *find(PyObject *tuner)
{
    struct ind *I = fp_pmap_get(&tuners, tuner);
    if (I || fp_pmap_full(&tuners))
        return I;
    I = calloc(1, sizeof *I);
    if (!I)
        return NULL;
    PyObject *props = fp_getattr(tuner, cls.s_device_props);
    I->devtype = props ? fp_getattr(props, cls.s_type) : NULL;
    trlat_py_drop(props);
    if (!I->devtype)
        I->devtype = fp_hold(fpy.o_none);
    I->epoch = fpy.epoch - 1;
    if (fp_pmap_put(&tuners, tuner, I)) {
        trlat_py_drop(I->devtype);
        free(I);
        return NULL;
    }
    I->tuner = fp_hold(tuner);
    return I;
}

/* The autotuner as modelled now (one launcher, nothing to tune, save, dump
 * or profile), with its launcher analysed: 1 yes. */
static int current(struct ind *I, PyObject *self)
{
    PyObject *d = fp_dict_of(self);
    PyObject *ls = fp_dget(d, cls.s_launchers);
    if (!ls || FP_TYPE(ls) != fpy.t_list || trlat_py_size(ls) != 1)
        return 0; /* run() precompiles or autotunes */
    PyObject *launcher = PY(PyList_GetItem)(ls, 0);
    if (launcher != I->launcher) {
        if (!launcher || FP_TYPE(launcher) != fpy.t_function)
            return 0;
        analyse(I, launcher);
        I->epoch = fpy.epoch - 1;
    }
    if (I->bad || !globals_current())
        return 0;
    if (fp_dget(cls.profiler_dict, cls.s_is_prof) != fpy.o_false)
        return 0; /* the profiler is on: run() records the call */
    if (!fpy.watchers || I->epoch != fpy.epoch) {
        PyObject *meta = fp_dget(d, cls.s_meta);
        PyObject *ld = fp_dict_of(launcher);
        PyObject *cfg = ld ? fp_dget(ld, cls.s_config) : NULL;
        PyObject *coordesc = meta && FP_TYPE(meta) == fpy.t_dict ? fp_dget(meta, cls.s_coordesc) : NULL;
        PyObject *found = cfg ? fp_getattr(cfg, cls.s_found) : NULL;
        int ok = meta && FP_TYPE(meta) == fpy.t_dict && ld && truthy(fp_dget(d, cls.s_interp)) == 0 &&
                 truthy(fp_dget(d, cls.s_dump)) == 0 && truthy(fp_dget(d, cls.s_dump_tensors)) == 0 &&
                 truthy(fp_dget(ld, cls.s_store_cubin)) == 0 && (truthy(coordesc) == 0 || truthy(found) == 1);
        trlat_py_drop(found);
        PY(PyErr_Clear)();
        if (!ok)
            return 0;
        fp_watch_dict(d);
        fp_watch_dict(ld);
        fp_watch_dict(meta);
        if (cfg)
            fp_watch_dict_of(cfg);
        I->epoch = fpy.epoch;
    }
    return allocator_same(I);
}

/* Verify mode: the grid the program computed for the launcher's next call
 * on this thread, checked by the launcher layer (fp_inductor_check). */
static _Thread_local struct {
    PyObject *runner;
    struct ind *I;
    unsigned g[3];
} expect;

void fp_inductor_check(PyObject *launcher, const unsigned g[3])
{
    if (!expect.runner || expect.runner != launcher)
        return;
    struct ind *I = expect.I;
    expect.runner = NULL;
    if (g[0] == expect.g[0] && g[1] == expect.g[1] && g[2] == expect.g[2])
        return;
    static atomic_flag once;
    trlat_log_once(&once,
                   "fast path verify: an Inductor launcher's grid is (%u, %u, %u), not the (%u, %u, %u) its program "
                   "computed; that launcher is not served above its CudaLauncher from now on",
                   g[0], g[1], g[2], expect.g[0], expect.g[1], expect.g[2]);
    I->bad = "verify found its grid program wrong";
}

/* run()'s first call, get_active_debug_mode(): a read of torch's dispatch
 * mode state, called as run() calls it (1: a DebugMode records the call). */
static int debug_mode_on(void)
{
    PyObject *m = PY(PyObject_Vectorcall)(cls.debug_mode, NULL, 0, NULL);
    if (!m)
        PY(PyErr_Clear)();
    int on = m != fpy.o_none;
    trlat_py_drop(m);
    return on;
}

PyObject *fp_inductor_run(PyObject *orig, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    expect.runner = NULL;
    if (nargs < 1 || !kwnames || trlat_py_size(kwnames) != 1 || !fp_ready() || !fp_memo.cap)
        return NULL;
    PyObject *self = args[0];
    if (!learn_class(FP_TYPE(self), orig))
        return NULL;
    PyObject *kw = PY(PyTuple_GetItem)(kwnames, 0);
    if (kw != cls.s_stream && (FP_TYPE(kw) != fpy.t_str || PY(PyUnicode_CompareWithASCIIString)(kw, "stream")))
        return NULL; /* benchmark_run, or another keyword */
    struct ind *I = find(self);
    if (!I || !current(I, self) || (unsigned)(nargs - 1) != I->nparams)
        return NULL;
    unsigned g[3];
    uint64_t stream;
    int u;
    PyObject *so = args[nargs];
    if (fp_gprog_run_args(I->p, I->launcher, args + 1, nargs - 1, g) || FP_TYPE(so) != fpy.t_long ||
        fp_read_int(so, &stream, &u) || (!I->static_k && (!fp_hook_idle(I->enter) || !fp_hook_idle(I->exit))) ||
        debug_mode_on())
        return NULL; /* (a static launcher calls no launch hook) */
    if (fp_conf.verify) {
        expect.runner = I->static_k ? I->static_k : I->runner;
        expect.I = I;
        memcpy(expect.g, g, sizeof g);
        return NULL; /* run() runs; its launcher's call is checked and verified */
    }
    PyObject *kargs[FP_MAX_ARGS];
    for (unsigned i = 0; i < I->nk; i++)
        kargs[i] = I->src[i] >= 0 ? args[1 + I->src[i]] : I->obj[i];
    PyObject *result = NULL;
    if (I->static_k) {
        if (!fp_static_serve(I->static_k, g, stream, kargs, I->nk))
            return NULL;
        PY(Py_IncRef)(fpy.o_none);
        return fpy.o_none;
    }
    fp_launcher_serve(I->runner, g, stream, I->function, I->packed, kargs, I->nk, &result);
    return result; /* NULL with an error set: the replay's launch failed, raised as the launcher would */
}
