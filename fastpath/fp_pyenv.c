/* The Python objects the memo compares against, resolved once with the GIL
 * held when the first Triton call reaches it, and the dict/type watchers
 * (Python 3.12+) that let the guards skip re-reading attributes until
 * something they read changes. Without watchers every call re-reads them. */
#include "fastpath/fp_py.h"
#include "interpose/log.h"
#include "interpose/real.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

struct fp_pyenv fpy __attribute__((aligned(64))); /* its first two lines: a hit's (fp_py.h) */

PyObject *fp_getattr(PyObject *o, PyObject *name)
{
    PyObject *r = PY(PyObject_GetAttr)(o, name);
    if (!r)
        PY(PyErr_Clear)();
    return r;
}

/* A module the program already imported (sys.modules), new reference; the
 * memo never imports anything itself. */
static PyObject *import(const char *name)
{
    PyObject *n = PY(PyUnicode_FromString)(name);
    PyObject *m = n ? PY(PyImport_GetModule)(n) : NULL;
    if (n)
        PY(Py_DecRef)(n);
    if (!m)
        PY(PyErr_Clear)();
    return m;
}

/* Any event on a watched dict or type: look again. Never fails. */
static int on_dict(int event, PyObject *d, PyObject *k, PyObject *v)
{
    fpy.epoch++;
    return 0;
}

static int on_type(PyObject *t)
{
    fpy.epoch++;
    return 0;
}

void fp_watch_dict(PyObject *d)
{
    if (fpy.watchers && d && PY(PyDict_Watch)(fpy.dict_wid, d) < 0)
        PY(PyErr_Clear)();
}

void fp_watch_type(PyObject *t)
{
    if (fpy.watchers && t && PY(PyType_Watch)(fpy.type_wid, t) < 0)
        PY(PyErr_Clear)();
}

static void *data_sym(const char *name)
{
    return trlat_real_dlsym(RTLD_DEFAULT, name);
}

static int needed_api(void)
{
    /* the optional entries of pyapi.h the memo cannot do without */
    return PY(PyObject_GetAttr) && PY(PyObject_SetAttr) && PY(PyObject_VectorcallMethod) &&
           PY(PyObject_Vectorcall) && /* exported from 3.11 (an inline before) */
           PY(PyObject_RichCompare) && PY(PyCallable_Check) && PY(PyLong_AsLongLongAndOverflow) &&
           PY(PyLong_AsUnsignedLongLong) && PY(PyLong_FromLongLong) && PY(PyFloat_AsDouble) &&
           PY(PyDict_GetItemWithError) && PY(PyDict_Next) && PY(PyDict_Size) && PY(PyDict_Copy) && PY(PyDict_Update) &&
           PY(PyList_Size) && PY(PyList_GetItem) && PY(PyUnicode_AsUTF8AndSize) && PY(PyUnicode_InternFromString) &&
           PY(PyUnicode_Compare) && PY(PyEval_SaveThread) && PY(PyEval_RestoreThread);
}

static int intern_all(void)
{
    /* one line per group of names */
    /* clang-format off */
#define S(field, text)                                              \
    if (!(fpy.field = PY(PyUnicode_InternFromString)(text)))        \
        return 0;
    S(s_data_ptr, "data_ptr") S(s___mro__, "__mro__") S(s_dtype, "dtype") S(s_is_cuda, "is_cuda") S(s_params, "params")
    S(s_name, "name") S(s___name__, "__name__") S(s_is_constexpr, "is_constexpr") S(s_is_const, "is_const")
    S(s_dns, "do_not_specialize") S(s_dnsa, "do_not_specialize_on_alignment")
    S(s_annotation_type, "annotation_type") S(s__param, "_param") S(s_kind, "kind") S(s_default, "default")
    S(s_pre_run_hooks, "pre_run_hooks") S(s_used_global_vals, "used_global_vals")
    S(s_device_caches, "device_caches") S(s_debug, "debug") S(s_runtime, "runtime")
    S(s_compilation, "compilation") S(s_instrumentation_mode, "instrumentation_mode")
    S(s_launch_enter_hook, "launch_enter_hook") S(s_launch_exit_hook, "launch_exit_hook") S(s_calls, "calls")
    S(s_active, "active") S(s_get_current_device, "get_current_device")
    S(s_get_current_stream, "get_current_stream") S(s___dict__, "__dict__") S(s_run, "run")
    S(s_function, "function") S(s_grid, "grid") S(s_warmup, "warmup") S(s_metadata, "metadata")
    S(s_num_warps, "num_warps") S(s_num_ctas, "num_ctas") S(s_shared, "shared")
    S(s_launch_cooperative_grid, "launch_cooperative_grid") S(s_launch_pdl, "launch_pdl")
    S(s_global_scratch_size, "global_scratch_size") S(s_profile_scratch_size, "profile_scratch_size")
    /* clang-format on */
#undef S
                                                                    return 1;
}

/* fp_small_int's layout: CPython 3.12 or 3.13 (ver: Py_Version), and its
 * answers the C API's for a few values. */
static int long_layout_known(unsigned long ver)
{
    if ((ver >> 16) < 0x030c || (ver >> 16) > 0x030d)
        return 0;
    static const long probe[] = {0, 1, -1, 7, -1000, (1L << 30) - 1, -((1L << 30) - 1)};
    fpy.long_compact = 1;
    int ok = 1;
    for (unsigned i = 0; ok && i < sizeof probe / sizeof probe[0]; i++) {
        PyObject *o = PY(PyLong_FromLong)(probe[i]);
        long long x;
        ok = o && fp_small_int(o, &x) && x == probe[i];
        trlat_py_drop(o);
    }
    PyObject *big = PY(PyLong_FromLongLong)(1LL << 40);
    long long x;
    ok = ok && big && !fp_small_int(big, &x); /* not compact: the C API reads it */
    trlat_py_drop(big);
    fpy.long_compact = 0;
    if (PY(PyErr_Occurred)())
        PY(PyErr_Clear)();
    return ok;
}

/* fp_tuple_len/get's layout: PyTupleObject is PyObject_VAR_HEAD then ob_item
 * up to 3.13 (3.14 puts a cached hash before the items), checked on a
 * probe tuple. */
static int tuple_layout_known(unsigned long ver)
{
    if ((ver >> 16) < 0x0309 || (ver >> 16) > 0x030d)
        return 0;
    PyObject *a = PY(PyLong_FromLong)(1000), *b = PY(PyLong_FromLong)(2000);
    PyObject *t = a && b ? PY(PyTuple_New)(2) : NULL;
    int ok = 0;
    if (t) {
        PY(Py_IncRef)(a);
        PY(Py_IncRef)(b);
        PY(PyTuple_SetItem)(t, 0, a);
        PY(PyTuple_SetItem)(t, 1, b);
        fpy.tuple_direct = 1;
        ok = fp_tuple_len(t) == 2 && fp_tuple_get(t, 0) == a && fp_tuple_get(t, 1) == b;
        fpy.tuple_direct = 0;
    }
    trlat_py_drop(t);
    trlat_py_drop(a);
    trlat_py_drop(b);
    if (PY(PyErr_Occurred)())
        PY(PyErr_Clear)();
    return ok;
}

/* fp_dict_version's word: PyDictObject's ma_version_tag (3.11-3.13;
 * deprecated since 3.12), after the object head and ma_used, which each
 * change of the dict sets anew from a process-wide counter; checked on a
 * probe dict: an insert and a value replaced in place each change it, a
 * read does not, and 64 changes in a row each raise it. */
static int dict_version_known(unsigned long ver)
{
    if ((ver >> 16) < 0x030b || (ver >> 16) > 0x030d)
        return 0;
    PyObject *d = PY(PyDict_New)(), *k = PY(PyLong_FromLong)(1000), *v = PY(PyLong_FromLong)(2000);
    int ok = 0;
    if (d && k && v) {
        fpy.dict_version = 1;
        uint64_t t0 = fp_dict_version(d);
        ok = PY(PyDict_SetItem)(d, k, v) == 0;
        uint64_t t1 = fp_dict_version(d);
        ok = ok && PY(PyDict_GetItemWithError)(d, k) == v && fp_dict_version(d) == t1 && t1 != t0;
        ok = ok && PY(PyDict_SetItem)(d, k, k) == 0 && fp_dict_version(d) != t1 && trlat_py_size(d) == 1;
        /* a version from a process-wide counter rises with every change;
         * a per-dict counter of a few bits would wrap */
        for (int i = 0; ok && i < 64; i++) {
            t1 = fp_dict_version(d);
            ok = PY(PyDict_SetItem)(d, k, i % 2 ? k : v) == 0 && fp_dict_version(d) > t1;
        }
        fpy.dict_version = 0;
    }
    trlat_py_drop(d);
    trlat_py_drop(k);
    trlat_py_drop(v);
    if (PY(PyErr_Occurred)())
        PY(PyErr_Clear)();
    return ok;
}

/* Where an object of a heap class with a managed dict keeps its dict
 * (fp_no_instance_attrs): by version, checked on a probe object of a new
 * class, whose __dict__ once made must be the word at -3 (and, on 3.11,
 * the values word at -4 cleared). 0: unknown, read attributes the usual
 * way. */
static int managed_dict_words(unsigned long ver)
{
    unsigned v = (unsigned)(ver >> 16);
    int words = v == 0x030b ? 2 : v == 0x030c || v == 0x030d ? 1 : 0;
    fpy.inline_values_flag = v == 0x030d;
    if (!words || !PY(PyType_GetFlags))
        return 0;
    PyObject *parts[3] = {PY(PyUnicode_FromString)("trlat_probe"), PY(PyTuple_New)(0), PY(PyDict_New)()};
    PyObject *args = parts[0] && parts[1] && parts[2] ? PY(PyTuple_New)(3) : NULL; /* ("trlat_probe", (), {}) */
    for (int i = 0; i < 3; i++) {
        if (args)
            PY(PyTuple_SetItem)(args, i, parts[i]); /* steals; a new tuple's slot takes it */
        else
            trlat_py_drop(parts[i]);
    }
    PyObject *cls = args ? PY(PyObject_CallObject)((PyObject *)FP_TYPE(fpy.t_long), args) : NULL; /* type(...) */
    PyObject *o = cls ? PY(PyObject_CallObject)(cls, NULL) : NULL;
    int ok = 0;
    if (o && (PY(PyType_GetFlags)(cls) & (1UL << 4)) /* Py_TPFLAGS_MANAGED_DICT */) {
        PyObject *d = fp_getattr(o, fpy.s___dict__);
        const void *const *w = (const void *const *)o;
        ok = d && FP_TYPE(d) == fpy.t_dict && w[-3] == (void *)d && (words == 1 || !w[-4]);
        trlat_py_drop(d);
    }
    trlat_py_drop(o);
    trlat_py_drop(cls);
    trlat_py_drop(args);
    if (PY(PyErr_Occurred)())
        PY(PyErr_Clear)();
    return ok ? words : 0;
}

/* Free-threaded builds (3.13t) have no GIL to serialize the memo. */
static int gil_enabled(void)
{
    PyObject *sys = import("sys");
    PyObject *f = trlat_py_attr(sys, "_is_gil_enabled");
    int on = 1;
    if (f) {
        PyObject *r = PY(PyObject_CallObject)(f, NULL);
        if (r) {
            on = PY(PyObject_IsTrue)(r) != 0;
            PY(Py_DecRef)(r);
        } else {
            PY(PyErr_Clear)();
        }
        PY(Py_DecRef)(f);
    }
    if (sys)
        PY(Py_DecRef)(sys);
    return on;
}

static int resolve(void)
{
    if (!trlat_pyapi_resolve() || !needed_api() || !intern_all() || !gil_enabled())
        return 0;
    fpy.t_long = data_sym("PyLong_Type");
    fpy.t_float = data_sym("PyFloat_Type");
    fpy.t_bool = data_sym("PyBool_Type");
    fpy.t_str = data_sym("PyUnicode_Type");
    fpy.t_tuple = data_sym("PyTuple_Type");
    fpy.t_list = data_sym("PyList_Type");
    fpy.t_dict = data_sym("PyDict_Type");
    fpy.o_true = data_sym("_Py_TrueStruct");
    fpy.o_false = data_sym("_Py_FalseStruct");
    fpy.o_none = trlat_py.none;
    fpy.t_function = data_sym("PyFunction_Type");
    fpy.t_cell = data_sym("PyCell_Type");
    fpy.t_getset = data_sym("PyGetSetDescr_Type");
    fpy.t_methdescr = data_sym("PyMethodDescr_Type");
    PyObject **te = data_sym("PyExc_TypeError");
    fpy.exc_type = te ? *te : NULL;
    if (!fpy.t_long || !fpy.t_float || !fpy.t_bool || !fpy.t_str || !fpy.t_tuple || !fpy.t_list || !fpy.t_dict ||
        !fpy.o_true || !fpy.o_false || !fpy.exc_type)
        return 0;

    PyObject *jit = import("triton.runtime.jit");
    fpy.jit_cls = trlat_py_attr(jit, "JITFunction");
    fpy.ki_cls = trlat_py_attr(jit, "KernelInterface");
    fpy.compute_cache_key = trlat_py_attr(jit, "compute_cache_key");
    fpy.jit_run = trlat_py_attr(fpy.jit_cls, "run");
    if (jit)
        PY(Py_DecRef)(jit);
    fpy.knobs_mod = import("triton.knobs");
    PyObject *hc = trlat_py_attr(fpy.knobs_mod, "HookChain");
    fpy.t_hookchain = hc; /* held */
    PyObject *lang = import("triton.language");
    fpy.t_tl_dtype = trlat_py_attr(lang, "dtype"); /* held; NULL is fine */
    if (lang)
        PY(Py_DecRef)(lang);
    PyObject *drv = import("triton.runtime.driver");
    fpy.driver_cfg = trlat_py_attr(drv, "driver");
    if (drv)
        PY(Py_DecRef)(drv);
    PyObject *torch = import("torch");
    PyObject *nn = trlat_py_attr(torch, "nn");
    PyObject *cuda = trlat_py_attr(torch, "cuda");
    PyObject *tc = trlat_py_attr(torch, "_C");
    PyObject *inspect = import("inspect");
    PyObject *P = trlat_py_attr(inspect, "Parameter");
    fpy.t_tensor = trlat_py_attr(torch, "Tensor"); /* held */
    fpy.t_param = trlat_py_attr(nn, "Parameter");  /* held; NULL is fine */
    fpy.t_size = trlat_py_attr(torch, "Size");     /* held; NULL is fine */
    PyObject *f32 = trlat_py_attr(torch, "float32");
    fpy.t_torch_dtype = f32 ? FP_TYPE(f32) : NULL; /* torch's dtypes and their type live as long as torch */
    trlat_py_drop(f32);
    fpy.torch_current_device = trlat_py_attr(cuda, "current_device");
    fpy.torch_get_device = trlat_py_attr(tc, "_cuda_getDevice");
    fpy.torch_raw_stream = trlat_py_attr(tc, "_cuda_getCurrentRawStream");
    fpy.o_empty = trlat_py_attr(P, "empty");
    PyObject *ver = trlat_py_attr(torch, "__version__");
    const char *vs = ver ? PY(PyUnicode_AsUTF8AndSize)(ver, NULL) : NULL;
    fpy.torch_layout_known = vs && strncmp(vs, "2.11.", 5) == 0;
    trlat_py_drop(ver);
    PY(PyErr_Clear)();
    PyObject *tmp[] = {torch, nn, cuda, tc, inspect, P};
    for (unsigned i = 0; i < sizeof tmp / sizeof tmp[0]; i++)
        if (tmp[i])
            PY(Py_DecRef)(tmp[i]);
    return fpy.jit_cls && fpy.jit_run && fpy.knobs_mod && fpy.t_hookchain && fpy.driver_cfg && fpy.t_tensor &&
           fpy.o_empty && fpy.compute_cache_key;
}

int fp_py_init(void)
{
    if (fpy.ready)
        return fpy.ready > 0;
    fpy.ready = -1;
    if (!resolve()) {
        if (PY(PyErr_Occurred) && PY(PyErr_Occurred)())
            PY(PyErr_Clear)();
        static atomic_flag once;
        trlat_log_once(&once, "fast path: this Python or Triton is not one it knows (needs CPython 3.11+ with a GIL, "
                              "Triton 3.6's JITFunction and torch); every call runs through Triton");
        return 0;
    }
    if (PY(PyDict_AddWatcher) && PY(PyDict_Watch) && PY(PyType_AddWatcher) && PY(PyType_Watch)) {
        fpy.dict_wid = PY(PyDict_AddWatcher)(on_dict);
        fpy.type_wid = fpy.dict_wid >= 0 ? PY(PyType_AddWatcher)(on_type) : -1;
        fpy.watchers = fpy.dict_wid >= 0 && fpy.type_wid >= 0;
        if (!fpy.watchers)
            PY(PyErr_Clear)(); /* all watcher ids taken: read the attributes on every call */
    }
    const unsigned long *pv = trlat_real_dlsym(RTLD_DEFAULT, "Py_Version");
    unsigned long ver = pv ? *pv : 0;
    if (fpy.watchers && (ver >> 8) == 0x030d00) {
        /* 3.13.0: no store into an object's inline values reaches a watcher
         * of its __dict__ (CPython gh-125608, fixed in 3.13.1), so a
         * JITFunction's pre_run_hooks or debug rebound in a loop would go
         * unseen: everything is read on every call, as without watchers */
        fpy.watchers = 0;
        if (fp_conf.debug)
            trlat_log_debug("fast path: Python 3.13.0's dict watchers miss attribute stores (CPython gh-125608, "
                            "fixed in 3.13.1): the guards read on every call");
    }
    fpy.epoch = 1;
    fpy.next_layout_id = 1;
    fpy.long_compact = long_layout_known(ver);
    fpy.tuple_direct = tuple_layout_known(ver);
    fpy.dict_version = dict_version_known(ver);
    fpy.idict = managed_dict_words(ver);
    if (fp_conf.debug)
        trlat_log_debug("fast path: a tensor's own attributes (a data_ptr shadowing torch's) are %s",
                        fpy.idict == 2   ? "looked for in the words at -3 and -4 of the object (CPython 3.11)"
                        : fpy.idict == 1 ? "looked for in the word at -3 of the object"
                                         : "looked up by _PyObject_GetMethod");
    /* What the guards read through these objects' dicts. */
    PyObject *d = fp_getattr(fpy.knobs_mod, fpy.s___dict__);
    fp_watch_dict(d);
    if (d)
        PY(Py_DecRef)(d);
    fp_watch_type(fpy.jit_cls);
    fpy.ready = 1;
    return 1;
}
