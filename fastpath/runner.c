/* compiled[grid](*args, stream=None) without Triton's Python in between.
 * CompiledKernel.__getitem__ (compiler.py, 3.6) calls self._init_handles()
 * and returns a runner closure that, called, reads the current device and
 * stream when none is given, builds launch_metadata (a LazyDict for the
 * launch hooks) and calls self.run(grid[0], grid[1], grid[2], stream,
 * self.function, self.packed_metadata, launch_metadata,
 * knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook, *args),
 * `run` being the kernel's CudaLauncher. Here the hooked __getitem__ asks
 * for a C runner instead when the kernel's handles are loaded (so
 * _init_handles would return at once) and its class is as it was first seen
 * (its __dict__ watched). Called, the runner reads the device and stream as
 * the closure would, and hands the launcher's arguments to the launcher
 * memo (compiled.c) when both launch hooks are idle (then launch_metadata
 * is read by no one). Anything else, a miss included, goes through the
 * closure Triton's own __getitem__ makes, timed from the runner's call. */
#include "fastpath/fp_py.h"
#include "fastpath/keep.h"
#include "interpose/python/pyhook.h"
#include "interpose/tstate.h"

#include <stddef.h>

struct fp_runner {
    struct fp_bound b; /* owner: the CompiledKernel */
    PyObject *orig;    /* CompiledKernel.__getitem__, the same for every runner */
};

static PyObject *runner_type, *s_stream, *s_module, *s__run, *s_packed, *s_src;
static void *t_compiled; /* CompiledKernel, as first seen */
/* the class's methods the closure relies on, and __getitem__: trlat's
 * hook when resolved (only the hook's getitem resolves), which a C caller
 * of the runner's serve (fp_compiled_call) stands in for; each checked
 * again when a watched type or dict changed */
#define CLS_N 4
static PyObject *cls_attrs[CLS_N];
static uint64_t cls_epoch, getitem_epoch;
static const char *const cls_names[CLS_N] = {"_init_handles", "launch_metadata", "run", "__getitem__"};
static PyObject *cls_names_obj[CLS_N]; /* the same, interned */
static int resolved;                   /* 0 unresolved, 1 usable, -1 never */

static struct fp_pool pool; /* freed runners (keep.h) */

static void runner_dealloc(PyObject *self)
{
    struct fp_runner *r = (struct fp_runner *)self;
    trlat_py_drop(r->orig);
    r->orig = NULL;
    fp_pool_put(&pool, &r->b);
}

/* Triton's own: orig(compiled, grid)(*args, **kwargs). */
static PyObject *via_closure(struct fp_runner *r, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PyObject *a[2] = {r->b.owner, r->b.grid};
    PyObject *f = PY(PyObject_Vectorcall)(r->orig, a, 2, NULL);
    if (!f)
        return NULL;
    PyObject *res = PY(PyObject_Vectorcall)(f, args, nargsf, kwnames);
    PY(Py_DecRef)(f);
    return res;
}

/* A loaded compiled kernel's launcher, function and metadata tuple, read once per
 * kernel while its __dict__ is unchanged (watched; read on every call
 * without watchers). Direct-mapped; an entry holds its kernel. */
#define KC_N 64
static struct kcache {
    PyObject *compiled, *launcher, *function, *packed;
    uint64_t epoch;
} kc[KC_N];

static void kc_clear(struct kcache *k)
{
    trlat_py_drop(k->compiled);
    trlat_py_drop(k->launcher);
    trlat_py_drop(k->function);
    trlat_py_drop(k->packed);
    memset(k, 0, sizeof *k);
}

/* Whether the kernel's own __dict__ holds one of the methods the closure
 * calls (_init_handles, launch_metadata): a method set on the instance. */
static int shadowed(PyObject *compiled)
{
    PyObject *d = fp_getattr(compiled, fpy.s___dict__);
    int r = !d || FP_TYPE(d) != fpy.t_dict || !PY(PyDict_GetItemWithError);
    for (int i = 0; !r && i < 2; i++)
        r = PY(PyDict_GetItemWithError)(d, cls_names_obj[i]) != NULL;
    PY(PyErr_Clear)();
    trlat_py_drop(d);
    return r;
}

static struct kcache *kernel_parts(PyObject *compiled)
{
    struct kcache *k = &kc[((uintptr_t)compiled >> 4) % KC_N];
    if (k->compiled == compiled && fpy.watchers && k->epoch == fpy.epoch)
        return k;
    kc_clear(k);
    if (shadowed(compiled))
        return NULL; /* the closure would call the instance's own */
    PyObject *mod = fp_getattr(compiled, s_module);
    trlat_py_drop(mod);
    if (!mod || mod == fpy.o_none)
        return NULL; /* _init_handles would load the module: Triton's own path */
    PyObject *l = fp_getattr(compiled, s__run), *f = fp_getattr(compiled, fpy.s_function),
             *p = fp_getattr(compiled, s_packed);
    if (!l || l == fpy.o_none || !f || !p) {
        trlat_py_drop(l);
        trlat_py_drop(f);
        trlat_py_drop(p);
        return NULL;
    }
    PY(Py_IncRef)(compiled);
    *k = (struct kcache){compiled, l, f, p, fpy.epoch};
    fp_watch_dict_of(compiled);
    /* CompiledKernel._init_handles made it with (self.src, self.metadata):
     * the first kernels' launchers predate the hook */
    PyObject *src = fp_getattr(compiled, s_src), *md = fp_getattr(compiled, fpy.s_metadata);
    if (src && md)
        fp_launcher_learn(l, src, md);
    trlat_py_drop(src);
    trlat_py_drop(md);
    return k;
}

/* The grid as the closure indexes it: an exact tuple of at least three
 * launchable ints (a list, or anything else: the closure's). */
static int grid_of(PyObject *grid, unsigned g[3])
{
    if (FP_TYPE(grid) != fpy.t_tuple || fp_tuple_len(grid) < 3)
        return -1;
    for (int i = 0; i < 3; i++)
        if (fp_grid_dim(fp_tuple_get(grid, i), &g[i]))
            return -1;
    return 0;
}

/* The stream the closure launches on: the keyword's (an exact int), or the
 * current one read as run() reads it. 0, or -1: let the closure decide. */
static int stream_of(PyObject *kw, uint64_t *stream)
{
    if (kw && kw != fpy.o_none) {
        int u;
        return FP_TYPE(kw) == fpy.t_long && fp_read_int(kw, stream, &u) == 0 ? 0 : -1;
    }
    struct fp_call c;
    c.device_obj = NULL;
    int r = fp_read_device(&c);
    trlat_py_drop(c.device_obj);
    *stream = c.stream;
    return r;
}

/* 1 when served (*res set), 0: the closure runs. */
static int serve(struct fp_runner *r, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **res)
{
    PyObject *skw = NULL;
    if (kwnames) {
        if (PY(PyTuple_Size)(kwnames) != 1 || PY(PyTuple_GetItem)(kwnames, 0) != s_stream)
            return 0; /* interned by the compiler: a call's stream= is this object */
        skw = args[nargs];
    }
    unsigned g[3];
    uint64_t stream;
    struct kcache *k;
    if (fp_knobs_check() || grid_of(r->b.grid, g) || !(k = kernel_parts(r->b.owner)) || stream_of(skw, &stream))
        return 0;
    return fp_launcher_serve(k->launcher, g, stream, k->function, k->packed, args, nargs, res);
}

static PyObject *runner_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    struct fp_runner *r = (struct fp_runner *)self;
    Py_ssize_t nargs = (Py_ssize_t)(nargsf & ~TRLAT_PY_VECTORCALL_ARGUMENTS_OFFSET);
    if (!__atomic_load_n(&fp_conf.on, __ATOMIC_RELAXED) || fpy.ready <= 0 || fp_conf.verify)
        return via_closure(r, args, nargsf, kwnames);
    /* what the launcher's hook notes for a call (pyhook_call.c), for a
     * replay that never reaches it */
    struct trlat_pyserve ps;
    trlat_pyserve_open(&ps);
    PyObject *res = NULL;
    int served = serve(r, args, nargs, kwnames, &res);
    if (ps.ts) {
        uint32_t launches = trlat_pycall_close(ps.ts, &ps.saved);
        if (served)
            trlat_pyhook_count_call(ps.ts, res ? launches : 0, !res, 0);
        else /* the launcher's hook times it from here */
            trlat_pyhook_note_subscript(r->b.owner, ps.t0, ps.site);
    }
    return served ? res : via_closure(r, args, nargsf, kwnames);
}

/* The class's attributes [from, to) as first seen: 0 when still so. */
static int attrs_current(int from, int to)
{
    for (int i = from; i < to; i++) {
        PyObject *v = PY(PyObject_GetAttrString)((PyObject *)t_compiled, cls_names[i]);
        PY(PyErr_Clear)();
        trlat_py_drop(v); /* compared by identity: the class holds the first */
        if (!v || v != cls_attrs[i])
            return -1;
    }
    return 0;
}

/* The class's methods the closure relies on, as first seen: 0 when still so. */
static int class_current(void)
{
    if (fpy.watchers && cls_epoch == fpy.epoch)
        return 0;
    if (attrs_current(0, CLS_N - 1))
        return -1;
    cls_epoch = fpy.epoch;
    return 0;
}

/* And its __getitem__ still the hook that resolved it. */
static int getitem_current(void)
{
    if (fpy.watchers && getitem_epoch == fpy.epoch)
        return 0;
    if (attrs_current(CLS_N - 1, CLS_N))
        return -1;
    getitem_epoch = fpy.epoch;
    return 0;
}

static int resolve(PyObject *compiled)
{
    if (resolved)
        return resolved;
    resolved = -1;
    if (!PY(PyType_FromSpec) || !PY(PyType_GenericAlloc) || !PY(PyObject_Free) || !PY(PyVectorcall_Call))
        return resolved;
    static struct py_member members[] = {
        {"__vectorcalloffset__", PY_T_PYSSIZET, offsetof(struct fp_runner, b.vectorcall), PY_READONLY, NULL},
        {NULL, 0, 0, 0, NULL}};
    static struct py_slot slots[] = {{PY_TP_DEALLOC, (void *)runner_dealloc},
                                     {0, NULL},
                                     {PY_TP_MEMBERS, members},
                                     {PY_TP_DOC, (void *)"compiled[grid] through trlat's launch memo"},
                                     {0, NULL}};
    slots[1] = (struct py_slot){PY_TP_CALL, (void *)PY(PyVectorcall_Call)};
    static struct py_spec spec = {"trlat.CompiledRunner", sizeof(struct fp_runner), 0,
                                  PY_TPFLAGS_DEFAULT | PY_TPFLAGS_HAVE_VECTORCALL, slots};
    s_stream = PY(PyUnicode_InternFromString)("stream");
    s_module = PY(PyUnicode_InternFromString)("module");
    s__run = PY(PyUnicode_InternFromString)("_run");
    s_packed = PY(PyUnicode_InternFromString)("packed_metadata");
    s_src = PY(PyUnicode_InternFromString)("src");
    runner_type = PY(PyType_FromSpec)(&spec);
    t_compiled = FP_TYPE(compiled);
    int ok = runner_type && s_stream && s_module && s__run && s_packed && s_src;
    for (int i = 0; ok && i < CLS_N; i++)
        ok = (cls_names_obj[i] = PY(PyUnicode_InternFromString)(cls_names[i])) != NULL;
    for (int i = 0; ok && i < CLS_N; i++)
        ok = (cls_attrs[i] = PY(PyObject_GetAttrString)((PyObject *)t_compiled, cls_names[i])) != NULL;
    PY(PyErr_Clear)();
    if (ok) {
        fp_watch_type((PyObject *)t_compiled);
        cls_epoch = getitem_epoch = fpy.epoch;
        resolved = 1;
    }
    return resolved;
}

/* Runners kept for held tuple grids (keep.h). */
static struct fp_keep kept;

PyObject *fp_compiled_getitem(PyObject *orig, PyObject *compiled, PyObject *grid)
{
    if (!fp_ready() || fp_conf.verify || resolve(compiled) < 0 || FP_TYPE(compiled) != t_compiled || class_current())
        return NULL;
    if (!kernel_parts(compiled))
        return NULL; /* not loaded (_init_handles would load it), or not as the runner serves it */
    int keep;
    struct fp_runner *r = (struct fp_runner *)fp_keep_take(&kept, compiled, grid, &keep);
    if (r)
        return (PyObject *)r;
    if (!(r = (struct fp_runner *)fp_pool_get(&pool, runner_type))) {
        PY(PyErr_Clear)();
        return NULL;
    }
    r->b.vectorcall = (void *)runner_call;
    PY(Py_IncRef)(compiled);
    PY(Py_IncRef)(grid);
    PY(Py_IncRef)(orig);
    r->b.owner = compiled;
    r->b.grid = grid;
    r->orig = orig;
    if (keep)
        fp_keep_add(&kept, &r->b);
    return (PyObject *)r;
}

/* compiled[grid](*args) for the fast path's own LibEntry.run (libentry.c),
 * served as the runner the hooked __getitem__ would return serves it,
 * without making one: once a runner was made (the class resolved through
 * the hook, which is still its __getitem__), and inside the thread's timed
 * call or with profiling paused, where the runner opens no call of its
 * own. 1 served (*res: None, or NULL with an error set), 0 when
 * compiled[grid] must be evaluated. */
int fp_compiled_call(PyObject *compiled, PyObject *grid, PyObject *const *args, Py_ssize_t nargs, PyObject **res)
{
    const struct trlat_tstate *ts = trlat_tls;
    if (resolved <= 0 || !__atomic_load_n(&fp_conf.on, __ATOMIC_RELAXED) || fpy.ready <= 0 || fp_conf.verify ||
        FP_TYPE(compiled) != t_compiled || !ts || (!ts->py_t0 && !(ts->slow & TRLAT_SLOW_PAUSED)) || class_current() ||
        getitem_current())
        return 0;
    unsigned g[3];
    uint64_t stream;
    struct kcache *k;
    if (fp_knobs_check() || grid_of(grid, g) || !(k = kernel_parts(compiled)) || stream_of(NULL, &stream))
        return 0;
    return fp_launcher_serve(k->launcher, g, stream, k->function, k->packed, args, nargs, res);
}
