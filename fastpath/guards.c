/* Guards: what would make Triton act differently from a replay of the
 * block it launched last time (jit.py JITFunction.run, in order):
 *   - knobs.runtime.debug and knobs.compilation.instrumentation_mode enter
 *     the options (the key carries them);
 *   - self.pre_run_hooks are called with the arguments;
 *   - knobs.runtime.launch_enter_hook / launch_exit_hook reach the
 *     launcher, which calls them around the launch (driver.py `launch`);
 *     the default empty HookChain does nothing;
 *   - self.used_global_vals: a changed global raises RuntimeError;
 *   - self.device_caches[device][0] maps the key to the kernel (a cleared
 *     cache means Triton compiles again, calling jit_cache_hook).
 * Attributes are read again when a watched dict or type changed (3.12+:
 * fpy.epoch), or on every call without watchers. List lengths and the
 * globals are checked on every call: they change without a dict event. */
#include "fastpath/fp_py.h"

static struct {
    uint64_t epoch;
    int reason; /* + 1, 0 if none */
    PyObject *rt_debug, *instr, *enter_calls, *exit_calls, *get_device, *get_stream;
} K;

static void clear_ref(PyObject **p)
{
    if (*p) {
        PY(Py_DecRef)(*p);
        *p = NULL;
    }
}

void fp_watch_dict_of(PyObject *o)
{
    PyObject *d = fp_getattr(o, fpy.s___dict__);
    if (d) {
        fp_watch_dict(d);
        PY(Py_DecRef)(d);
    }
}

/* A launch hook is fine when None or an empty HookChain; returns the chain's
 * list (to check its length per call) in *calls. */
static int hook_state(PyObject *rt, PyObject *name, PyObject **calls)
{
    PyObject *h = fp_getattr(rt, name);
    if (!h)
        return FP_R_KNOBS;
    int r = 0;
    if (h == fpy.o_none) {
        *calls = NULL;
    } else if (FP_TYPE(h) == fpy.t_hookchain) {
        fp_watch_dict_of(h);
        *calls = fp_getattr(h, fpy.s_calls);
        if (!*calls || FP_TYPE(*calls) != fpy.t_list)
            r = FP_R_LAUNCH_HOOKS;
    } else {
        r = FP_R_LAUNCH_HOOKS; /* a hook function set directly (a profiler) */
    }
    PY(Py_DecRef)(h);
    return r;
}

static int knobs_read(void)
{
    clear_ref(&K.rt_debug);
    clear_ref(&K.instr);
    clear_ref(&K.enter_calls);
    clear_ref(&K.exit_calls);
    clear_ref(&K.get_device);
    clear_ref(&K.get_stream);
    PyObject *rt = fp_getattr(fpy.knobs_mod, fpy.s_runtime);
    PyObject *comp = fp_getattr(fpy.knobs_mod, fpy.s_compilation);
    int r = 0;
    if (!rt || !comp) {
        r = FP_R_KNOBS;
        goto out;
    }
    fp_watch_dict_of(rt);
    fp_watch_dict_of(comp);
    fp_watch_type((PyObject *)FP_TYPE(rt)); /* class-level knob values */
    fp_watch_type((PyObject *)FP_TYPE(comp));
    K.rt_debug = fp_getattr(rt, fpy.s_debug);
    K.instr = fp_getattr(comp, fpy.s_instrumentation_mode);
    if (!K.rt_debug || !K.instr || FP_TYPE(K.instr) != fpy.t_str) {
        r = FP_R_KNOBS;
        goto out;
    }
    if ((r = hook_state(rt, fpy.s_launch_enter_hook, &K.enter_calls)) ||
        (r = hook_state(rt, fpy.s_launch_exit_hook, &K.exit_calls)))
        goto out;
    /* driver.active.get_current_device / get_current_stream, as run() calls
     * them (runtime/driver.py; backends/driver.py GPUDriver.__init__ sets
     * torch.cuda.current_device and torch._C._cuda_getCurrentRawStream). */
    fp_watch_dict_of(fpy.driver_cfg);
    PyObject *active = fp_getattr(fpy.driver_cfg, fpy.s_active);
    if (active) {
        fp_watch_dict_of(active);
        K.get_device = fp_getattr(active, fpy.s_get_current_device);
        K.get_stream = fp_getattr(active, fpy.s_get_current_stream);
        PY(Py_DecRef)(active);
    }
    if (!K.get_device || !K.get_stream) {
        r = FP_R_DEVICE;
        goto out;
    }
    PyObject *dev = fp_device_builtin(K.get_device);
    if (dev != K.get_device) {
        PY(Py_DecRef)(K.get_device);
        K.get_device = fp_hold(dev);
    }
out:
    if (rt)
        PY(Py_DecRef)(rt);
    if (comp)
        PY(Py_DecRef)(comp);
    return r;
}

PyObject *fp_knob_debug(void)
{
    return K.rt_debug;
}
PyObject *fp_knob_instr(void)
{
    return K.instr;
}
int fp_device_fns_are_torch(void)
{
    return K.get_device && K.get_device == fpy.torch_get_device && K.get_stream == fpy.torch_raw_stream;
}

PyObject *fp_get_device_fn(void)
{
    return K.get_device;
}
PyObject *fp_get_stream_fn(void)
{
    return K.get_stream;
}

static PyObject *attr_of_type(PyObject *o, PyObject *name, void *type)
{
    PyObject *v = fp_getattr(o, name);
    if (v && FP_TYPE(v) != type) {
        PY(Py_DecRef)(v);
        return NULL;
    }
    return v;
}

static int layout_read(struct fp_layout *L)
{
    clear_ref(&L->prh);
    clear_ref(&L->ugv);
    clear_ref(&L->dcaches);
    clear_ref(&L->jdebug);
    L->prh = attr_of_type(L->jitfn, fpy.s_pre_run_hooks, fpy.t_list);
    L->ugv = attr_of_type(L->jitfn, fpy.s_used_global_vals, fpy.t_dict);
    L->dcaches = fp_getattr(L->jitfn, fpy.s_device_caches); /* a defaultdict */
    L->jdebug = fp_getattr(L->jitfn, fpy.s_debug);
    if (!L->prh || !L->ugv || FP_TYPE(L->ugv) != fpy.t_dict || !L->dcaches || !L->jdebug)
        return FP_R_KNOBS;
    fp_watch_dict(L->dcaches);
    PyObject *ps = fp_getattr(L->jitfn, fpy.s_params);
    if (ps)
        PY(Py_DecRef)(ps);
    if (ps != L->params_obj)
        return FP_R_KNOBS; /* params replaced since the layout was read */
    return 0;
}

/* Whether kernel[grid](...) still means JITFunction.run as hooked: the class
 * attribute is the one seen at start and the instance has no "run". */
static int run_is_hooked(struct fp_layout *L)
{
    PyObject *r = fp_getattr(fpy.jit_cls, fpy.s_run);
    if (r)
        PY(Py_DecRef)(r);
    if (r != fpy.jit_run)
        return 0;
    PyObject *d = fp_getattr(L->jitfn, fpy.s___dict__);
    if (!d)
        return 0;
    PyObject *own = PY(PyDict_GetItemWithError)(d, fpy.s_run);
    if (!own && PY(PyErr_Occurred)())
        PY(PyErr_Clear)();
    PY(Py_DecRef)(d);
    return own == NULL;
}

static int globals_unchanged(PyObject *ugv)
{
    if (trlat_py_size(ugv) == 0) /* an exact dict (layout_read) */
        return 1;
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PY(PyDict_Next)(ugv, &pos, &k, &v)) {
        /* (name, id(globals)) -> (value, globals): jit.py run() raises when
         * `globals_dict.get(name, not_present) != val` */
        if (FP_TYPE(k) != fpy.t_tuple || FP_TYPE(v) != fpy.t_tuple || PY(PyTuple_Size)(k) < 1 ||
            PY(PyTuple_Size)(v) < 2)
            return 0;
        PyObject *name = PY(PyTuple_GetItem)(k, 0), *val = PY(PyTuple_GetItem)(v, 0), *g = PY(PyTuple_GetItem)(v, 1);
        if (!g || FP_TYPE(g) != fpy.t_dict)
            return 0;
        PyObject *cur = PY(PyDict_GetItemWithError)(g, name);
        if (!cur) {
            PY(PyErr_Clear)();
            return 0;
        }
        PyObject *ne = PY(PyObject_RichCompare)(cur, val, FP_PY_NE);
        int t = ne ? PY(PyObject_IsTrue)(ne) : -1;
        if (ne)
            PY(Py_DecRef)(ne);
        if (t != 0) {
            if (t < 0)
                PY(PyErr_Clear)();
            return 0;
        }
    }
    return 1;
}

/* The knobs as last read (again when a watched dict moved): 0 or a reason. */
static inline int knobs_reason(void)
{
    if (!fpy.watchers || K.epoch != fpy.epoch) {
        K.reason = knobs_read();
        K.epoch = fpy.epoch;
    }
    return K.reason;
}

/* A HookChain list that is not empty: the launcher calls its hooks. */
static inline int calls_busy(PyObject *calls)
{
    return calls && trlat_py_size(calls) != 0; /* exact lists (hook_state) */
}

int fp_knobs_check(void)
{
    int r = knobs_reason();
    if (!r && (calls_busy(K.enter_calls) || calls_busy(K.exit_calls)))
        r = FP_R_LAUNCH_HOOKS;
    return r;
}

int fp_guards(struct fp_layout *L, int getitem)
{
    int r = knobs_reason();
    if (r)
        return r;
    if (!fpy.watchers || L->epoch != fpy.epoch) {
        L->greason = layout_read(L);
        L->epoch = fpy.epoch;
        L->run_hooked = run_is_hooked(L);
    }
    if (L->greason)
        return L->greason;
    if (getitem && !L->run_hooked)
        return FP_R_CLASS;
    if (trlat_py_size(L->prh) != 0) /* exact lists (layout_read, hook_state) */
        return FP_R_PRE_RUN_HOOKS;
    if (calls_busy(K.enter_calls) || calls_busy(K.exit_calls))
        return FP_R_LAUNCH_HOOKS;
    if (!globals_unchanged(L->ugv))
        return FP_R_GLOBALS;
    return 0;
}

int fp_entry_current(struct fp_entry *e, struct fp_call *c)
{
    if (fpy.watchers && e->checked_epoch == fpy.epoch)
        return 1;
    PyObject *t = PY(PyDict_GetItemWithError)(c->L->dcaches, c->device_obj);
    if (!t || FP_TYPE(t) != fpy.t_tuple || PY(PyTuple_Size)(t) < 1 || PY(PyTuple_GetItem)(t, 0) != e->kcache) {
        PY(PyErr_Clear)();
        return 0;
    }
    PyObject *k = PY(PyDict_GetItemWithError)(e->kcache, e->kkey);
    if (!k)
        PY(PyErr_Clear)();
    if (k != e->kernel)
        return 0;
    /* the same CompiledKernel, but its function loaded again (two threads'
     * first calls can both load the module; the last one's stays): Triton
     * launches that one now (its __dict__ is watched from the capture on) */
    if (fp_kernel_function(k) != (uintptr_t)e->func)
        return 0;
    e->checked_epoch = fpy.epoch;
    return 1;
}

uintptr_t fp_kernel_function(PyObject *kernel)
{
    PyObject *fn = fp_getattr(kernel, fpy.s_function);
    unsigned long long h = fn ? PY(PyLong_AsUnsignedLongLong)(fn) : 0;
    trlat_py_drop(fn);
    PY(PyErr_Clear)();
    return (uintptr_t)h;
}
