/* The launch memo under torch's static CUDA launcher, the runner torch 2.11
 * gives most of Inductor's kernels (use_static_triton_launcher, on by
 * default). Its launcher calls StaticallyLaunchedTritonKernel.run(self,
 * grid_x, grid_y, grid_z, stream, *args) (torch/_inductor/runtime/
 * static_triton_launcher.py), which appends a None to args (and "O" to
 * arg_tys) for each scratch flag and calls self.C_impl._launch_kernel(
 * self.function, grid_x, grid_y, grid_z, self.num_warps, self.shared,
 * arg_tys, args, stream): torch's C++ (static_cuda_launcher.cpp) parses
 * "KiiiiisOK", launches nothing when gridX * gridY * gridZ <= 0, makes the
 * primary context current when none is, converts each argument by its type
 * character into an 8-byte slot and calls cuLaunchKernel(function, grid,
 * 32 * num_warps x 1 x 1, shared, stream, slots, NULL). Everything that
 * decides the launch is the call's or the kernel object's: a call is keyed
 * by the kernel and each argument's kind, and replays, at cuLaunchKernel,
 * the block the launcher launched the first time, this call's values in
 * their slots.
 *
 * run() is modelled, not analysed: its code may read no name but the ten
 * torch 2.11's reads, is_rocm() was false, the kernel object's class is
 * StaticallyLaunchedCudaKernel, none of the attributes run reads is
 * defined on the class (the instance's own are what it reads: its __dict__
 * watched, like the classes) and C_impl is the _StaticCudaLauncher first
 * seen with its _launch_kernel unchanged. The conversions modelled are the
 * ones that cannot differ from C++'s: 'O' an int, None, a CUDA tensor or
 * another object with data_ptr() known as device memory; 'i' an int in
 * int32 range; 'l' an int64; 'K' an int in uint64 range; 'f' and 'd' a
 * float, a bool or an int of at most 53 bits. Any other argument, or a
 * grid whose product overflows an int, goes to run(), which converts (or
 * raises) as it does. A replay whose launch fails leaves the call to run():
 * a failed launch enqueued nothing, and torch's own launch then raises its
 * own error. Inductor's CachingAutotuner layer (inductor.c) serves its
 * calls without the launcher's Python through fp_static_serve. Everything
 * runs with the GIL held. */
#include "fastpath/fp_py.h"
#include "interpose/log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* The names torch 2.11's StaticallyLaunchedTritonKernel.run reads. */
static const char *const run_names[] = {
    "C_impl", "_launch_kernel", "arg_tys", "function", "has_global_scratch", "has_profile_scratch", "is_rocm",
    "len",    "num_warps",      "shared"};
#define N_RUN_NAMES (sizeof run_names / sizeof *run_names)
/* The instance attributes it reads (run_names' entries 0, 2-5, 8, 9). */
enum { A_C_IMPL, A_ARG_TYS, A_FUNCTION, A_GLOBAL, A_PROFILE, A_NUM_WARPS, A_SHARED, A_NAME, A_N };
static const char *const attr_names[A_N] = {
    "C_impl", "arg_tys", "function", "has_global_scratch", "has_profile_scratch", "num_warps", "shared", "name"};

/* What the class was found to be, once. */
static struct {
    int state;           /* 0 not looked at, 1 modelled, -1 not */
    void *type;          /* StaticallyLaunchedCudaKernel */
    PyObject *run;       /* the class's run as the hook wraps it (held) */
    PyObject *globals;   /* run's module globals (held, watched) */
    PyObject *is_rocm;   /* what they held (held) */
    PyObject *c_impl;    /* torch._C._StaticCudaLauncher (held, watched) */
    PyObject *launch_fn; /* its _launch_kernel (held) */
    PyObject *s[A_N], *s_launch_kernel, *s_is_rocm, *s_len;
    uint64_t epoch;
} cls;

struct slayout {
    PyObject *k; /* held: never dropped (an Inductor kernel lives as long as its launcher) */
    uint64_t id;
    struct fp_stat *stat;
    int bad;             /* a reason that holds for every call, 0 if none */
    uint64_t epoch;      /* fpy.epoch when its attributes were last found as read */
    PyObject *attr[A_N]; /* held: the values read when made */
    uint64_t fn;
    unsigned n; /* len(arg_tys): the call's kernel arguments */
    char ty[FP_MAX_ARGS];
    unsigned block; /* 32 * num_warps */
    unsigned shared;
    struct fp_entry *last; /* the last hit found by its key, valid while fp_memo.gen == last_gen */
    uint64_t last_gen;
};

static struct fp_pmap layouts; /* StaticallyLaunchedCudaKernel -> struct slayout */

static int str_is(PyObject *o, const char *s)
{
    return o && FP_TYPE(o) == fpy.t_str && PY(PyUnicode_CompareWithASCIIString)(o, s) == 0;
}

/* o's attribute `name` is the str s. */
static int attr_is(PyObject *o, const char *name, const char *s)
{
    PyObject *v = PY(PyObject_GetAttrString)(o, name);
    int r = str_is(v, s);
    trlat_py_drop(v);
    PY(PyErr_Clear)();
    return r;
}

/* Whether code reads only run_names and its constants are None and strs
 * (its docstring, the "O" and "OO" it appends). */
static int code_modelled(PyObject *code)
{
    PyObject *cn = PY(PyObject_GetAttrString)(code, "co_names");
    PyObject *cc = PY(PyObject_GetAttrString)(code, "co_consts");
    int ok = cn && FP_TYPE(cn) == fpy.t_tuple && cc && FP_TYPE(cc) == fpy.t_tuple;
    for (Py_ssize_t i = 0; ok && i < PY(PyTuple_Size)(cn); i++) {
        PyObject *s = PY(PyTuple_GetItem)(cn, i);
        int found = 0;
        for (size_t j = 0; j < N_RUN_NAMES && !found; j++)
            found = str_is(s, run_names[j]);
        if (!found && fp_conf.debug) {
            const char *t = s && FP_TYPE(s) == fpy.t_str ? PY(PyUnicode_AsUTF8)(s) : NULL;
            trlat_log_debug("fast path: static launcher: a run that reads %s is not modelled", t ? t : "?");
        }
        ok = found;
    }
    for (Py_ssize_t i = 0; ok && i < PY(PyTuple_Size)(cc); i++) {
        PyObject *c = PY(PyTuple_GetItem)(cc, i);
        ok = c == fpy.o_none || (FP_TYPE(c) == fpy.t_str && (i == 0 || str_is(c, "O") || str_is(c, "OO")));
    }
    trlat_py_drop(cn);
    trlat_py_drop(cc);
    PY(PyErr_Clear)();
    return ok;
}

static int intern_names(void)
{
    if (!PY(PyUnicode_InternFromString))
        return 0;
    for (int i = 0; i < A_N; i++)
        if (!cls.s[i] && !(cls.s[i] = PY(PyUnicode_InternFromString)(attr_names[i])))
            return 0;
    return (cls.s_launch_kernel || (cls.s_launch_kernel = PY(PyUnicode_InternFromString)("_launch_kernel"))) &&
           (cls.s_is_rocm || (cls.s_is_rocm = PY(PyUnicode_InternFromString)("is_rocm"))) &&
           (cls.s_len || (cls.s_len = PY(PyUnicode_InternFromString)("len")));
}

/* The class's lookups that decide what run does, as found: 1 still so. */
static int class_current(void)
{
    if (fpy.watchers && cls.epoch == fpy.epoch)
        return 1;
    PyObject *run = PY(PyObject_GetAttrString)((PyObject *)cls.type, "run");
    PyObject *lk = fp_getattr(cls.c_impl, cls.s_launch_kernel);
    PY(PyErr_Clear)();
    int ok = run == cls.run && lk == cls.launch_fn && fp_dget(cls.globals, cls.s_is_rocm) == cls.is_rocm &&
             !fp_dget(cls.globals, cls.s_len);
    trlat_py_drop(run);
    trlat_py_drop(lk);
    if (ok)
        cls.epoch = fpy.epoch;
    return ok;
}

/* Whether k's class is torch's StaticallyLaunchedCudaKernel with run as
 * modelled; looked at once (the first kernel object's C_impl is found by
 * then: run's first call cached it in the instance). */
static int learn_class(PyObject *k)
{
    void *type = FP_TYPE(k);
    if (cls.state)
        return cls.state > 0 && type == cls.type && class_current();
    PyObject *d = fp_dict_of(k);
    if (!intern_names() || !attr_is((PyObject *)type, "__name__", "StaticallyLaunchedCudaKernel") ||
        !attr_is((PyObject *)type, "__module__", "torch._inductor.runtime.static_triton_launcher") || !d ||
        !fp_dget(d, cls.s[A_C_IMPL]))
        return 0; /* not it, or C_impl not cached yet: looked at again */
    cls.state = -1;
    const char *why = NULL;
    PyObject *run = PY(PyObject_GetAttrString)((PyObject *)type, "run");
    PyObject *orig = run ? PY(PyObject_GetAttrString)(run, "__wrapped__") : NULL;
    PyObject *code = orig && FP_TYPE(orig) == fpy.t_function ? PY(PyFunction_GetCode)(orig) : NULL;
    PyObject *c_impl = fp_dget(d, cls.s[A_C_IMPL]);
    PY(PyErr_Clear)();
    if (!code || !code_modelled(code)) {
        why = "its run is not torch 2.11's";
    } else {
        cls.globals = PY(PyFunction_GetGlobals)(orig);
        cls.is_rocm = fp_dget(cls.globals, cls.s_is_rocm);
        PyObject *r = cls.is_rocm ? PY(PyObject_Vectorcall)(cls.is_rocm, NULL, 0, NULL) : NULL;
        if (r != fpy.o_false || fp_dget(cls.globals, cls.s_len))
            why = "its module is not as modelled (is_rocm(), len)";
        trlat_py_drop(r);
        PY(PyErr_Clear)();
    }
    /* run reads the instance's own attributes: nothing of the class's may
     * come first (a data descriptor) or instead (a class attribute) */
    for (int i = A_ARG_TYS; !why && i <= A_SHARED; i++) {
        PyObject *v = fp_getattr((PyObject *)type, cls.s[i]);
        if (v)
            why = "its class defines an attribute run reads";
        trlat_py_drop(v);
    }
    PyObject *lk = !why ? fp_getattr(c_impl, cls.s_launch_kernel) : NULL;
    if (!why &&
        (!attr_is(c_impl, "__name__", "_StaticCudaLauncher") || !attr_is(c_impl, "__module__", "torch._C") || !lk))
        why = "its C_impl is not torch's _StaticCudaLauncher";
    PY(PyErr_Clear)();
    trlat_py_drop(orig);
    if (why) {
        trlat_py_drop(run);
        trlat_py_drop(lk);
        if (fp_conf.debug)
            trlat_log_debug("fast path: static launcher: never served: %s", why);
        return 0;
    }
    cls.type = type;
    cls.run = run;
    cls.launch_fn = lk;
    cls.c_impl = fp_hold(c_impl);
    fp_hold(cls.globals);
    fp_hold(cls.is_rocm);
    fp_watch_dict(cls.globals);
    fp_watch_type((PyObject *)type);
    fp_watch_type(c_impl);
    PyObject *mro = PY(PyObject_GetAttrString)((PyObject *)type, "__mro__");
    for (Py_ssize_t i = 0; mro && FP_TYPE(mro) == fpy.t_tuple && i < PY(PyTuple_Size)(mro); i++)
        fp_watch_type(PY(PyTuple_GetItem)(mro, i)); /* run is its base's */
    trlat_py_drop(mro);
    PY(PyErr_Clear)();
    cls.epoch = fpy.epoch;
    cls.state = 1;
    return 1;
}

static int exact_int(PyObject *v, long lo, long hi, long *out)
{
    uint64_t bits;
    int u;
    if (!v || FP_TYPE(v) != fpy.t_long || fp_read_int(v, &bits, &u) || u || (int64_t)bits < lo || (int64_t)bits > hi)
        return 0;
    *out = (long)(int64_t)bits;
    return 1;
}

/* L's attributes from k's __dict__; 0 when as modelled. */
static int read_attrs(struct slayout *L, PyObject *d)
{
    for (int i = 0; i < A_N; i++)
        if (!(L->attr[i] = fp_dget(d, cls.s[i])))
            return FP_R_LAUNCHER;
        else
            fp_hold(L->attr[i]);
    long nw, sh;
    uint64_t fn;
    int u;
    if (L->attr[A_C_IMPL] != cls.c_impl || FP_TYPE(L->attr[A_FUNCTION]) != fpy.t_long ||
        fp_read_int(L->attr[A_FUNCTION], &fn, &u) || !fn || !exact_int(L->attr[A_NUM_WARPS], 1, 1024, &nw) ||
        !exact_int(L->attr[A_SHARED], 0, 0x7fffffff, &sh))
        return FP_R_LAUNCHER;
    /* Triton 3.6's kernels take both scratch pointers (None here): the
     * block's last two parameters, as the slot map expects */
    if (L->attr[A_GLOBAL] != fpy.o_true || L->attr[A_PROFILE] != fpy.o_true)
        return FP_R_LAUNCHER;
    PyObject *t = L->attr[A_ARG_TYS];
    const char *s = FP_TYPE(t) == fpy.t_str ? PY(PyUnicode_AsUTF8)(t) : NULL;
    PY(PyErr_Clear)();
    if (!s || strlen(s) > FP_MAX_ARGS - 2)
        return FP_R_LAUNCHER;
    L->n = (unsigned)strlen(s);
    memcpy(L->ty, s, L->n);
    L->fn = fn;
    L->block = 32u * (unsigned)nw;
    L->shared = (unsigned)sh;
    for (unsigned i = 0; i < L->n; i++)
        if (!strchr("OilKfd", s[i]))
            return FP_R_ARGTYPE; /* 8- and 16-bit ints, uint32: not modelled */
    return 0;
}

static struct slayout *layout_get(PyObject *k)
{
    struct slayout *L = fp_pmap_get(&layouts, k);
    if (L)
        return L;
    PyObject *d;
    if (fp_pmap_full(&layouts) || !learn_class(k) || !(d = fp_dict_of(k)) || !fp_dget(d, cls.s[A_C_IMPL]))
        return NULL; /* a kernel's first run caches C_impl: looked at again on its next */
    if (!(L = calloc(1, sizeof *L)))
        return NULL;
    L->bad = read_attrs(L, d);
    PyObject *nm = L->attr[A_NAME];
    const char *name = nm && FP_TYPE(nm) == fpy.t_str ? PY(PyUnicode_AsUTF8)(nm) : NULL;
    PY(PyErr_Clear)();
    L->stat = fp_stat_get(name ? name : "(unnamed)");
    L->k = fp_hold(k);
    L->id = fpy.next_layout_id++; /* the one counter of every layer's layouts: keys never collide */
    L->epoch = fpy.epoch;
    fp_watch_dict(d);
    if (fp_pmap_put(&layouts, k, L)) {
        free(L); /* no memory for the map (its holds kept: never found, never dropped) */
        return NULL;
    }
    if (fp_conf.debug)
        trlat_log_debug("fast path: %s: a static launcher of %u arguments%s%s", L->stat ? L->stat->name : "?", L->n,
                        L->bad ? ", never served: " : "", L->bad ? fp_reason_names[L->bad] : "");
    return L;
}

/* Still as made: 0, else the layout is bad from now on. */
static int attrs_current(struct slayout *L)
{
    if (fpy.watchers && L->epoch == fpy.epoch)
        return 0;
    PyObject *d = fp_dict_of(L->k);
    int same = d != NULL;
    for (int i = 0; same && i < A_N; i++)
        same = fp_dget(d, cls.s[i]) == L->attr[i];
    L->epoch = fpy.epoch;
    if (!same)
        L->bad = FP_R_LAUNCHER;
    return !same;
}

/* One call's wants and key. */
struct scall {
    struct fp_call c; /* stream and wants (what fp_replay reads), modes (tensor reads) */
    struct fp_key key;
    unsigned g[3];
};

/* An 'O' argument as getPointer converts it: 0 or a reason. */
static int read_ptr(struct scall *sc, PyObject *v, struct fp_want *w, uint8_t *tag)
{
    uint64_t bits;
    int u;
    w->spec = FP_S_PTR;
    if (fp_is_tensor(v)) {
        PyObject *dtype;
        int cuda;
        if (fp_read_tensor(&sc->c, v, &dtype, &cuda, &w->val) || !cuda)
            return FP_R_ARGTYPE; /* a CPU tensor: cuPointerGetAttribute fails, run raises */
        *tag = 1;
    } else if (v == fpy.o_none) {
        w->val = 0;
        *tag = 2;
    } else if (FP_TYPE(v) == fpy.t_long) {
        if (fp_read_int(v, &bits, &u) || (!u && (int64_t)bits < 0))
            return FP_R_ARGTYPE; /* THPUtils_unpackUInt64 raises */
        w->val = bits;
        *tag = 3;
    } else {
        int r = fp_read_ptrobj(v, NULL, &w->val);
        if (r)
            return r;
        *tag = 4;
    }
    return 0;
}

static int read_arg(struct scall *sc, char ty, PyObject *v, uint8_t *tag)
{
    struct fp_want *w = &sc->c.want[sc->c.nwant];
    w->arg = (uint16_t)sc->c.nwant;
    sc->c.nwant++;
    if (ty == 'O')
        return read_ptr(sc, v, w, tag);
    void *t = FP_TYPE(v);
    uint64_t bits = 0;
    int u = 0;
    if (t == fpy.t_bool)
        bits = v == fpy.o_true;
    else if (t != fpy.t_long || fp_read_int(v, &bits, &u))
        bits = 1, u = -1; /* not an int */
    int64_t x = (int64_t)bits;
    if (ty == 'f' || ty == 'd') {
        double dv;
        if (t == fpy.t_float)
            dv = PY(PyFloat_AsDouble)(v);
        else if (u == 0 && x >= -(1ll << 53) && x <= (1ll << 53))
            dv = (double)x; /* exact: the conversion cannot round */
        else
            return FP_R_ARGTYPE;
        *tag = t == fpy.t_float ? 5 : 6;
        if (ty == 'f') {
            w->spec = FP_S_FP32;
            w->val = fp_float_bits(dv);
        } else {
            w->spec = FP_S_I64;
            memcpy(&w->val, &dv, 8);
        }
        return 0;
    }
    *tag = 7;
    if (u < 0)
        return FP_R_ARGTYPE;
    switch (ty) {
    case 'i': /* int64 cast to int32: only where that changes nothing */
        if (u || x < INT32_MIN || x > INT32_MAX)
            return FP_R_ARGTYPE;
        w->spec = FP_S_I32;
        w->val = (uint32_t)x;
        return 0;
    case 'l':
        if (u)
            return FP_R_ARGTYPE; /* THPUtils_unpackLong raises */
        w->spec = FP_S_I64;
        w->val = bits;
        return 0;
    default: /* 'K' */
        if (!u && x < 0)
            return FP_R_ARGTYPE; /* THPUtils_unpackUInt64 raises */
        w->spec = FP_S_U64;
        w->val = bits;
        return 0;
    }
}

/* The grid and stream as _launch_kernel parses them ("iii", "K"): 0 or a reason. */
static int read_grid(struct scall *sc, PyObject *const *gs, PyObject *so)
{
    uint64_t s;
    int u;
    for (int i = 0; i < 3; i++)
        if (fp_grid_dim(gs[i], &sc->g[i]))
            return FP_R_GRID;
    if ((uint64_t)sc->g[0] * sc->g[1] * sc->g[2] > 0x7fffffff)
        return FP_R_GRID; /* the product C++ tests overflows an int */
    if (FP_TYPE(so) != fpy.t_long || fp_read_int(so, &s, &u))
        return FP_R_DEVICE;
    sc->c.stream = s;
    return 0;
}

static int key_call(struct scall *sc, struct slayout *L, PyObject *const *kargs, Py_ssize_t nk)
{
    if ((size_t)nk != L->n)
        return FP_R_BINDING; /* run's assert */
    sc->c.modes = -1;
    sc->c.nwant = 0;
    struct fp_key *k = &sc->key;
    fp_key_reset(k);
    fp_key_u64(k, L->id);
    uint8_t tags[FP_MAX_ARGS];
    for (unsigned i = 0; i < L->n; i++) {
        int r = read_arg(sc, L->ty[i], kargs[i], &tags[i]);
        if (r)
            return r;
    }
    fp_key_bytes(k, tags, L->n);
    if (fp_conf.mode == TRLAT_FP_MODE_IDENTICAL) {
        for (unsigned i = 0; i < sc->c.nwant; i++)
            fp_key_u64(k, sc->c.want[i].val);
        fp_key_u64(k, sc->c.stream);
    }
    return k->overflow ? FP_R_ARGTYPE : 0;
}

/* FP_HIT (*e), FP_MISS or FP_FALLBACK (*reason). */
static int lookup(struct slayout *L, struct scall *sc, PyObject *const *kargs, Py_ssize_t nk, struct fp_entry **e,
                  int *reason)
{
    *e = NULL;
    *reason = L->bad;
    if (!*reason && (FP_TYPE(L->k) != cls.type || !class_current() || attrs_current(L)))
        *reason = L->bad ? L->bad : FP_R_LAUNCHER;
    if (!*reason)
        *reason = key_call(sc, L, kargs, nk);
    if (*reason)
        return FP_FALLBACK;
    return fp_keyed_lookup(&sc->key, sc->c.want, sc->c.nwant, &L->last, &L->last_gen, e, reason);
}

/* A hit replayed: 1 (the launch made, or none for an empty grid), else 0
 * with *reason: run() must run. */
static int replay(struct fp_entry *e, struct scall *sc, int *reason)
{
    if (!fp_has_context()) {
        *reason = FP_R_CONTEXT; /* _launch_kernel makes the primary context current */
        return 0;
    }
    if ((uint64_t)sc->g[0] * sc->g[1] * sc->g[2] == 0)
        return 1;
    if (fp_replay(e, &sc->c, sc->g) != CUDA_SUCCESS) {
        *reason = FP_R_LAUNCH_ERROR; /* nothing enqueued: run() makes (and reports) the launch */
        return 0;
    }
    return 1;
}

/* A miss being captured, or a hit being verified against run()'s own launch. */
struct sstate {
    struct fp_capture cap;
    struct scall sc;
    struct slayout *L;
    struct fp_entry *verify; /* pinned */
};

static struct sstate *begin(struct slayout *L, const struct scall *sc, struct fp_entry *verify)
{
    struct sstate *st = malloc(sizeof *st);
    if (!st)
        return NULL;
    if (fp_capture_begin(&st->cap)) {
        free(st);
        return NULL;
    }
    st->cap.legacy_ok = 1;
    memcpy(&st->sc, sc, sizeof *sc);
    st->L = L;
    st->verify = verify;
    if (verify)
        verify->pins++;
    return st;
}

static int usable(void)
{
    return !fp_capturing() && fp_ready() && fp_memo.cap;
}

PyObject *fp_static_call(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, void **state)
{
    *state = NULL;
    if (kwnames || nargs < 5 || !usable())
        return NULL;
    struct slayout *L = layout_get(args[0]);
    if (!L)
        return NULL;
    struct scall sc;
    int reason = read_grid(&sc, args + 1, args[4]);
    if (!reason && fp_conf.verify)
        fp_inductor_check(args[0], sc.g);
    struct fp_entry *e = NULL;
    int what = reason ? FP_FALLBACK : lookup(L, &sc, args + 5, nargs - 5, &e, &reason);
    if (what == FP_HIT && fp_conf.verify) {
        if (!(*state = begin(L, &sc, e)))
            fp_count_stat(L->stat, FP_FALLBACK, FP_R_INTERNAL);
        return NULL; /* run() launches; compared when done */
    }
    if (what == FP_HIT && replay(e, &sc, &reason)) {
        fp_count_stat(L->stat, FP_HIT, 0);
        PY(Py_IncRef)(fpy.o_none);
        return fpy.o_none;
    }
    if (what == FP_MISS) {
        fp_count_stat(L->stat, FP_MISS, 0);
        if (!(*state = begin(L, &sc, NULL)))
            fp_count_stat(L->stat, FP_FALLBACK, FP_R_INTERNAL);
        return NULL;
    }
    fp_count_stat(L->stat, FP_FALLBACK, reason);
    if (PY(PyErr_Occurred)())
        PY(PyErr_Clear)();
    return NULL;
}

void fp_static_done(void *state, PyObject *result)
{
    struct sstate *st = state;
    if (!st)
        return;
    fp_capture_end(&st->cap);
    struct slayout *L = st->L;
    struct fp_capture *cap = &st->cap;
    const unsigned *g = st->sc.g;
    int empty = (uint64_t)g[0] * g[1] * g[2] == 0;
    /* what run() launched is what this layout says it launches */
    const char *what = NULL;
    if (result && !empty && cap->launches == 1 && cap->ok) {
        const CUlaunchConfig *c = &cap->cfg;
        if (cap->api == FP_API_EX || (uintptr_t)cap->func != L->fn)
            what = "the entry point or function";
        else if (c->gridDimX != g[0] || c->gridDimY != g[1] || c->gridDimZ != g[2] || c->blockDimX != L->block ||
                 c->blockDimY != 1 || c->blockDimZ != 1 || c->sharedMemBytes != L->shared)
            what = "the grid, block or shared memory";
        else if ((uintptr_t)c->hStream != st->sc.c.stream)
            what = "the stream";
    }
    if (st->verify) {
        static atomic_flag once;
        unsigned param = 0;
        if (result && !what)
            what = fp_launch_differs(st->verify, cap, g, st->sc.c.stream, st->sc.c.want, &param);
        fp_verified(L->stat, st->verify, result, what, param, "static launcher", &once);
    } else {
        int r = !result ? FP_R_NOMEMO_RAISED : empty ? FP_R_NOMEMO_LAUNCHES : what ? FP_R_NOMEMO_BLOCK : 0;
        struct fp_entry *e =
            r ? NULL : fp_entry_capture(&st->sc.key, cap, (uintptr_t)L->fn, st->sc.c.want, st->sc.c.nwant, NULL, 0, &r);
        fp_memoized(L->stat, e, r, "static launcher");
    }
    free(st);
}

int fp_static_serve(PyObject *k, const unsigned g[3], uint64_t stream, PyObject *const *kargs, Py_ssize_t nk)
{
    if (fp_conf.verify || !usable())
        return 0;                                            /* verify: through run(), which the hook compares */
    struct slayout *L = layouts.slot ? layout_get(k) : NULL; /* none before the static layer's first call */
    if (!L)
        return 0;
    struct scall sc;
    memcpy(sc.g, g, sizeof sc.g);
    if ((uint64_t)g[0] * g[1] * g[2] > 0x7fffffff)
        return 0;
    sc.c.stream = stream;
    struct fp_entry *e;
    int reason;
    if (lookup(L, &sc, kargs, nk, &e, &reason) == FP_HIT && replay(e, &sc, &reason)) {
        fp_count_stat(L->stat, FP_HIT, 0);
        return 1;
    }
    if (PY(PyErr_Occurred)())
        PY(PyErr_Clear)();
    return 0; /* counted (and a miss captured) in run()'s own call, which follows */
}

int fp_static_kernel_of(PyObject *runner, PyObject **k)
{
    *k = NULL;
    PyObject *self = PY(PyObject_GetAttrString)(runner, "__self__");
    PyObject *f = self ? PY(PyObject_GetAttrString)(runner, "__func__") : NULL;
    PY(PyErr_Clear)();
    int r = 0;
    if (f && cls.state > 0)
        r = FP_TYPE(self) == cls.type && f == cls.run;
    else if (f && cls.state == 0)
        r = attr_is((PyObject *)FP_TYPE(self), "__name__", "StaticallyLaunchedCudaKernel") ? -1 : 0;
    if (r > 0)
        *k = self; /* borrowed: the runner (a bound method the launcher's globals hold) holds it */
    trlat_py_drop(f);
    trlat_py_drop(self);
    return r;
}
