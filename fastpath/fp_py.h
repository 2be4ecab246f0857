/* The launch memo's Python side (fastpath/fp_*.c): objects from Triton and
 * torch it compares against, the per-JITFunction layout, one call's
 * extraction, and the steps before/after/getitem share. Everything here runs
 * with the GIL held; the GIL is what makes the memo, the layouts and the
 * counters single-writer. */
#ifndef TRLAT_FP_PY_H
#define TRLAT_FP_PY_H

#include "fastpath/fp.h"
#include "interpose/python/pyapi.h"

#include <stdatomic.h>

#define FP_TYPE(o) (((const struct trlat_pyhead *)(o))->type)
#define FP_PY_NE 3 /* Py_NE */

struct fp_pyenv {
    /* what a hit reads, first: two cache lines (fpy is aligned to one) */
    int ready;         /* 1: usable; -1: the fast path is off for this process */
    int watchers;      /* dict/type watchers bump epoch (3.12+) */
    uint64_t epoch;    /* changes whenever a watched dict or type changes */
    PyObject *jit_cls; /* triton.runtime.jit.JITFunction */
    PyObject *ki_cls;  /* triton.runtime.jit.KernelInterface (NULL: not found) */
    void *t_tuple, *t_tensor, *t_param, *t_long, *t_float, *t_bool;
    PyObject *o_true, *o_false, *o_none;
    int long_compact;       /* CPython 3.12/3.13 ints: fp_small_int reads them */
    int tuple_direct;       /* CPython 3.9-3.13 tuples: fp_tuple_len/get read them */
    int dict_version;       /* CPython 3.11-3.13 dicts: fp_dict_version reads them */
    int idict;              /* fp_no_instance_attrs' words: 0 unknown, 1: word -3, 2: words -3 and -4 */
    int inline_values_flag; /* 3.13: Py_TPFLAGS_INLINE_VALUES puts attributes after the object */
    /* the rest */
    int dict_wid, type_wid;
    uint64_t next_layout_id;
    void *t_str, *t_list, *t_dict, *t_hookchain;
    void *t_tl_dtype;             /* triton.language.dtype (held); NULL: none */
    void *t_size;                 /* torch.Size (held); NULL: none */
    void *t_function, *t_cell;    /* NULL when not found: grid functions are then always called */
    void *t_getset, *t_methdescr; /* PyGetSetDescr_Type, PyMethodDescr_Type */
    PyObject *o_empty;            /* inspect.Parameter.empty */
    PyObject *exc_type;
    /* Triton 3.6 and torch */
    PyObject *jit_run; /* JITFunction.run as found when the memo started (the hook's wrapper) */
    PyObject *knobs_mod, *compute_cache_key, *driver_cfg;
    PyObject *torch_current_device, *torch_get_device, *torch_raw_stream;
    void *t_torch_dtype;    /* torch.dtype; NULL: not found */
    int torch_layout_known; /* torch 2.11: tensor_direct.c knows its structs */
    /* interned attribute names */
    PyObject *s_data_ptr, *s___mro__, *s_dtype, *s_is_cuda, *s_params, *s_name, *s___name__, *s_is_constexpr,
        *s_is_const, *s_dns, *s_dnsa, *s_annotation_type, *s__param, *s_kind, *s_default, *s_pre_run_hooks,
        *s_used_global_vals, *s_device_caches, *s_debug, *s_runtime, *s_compilation, *s_instrumentation_mode,
        *s_launch_enter_hook, *s_launch_exit_hook, *s_calls, *s_active, *s_get_current_device, *s_get_current_stream,
        *s___dict__, *s_run, *s_function, *s_grid, *s_warmup, *s_metadata, *s_num_warps, *s_num_ctas, *s_shared,
        *s_launch_cooperative_grid, *s_launch_pdl, *s_global_scratch_size, *s_profile_scratch_size;
};
extern struct fp_pyenv fpy;

/* Resolves everything above once (needs Triton imported); 1 when usable. */
int fp_py_init(void);
/* Dict or type whose change must make the guards look again. */
void fp_watch_dict(PyObject *d);
void fp_watch_type(PyObject *t);
/* getattr returning a new reference, or NULL with the error cleared. */
PyObject *fp_getattr(PyObject *o, PyObject *name);
/* o with a reference taken: o. */
static inline PyObject *fp_hold(PyObject *o)
{
    PY(Py_IncRef)(o);
    return o;
}
/* Whether type's attribute lookup is object's (PyObject_GenericGetAttr):
 * instance dict and the MRO's descriptors, no __getattr__. */
static inline int fp_generic_lookup(void *type)
{
    void *g = (void *)PY(PyObject_GenericGetAttr);
    return g && PY(PyType_GetSlot) && PY(PyType_GetSlot)((PyObject *)type, PY_TP_GETATTRO) == g;
}
/* d[k] borrowed, or NULL (no error set; d NULL: NULL). */
static inline PyObject *fp_dget(PyObject *d, PyObject *k)
{
    PyObject *v = d ? PY(PyDict_GetItemWithError)(d, k) : NULL;
    if (!v)
        PY(PyErr_Clear)();
    return v;
}
/* o's instance __dict__ (borrowed) when it has an exact dict, else NULL. */
static inline PyObject *fp_dict_of(PyObject *o)
{
    PyObject **dp = PY(_PyObject_GetDictPtr) ? PY(_PyObject_GetDictPtr)(o) : NULL;
    return dp && *dp && FP_TYPE(*dp) == fpy.t_dict ? *dp : NULL;
}

/* ---- the per-JITFunction layout (layout.c) ---- */
struct fp_param {
    PyObject *name; /* str (held) */
    PyObject *dflt; /* default (held), NULL if none */
    uint8_t constexpr_, dns, dnsa, annotated;
    uint8_t ann_int; /* annotated i32/i64/u64 (`x: int` is i32): that FP_S_*, else 0 */
};
#define FP_KWCACHE 16

/* What one argument put in the key (args.c key_param), kept per call and,
 * for the layout's last hit, in the layout (lastcall.c). */
struct fp_argkey {
    PyObject *dtype;     /* tensors: the dtype keyed (borrowed: torch's dtypes live as long as torch) */
    int8_t wi;           /* index of its want, -1 if it has none */
    uint8_t tag;         /* FP_T_* of its key word (0: a constexpr or annotated value, keyed exactly) */
    uint8_t spec, flags; /* ints: FP_S_* and div16; tensors: is_cuda | div16 << 1 */
};
#define FP_LAST_N 4    /* hits kept per layout for the shortcut (lastcall.c) */
struct fp_lten {       /* a tensor argument of a last hit, as its match checks it */
    PyObject *dtype;   /* borrowed, as fp_argkey's */
    uint16_t j;        /* the argument */
    int8_t wi;         /* its want */
    uint8_t flags;     /* is_cuda | div16 << 1, as keyed */
    uint8_t align;     /* div16 is keyed: neither do_not_specialize nor ..._on_alignment */
    uint8_t annotated; /* the pointer is keyed too */
};
struct fp_last {
    struct fp_entry *e;  /* NULL: none */
    uint64_t gen, epoch; /* fp_memo.gen and fpy.epoch when saved */
    long device;
    unsigned nwant, nten;
    uint32_t used;  /* the layout's last_tick when last taken or saved */
    uint32_t saves; /* bumped by each save into this slot */
    /* L->n of each (nten used of ten), in the layout's last_mem */
    PyObject **obj; /* the non-tensor arguments, held (exact ints, floats, bools, strs, None); NULL at tensors */
    struct fp_want *want;
    struct fp_argkey *a;
    struct fp_lten *ten;
};
struct fp_layout {
    PyObject *jitfn; /* held: the table never drops a function */
    uint64_t id;     /* unique: the key names the layout by it */
    struct fp_stat *stat;
    int bad; /* a reason (+1) that holds for every call, 0 if none */
    unsigned n;
    struct fp_param p[FP_MAX_ARGS];
    PyObject *params_obj; /* jitfn.params as read (held) */
    /* guard snapshot (guards.c), valid while epoch == fpy.epoch */
    uint64_t epoch;
    int greason;    /* reason (+1) the snapshot found, 0 if none */
    int run_hooked; /* kernel[grid] still reaches the hooked JITFunction.run */
    PyObject *prh, *ugv, *dcaches, *jdebug;
    /* keyword name -> parameter index (-1: an option), by name identity */
    struct {
        PyObject *name;
        int idx;
    } kwc[FP_KWCACHE];
    unsigned nkwc;
    /* getitem: the caller's kwnames and the same plus ("grid", "warmup") */
    PyObject *kwn_in, *kwn_out;
    /* miss backoff (fastpath.c): keyed calls that missed in a row, calls
     * still to pass to Triton unkeyed, the next window's length */
    uint32_t miss_run, skip, window;
    /* the last hits keyed in full (lastcall.c): a loop alternating a few
     * calls of one kernel (a constexpr block size, an int crossing a
     * multiple of 16) takes each without building the key */
    struct fp_last last[FP_LAST_N];
    void *last_mem; /* the slots' arrays; NULL: no slots */
    uint32_t last_tick;
    uint8_t last_mru; /* the slot taken or saved last: tried first */
};
/* The layout of jitfn (made on first sight); NULL when the table is full. */
struct fp_layout *fp_layout_get(PyObject *jitfn);
/* Parameter index of a keyword name, -1 if it is an option (cached). */
int fp_layout_kwindex(struct fp_layout *L, PyObject *name);

/* ---- one call (args.c) ---- */
#define FP_MAX_KW 32
#define FP_MAX_REFS 16
struct fp_call {
    PyObject *jitfn;
    struct fp_layout *L;
    PyObject *const *pos;
    Py_ssize_t npos;
    PyObject *posbuf[FP_MAX_ARGS];
    PyObject *kwn[FP_MAX_KW], *kwv[FP_MAX_KW]; /* keywords but grid and warmup, in call order */
    unsigned nkw;
    PyObject *grid;
    int warmup;
    int getitem;                 /* came through the C __getitem__ */
    PyObject *vals[FP_MAX_ARGS]; /* bound values (borrowed) */
    PyObject *device_obj;        /* new reference */
    long device;
    uint64_t stream;
    int ctx_current; /* the device read proved a context current (fp_has_context's answer) */
    unsigned nwant;
    struct fp_want want[FP_MAX_ARGS];
    unsigned nrefs;
    PyObject *refs[FP_MAX_REFS]; /* objects the key names by address (dtypes): borrowed */
    int modes;                   /* a TorchFunctionMode is active: -1 not asked yet (tensor_direct.c) */
    /* keyword options (num_warps=, debug=, ...): indices into kwn/kwv in
     * call order; where debug= and instrumentation_mode= are, -1 if not */
    uint8_t opts[FP_MAX_KW];
    int nopts;
    int8_t ui_debug, ui_instr;
    struct fp_entry *shortcut; /* a last hit of the layout, matched without building the key (lastcall.c) */
    /* lastcall.c: tensor arguments read once across the slots tried (bit j: argument j) */
    uint64_t tread, tbad, tcuda;
    PyObject *tdtype[FP_MAX_ARGS];
    uint64_t tptr[FP_MAX_ARGS];
    struct fp_argkey ak[FP_MAX_ARGS]; /* what each argument put in the key */
    struct fp_key key;                /* not built when shortcut is set */
};
/* From run's (args tuple, kwargs dict) or a vectorcall (args, nargs, kwnames). */
int fp_call_from_dict(struct fp_call *c, PyObject *jitfn, PyObject *args, PyObject *kwargs);
int fp_call_from_vector(struct fp_call *c, PyObject *jitfn, PyObject *grid, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames);
void fp_call_release(struct fp_call *c);
/* Binds, reads device and stream, and takes the layout's last hit or
 * builds the key: 0 or a reason + 1. */
int fp_call_key(struct fp_call *c);
/* The key of a call already bound (its device read): 0 or a reason + 1. */
int fp_call_key_build(struct fp_call *c);
/* An immutable value keyed exactly (None, bool, int, float, str): 0, or
 * -1 with nothing written for any other (args.c). */
int fp_key_scalar(struct fp_key *k, PyObject *v);
/* An exact int's bits, and whether past int64 (args.c). */
int fp_read_int(PyObject *v, uint64_t *bits, int *is_u64);
/* An int argument of a specialized parameter as key_param keys it: its
 * class (FP_S_*), div16 and packed value; -1 when Python cannot convert it. */
int fp_int_class(const struct fp_param *P, PyObject *v, uint8_t *spec, uint8_t *d16, uint64_t *val);
int fp_annint_class(const struct fp_param *P, PyObject *v, uint8_t *flags, uint64_t *val);
static inline int fp_is_tensor(PyObject *v)
{
    void *t = FP_TYPE(v);
    return t == fpy.t_tensor || (fpy.t_param && t == fpy.t_param);
}
/* An argument that is not a torch tensor but has data_ptr() (FlagGems'
 * StridedBuffer), as Triton's specialize_arg takes one: handle_tensor,
 * once it has ruled out a constexpr, a tensor descriptor and a
 * JITFunction, which a type whose only base is object is none of. Its
 * dtype (a new reference) and data_ptr(), which must be 0 or device
 * memory (fp_devptr_known), as Triton's launcher checks; the dtype not
 * read for dtype NULL (a launcher's getPointer reads none). 0 or a reason. */
int fp_read_ptrobj(PyObject *v, PyObject **dtype, uint64_t *ptr);
/* A few types' answers to a question about the type alone (its name, its
 * MRO), each type held (an address that cannot be another type's) and
 * watched, all answers dropped when a watched type or dict changed; none
 * kept without watchers (3.11: asked every time). GIL held. */
struct fp_typeans {
    PyObject *type[8];
    uint8_t ans[8];
    unsigned next;
    uint64_t epoch;
};
/* The answer kept for t, or -1. */
int fp_typeans_get(struct fp_typeans *c, void *t);
/* Keeps ans for t; returns ans. */
int fp_typeans_put(struct fp_typeans *c, void *t, int ans);
/* v.data_ptr() (a new reference; NULL: it raised), read without a call
 * when the method is `return self.<attribute>` (getter.c). */
PyObject *fp_data_ptr(PyObject *v);
/* The same; *plain (when not NULL) set when it read v's own attribute,
 * which no descriptor of its class intercepts. */
PyObject *fp_data_ptr_read(PyObject *v, int *plain);
/* A LibEntry call's plain key reads of v.data_ptr() (held), for its own
 * launch (getter.c): kept while the key is built, taken (a new reference,
 * or NULL) by a launcher's fp_read_ptrobj instead of reading again while
 * armed (no Python code runs in between), dropped by the clear that ends
 * the call. */
void fp_ptrreads_keep(PyObject *v, PyObject *ptr);
void fp_ptrreads_arm(int on);
void fp_ptrreads_clear(void);
PyObject *fp_ptrreads_take(PyObject *v);

/* ---- tensor descriptors at the launcher layer (tensordesc.c) ---- */
/* The rank of a "tensordesc<T[a, b]>" signature entry, -1 if not one. */
int fp_desc_rank(const char *sig);
/* A TensorDescriptor argument of a launcher whose signature says rank (tma:
 * the kernel's tensordesc_meta has its entry: a CUtensorMap): every field
 * into the key, a fixed want for each parameter it becomes. 0 or a reason. */
int fp_desc_key(struct fp_call *c, struct fp_key *k, PyObject *v, int tma, unsigned rank);

/* ---- the layout's last hit (lastcall.c) ---- */
/* After binding and the device: 1 when the call keys exactly as one of
 * the layout's last hits did (c->shortcut, c->want set), else 0. */
int fp_last_match(struct fp_call *c);
/* Keeps what c keyed (a hit on e, keyed in full) for the next call. */
void fp_last_save(struct fp_call *c, struct fp_entry *e);
void fp_last_forget(struct fp_layout *L);
/* The slots of a layout just read (its n known); none when out of memory. */
void fp_last_init(struct fp_layout *L);

/* A new dict {name: value} of the bound arguments (what a callable grid gets). */
PyObject *fp_call_bound_dict(const struct fp_call *c);

/* ---- guards (guards.c) ---- */
/* 0 when nothing Triton would do differently from a replay is set, else a
 * reason + 1. Reads the knobs, the layout's hooks and the kernel's globals. */
int fp_guards(struct fp_layout *L, int getitem);
/* The knobs alone (what a compiled kernel's runner reads): 0 when they are
 * understood and both launch hooks are idle, else a reason. */
int fp_knobs_check(void);
/* The current device and stream as run() reads them, into c (device_obj:
 * a new reference); 0, or -1 when they cannot be read. */
int fp_read_device(struct fp_call *c);
/* The knobs' values that enter the key. */
PyObject *fp_knob_debug(void);
PyObject *fp_knob_instr(void);
PyObject *fp_get_device_fn(void);
PyObject *fp_get_stream_fn(void);
/* 1 when those are torch's _cuda_getDevice and _cuda_getCurrentRawStream. */
int fp_device_fns_are_torch(void);
/* torchcuda.c: the current device and stream from torch's C++ library, once
 * the Python calls gave the same answers on this thread (checked by the
 * second call); 0 when read, -1: make the Python calls. *ctx: 1 when the
 * read went through cuCtxGetDevice, which proves a context current. */
int fp_torch_device_stream(int torch_fns, int *device, uint64_t *stream, int *ctx);
void fp_torch_device_stream_check(int torch_fns, int device, uint64_t stream);
/* 1 when v, of a type with Py_TPFLAGS_MANAGED_DICT (and, on 3.13, not
 * Py_TPFLAGS_INLINE_VALUES), has no instance attributes: neither a dict
 * nor inline values in the words before its header where CPython keeps
 * them (3.11: dict at -3, values at -4; 3.12: either at -3, the values
 * tagged; 3.13: the dict at -3). What _PyObject_GetMethod looks at before
 * it takes the type's attribute; the words are checked against a probe
 * object's __dict__ when the memo starts (fp_pyenv.c). */
static inline int fp_no_instance_attrs(PyObject *v)
{
    const void *const *w = (const void *const *)v;
    return fpy.idict == 1 ? !w[-3] : fpy.idict == 2 ? !w[-3] && !w[-4] : 0;
}
/* An exact int of |value| < 2**30 read from the object (CPython 3.12 and
 * 3.13: a tag word, then 30-bit digits): 1 and its value, else 0 (use the
 * C API). What PyLong_AsLongLongAndOverflow returns for it, minus the call. */
static inline int fp_small_int(PyObject *v, long long *x)
{
    if (!fpy.long_compact)
        return 0;
    uintptr_t tag = *(const uintptr_t *)((const char *)v + 16); /* long_value.lv_tag */
    if (tag >= (2 << 3))                                        /* not _PyLong_IsCompact */
        return 0;
    uint32_t digit = *(const uint32_t *)((const char *)v + 24);
    *x = (1 - (long long)(tag & 3)) * (long long)digit; /* sign: 0 +, 1 zero, 2 - */
    return 1;
}
/* The device function to call for fn: torch._C._cuda_getDevice for
 * torch.cuda.current_device, whose `_lazy_init(); return
 * torch._C._cuda_getDevice()` it answers like once CUDA is initialized
 * (every caller here follows a launch or a stored entry's first call;
 * the fast path stands aside in a forked child, where _lazy_init raises),
 * without a frame; else fn itself. */
static inline PyObject *fp_device_builtin(PyObject *fn)
{
    return fn && fn == fpy.torch_current_device && fpy.torch_get_device ? fpy.torch_get_device : fn;
}

/* A dict's version: a value that changes with every change of the dict
 * and is never another dict's (where fpy.dict_version; else 0). */
static inline uint64_t fp_dict_version(PyObject *d)
{
    return fpy.dict_version ? ((const uint64_t *)(void *)d)[3] : 0; /* after ob_refcnt, ob_type, ma_used */
}
/* An exact tuple's length and item i (borrowed): read from the object
 * where its layout is known (fpy.tuple_direct), else through the C API. */
static inline Py_ssize_t fp_tuple_len(PyObject *t)
{
    return fpy.tuple_direct ? trlat_py_size(t) : PY(PyTuple_Size)(t);
}
static inline PyObject *fp_tuple_get(PyObject *t, Py_ssize_t i)
{
    return fpy.tuple_direct ? ((PyObject *const *)t)[3 + i] /* ob_item */ : PY(PyTuple_GetItem)(t, i);
}
/* tensor_direct.c's reader: on (state 2) once the fields agreed with
 * torch's getters; modes is at::impl::torch_function_mode_enabled. */
struct fp_td {
    int state; /* 0 unresolved, 1 comparing, 2 reading, -1 off */
    unsigned agreed;
    _Bool (*modes)(void);
    struct fp_td_layout lay;
    PyObject *dtype[FP_TD_DTYPES]; /* borrowed: torch's dtypes live as long as torch */
};
extern struct fp_td fp_td;
/* A plain tensor's dtype, is_cuda and data_ptr() from torch's structs (0),
 * or -1: read them through the getters, then hand the answers to
 * fp_tensor_direct_check. *modes caches, between reads of one call's key,
 * whether a TorchFunctionMode is active: -1 asks again (set after anything
 * that may have run Python, the getters). */
static inline int fp_tensor_direct(PyObject *v, int *modes, PyObject **dtype, int *cuda, uint64_t *ptr)
{
    if (fp_td.state != 2)
        return -1;
    if (*modes < 0)
        *modes = fp_td.modes();
    unsigned idx;
    if (*modes || fp_td_read(v, &fp_td.lay, &idx, cuda, ptr))
        return -1;
    *dtype = fp_td.dtype[idx];
    return 0;
}
void fp_tensor_direct_check(PyObject *v, PyObject *dtype, int cuda, uint64_t ptr);
/* args.c: per tensor type (torch.Tensor, nn.Parameter; index: not
 * torch.Tensor), while epoch == fpy.epoch: plain when v.data_ptr is
 * TensorBase.data_ptr for every instance that keeps no attributes of its
 * own (fp_no_instance_attrs), so a read need not look it up; reads counts
 * the reads, every 256th of which looks it up all the same. */
struct fp_tplain {
    uint64_t epoch;
    int plain;
    unsigned reads;
};
extern struct fp_tplain fp_tplain[2];
/* t's answer for v, t current: data_ptr unshadowed without asking (this
 * read counted; every 256th asks all the same). */
static inline int fp_tplain_test(struct fp_tplain *t, PyObject *v)
{
    return t->plain && fp_no_instance_attrs(v) && (t->reads++ & 255);
}
/* fp_read_tensor past its common case (args.c); plain: that case's test
 * passed (data_ptr unshadowed; this read counted) and the fields read
 * failed. Its 0 stands unless its epoch was stale (then asked again). */
int fp_read_tensor_slow(struct fp_call *c, PyObject *v, int plain, PyObject **dtype, int *cuda, uint64_t *ptr);
/* A tensor's dtype (borrowed), is_cuda and data_ptr() as Triton reads them
 * (torch's structs or its getters); 0, or -1 when they cannot be read.
 * The common case, a plain tensor read from its fields, inline (forced:
 * with the slow call's extra argument GCC kept an out-of-line copy, 170
 * more instructions per nop_with_args hit). */
static inline __attribute__((always_inline)) int fp_read_tensor(struct fp_call *c, PyObject *v, PyObject **dtype,
                                                                int *cuda, uint64_t *ptr)
{
    struct fp_tplain *t = &fp_tplain[FP_TYPE(v) != fpy.t_tensor];
    int plain = t->epoch == fpy.epoch && fp_tplain_test(t, v);
    if (__builtin_expect(plain, 1) && fp_tensor_direct(v, &c->modes, dtype, cuda, ptr) == 0)
        return 0;
    return fp_read_tensor_slow(c, v, plain, dtype, cuda, ptr);
}
/* Triton's cache still maps the entry's key to its kernel (checked once per
 * epoch): 1 yes, 0 no. */
int fp_entry_current(struct fp_entry *e, struct fp_call *c);
/* CompiledKernel.function, the CUfunction its launches use (0 if unreadable). */
uintptr_t fp_kernel_function(PyObject *kernel);
/* Watches o.__dict__ (a change bumps fpy.epoch). */
void fp_watch_dict_of(PyObject *o);

/* ---- grid (grid.c) ---- */
enum { FP_GRID_OK = 0, FP_GRID_NO = 1, FP_GRID_RAISED = 2, FP_GRID_ODD = 3, FP_GRID_VERIFY = 4 };
/* Canonicalizes the grid as JITFunction.run does (jit.py: a callable is
 * called with the bound arguments; then len and the first three items).
 * A grid function gridprog.c has a program for is evaluated instead of
 * called (both, and compared, in verify mode).
 * FP_GRID_NO: nothing was called and Triton must decide; FP_GRID_RAISED: the
 * callable raised (error set); FP_GRID_ODD: the callable returned something
 * the fast path does not launch (*result holds it, new reference);
 * FP_GRID_VERIFY: verify mode found the program wrong (*result holds what
 * the function returned, for Triton to launch). */
int fp_grid_eval(struct fp_call *c, PyObject *bound, unsigned g[3], PyObject **result);

/* ---- grid programs (gridprog.c) ---- */
struct fp_gslot;
/* 0 with g[] when fn (exactly a Python function) has a program that can say
 * for this call, with *slot for fp_gprog_mismatch; -1: call it. The first
 * sight of a code object runs the analysis (Python code). */
int fp_gprog_eval(struct fp_call *c, PyObject *fn, unsigned g[3], struct fp_gslot **slot);
/* The same for a grid function called with a dict: vals[j] the value of
 * L's parameter j in it (NULL: not in it); *tuple (when not NULL) says
 * whether the function returns a tuple, not a list. */
int fp_gprog_eval_meta(const struct fp_layout *L, PyObject *const *vals, PyObject *fn, unsigned g[3], int *tuple,
                       struct fp_gslot **slot);
/* Verify mode: the function disagreed with the program (result NULL: it
 * raised, the error stays set); reports once, the function is called from
 * then on. */
void fp_gprog_mismatch(struct fp_gslot *s, const char *kernel, const unsigned g[3], PyObject *result);
/* A program's closure-cell guard: closure (a grid function's __closure__,
 * NULL when none) has a cell at idx that holds want; 1 yes, 0 no. */
int fp_gprog_cell_is(PyObject *closure, Py_ssize_t idx, PyObject *want);

/* ---- replay (replay.c) ---- */
/* Launches the entry for this call; returns the driver's result. */
CUresult fp_replay(const struct fp_entry *e, const struct fp_call *c, const unsigned g[3]);
/* Sets RuntimeError as Triton's launcher does for a failed launch. */
void fp_raise_launch_error(CUresult rc);
/* The calling thread has a current CUDA context (Triton's launcher makes
 * one current when there is none: ensureCudaContext). */
int fp_has_context(void);

/* ---- verify (verify.c) ---- */
/* TRLAT_FASTPATH=verify: asks Triton's binder and cache what it would
 * launch for this call, compares with the entry; 0 when they agree. */
int fp_verify(struct fp_entry *e, struct fp_call *c);

/* ---- the memo's steps (fastpath.c) ---- */
enum { FP_HIT = 0, FP_MISS = 1, FP_FALLBACK = 2 };
/* Looks the call up: FP_HIT with *e, FP_MISS, or FP_FALLBACK with *reason. */
int fp_lookup(struct fp_call *c, struct fp_entry **e, int *reason);
/* Serves a hit: returns the kernel (new reference), or NULL with *reason:
 * Triton must run instead or, only when allow_raise, an error is set that
 * the call raises (as Triton would: the grid function's, a launch error). */
PyObject *fp_serve(struct fp_call *c, struct fp_entry *e, int allow_raise, int *reason, PyObject **odd_grid);
/* Starts capturing the miss of call c; returns the state for after(). */
void *fp_begin_capture(struct fp_call *c);
void fp_count(struct fp_layout *L, int what, int reason);
void fp_count_stat(struct fp_stat *s, int what, int reason);
extern uint64_t fp_found_launcher;
extern struct fp_memo fp_memo;
/* Frees an entry taken out of the memo (later, when pinned: a hit is in progress). */
void fp_entry_free(struct fp_entry *e);
void fp_entry_unpin(struct fp_entry *e);
/* An entry (not stored) for the one launch cap copied, keyed k, whose kernel
 * is func, with the call's wants and the objects the key names by address
 * (held by the entry); NULL with *reason (a nomemo_* one, or internal). */
struct fp_entry *fp_entry_capture(const struct fp_key *k, const struct fp_capture *cap, uintptr_t func,
                                  const struct fp_want *w, unsigned nwant, PyObject *const *refs, unsigned nrefs,
                                  int *reason);
/* The memo usable now (switched on, Triton's objects resolved); installs the
 * C __getitem__s on first use. */
int fp_ready(void);

/* ---- compiled kernels' launches (compiled.c, runner.c) ---- */
/* CudaLauncher.__init__(self, src, metadata) returned: reads the signature. */
void fp_launcher_made(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
/* The same for a launcher made before the hook, from the compiled kernel's
 * src and metadata it was made with (runner.c). */
void fp_launcher_learn(PyObject *self, PyObject *src, PyObject *metadata);
/* CudaLauncher.__call__(self, gridX, gridY, gridZ, stream, function,
 * packed_metadata, launch_metadata, enter_hook, exit_hook, *args): None (new
 * reference) when replayed, NULL with an error set when the replay raised as
 * the launcher would (its launch failed), NULL without one when the
 * launcher must run; then *state goes to fp_launcher_done with its result. */
PyObject *fp_launcher_call(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, void **state);
void fp_launcher_done(void *state, PyObject *result);
/* An exact int (or bool) as a grid dimension the launcher's "i" takes and
 * its _launch launches, 0 <= v < 2**31: 0 with *g, else -1. */
int fp_grid_dim(PyObject *v, unsigned *g);
/* Inside a JITFunction.run the memo let Triton run: its launcher's call is
 * that layer's (counted there), never served or counted here. */
extern _Thread_local unsigned fp_in_jit_run __attribute__((tls_model("initial-exec")));
/* runner.c: compiled[grid] -> a C runner that replays without Triton's
 * Python (new reference), or NULL (no error): Triton's own __getitem__
 * (orig, which the runner calls for what it does not serve). */
PyObject *fp_compiled_getitem(PyObject *orig, PyObject *compiled, PyObject *grid);
/* runner.c: compiled[grid](*args) served as that runner serves it, for a
 * call the fast path makes itself inside a timed call (libentry.c): 1
 * served (*res: None, or NULL with an error set), 0: evaluate compiled[grid]. */
int fp_compiled_call(PyObject *compiled, PyObject *grid, PyObject *const *args, Py_ssize_t nargs, PyObject **res);
/* The launcher-level lookup and replay for a call assembled in C (runner.c):
 * launcher, grid, stream, function, packed metadata and the kernel
 * arguments; 1 served (*result: None, or NULL with an error set), 0 when
 * the launcher must run. */
int fp_launcher_serve(PyObject *launcher, const unsigned g[3], uint64_t stream, PyObject *function, PyObject *packed,
                      PyObject *const *kargs, Py_ssize_t nk, PyObject **result);

/* A keyed call of a launcher-level layer looked up: the layout's last hit
 * (*last, seen at *last_gen) when its key is k, else the memo; FP_HIT (*e,
 * and *last updated), FP_MISS, or FP_FALLBACK (*reason: a blocked key). An
 * identical-only entry hits only for the values it was captured with. */
int fp_keyed_lookup(struct fp_key *k, const struct fp_want *want, unsigned nwant, struct fp_entry **last,
                    uint64_t *last_gen, struct fp_entry **e, int *reason);
/* Verify mode: a call's own launch (cap) against what replaying e with this
 * call's grid, stream and wants would have launched: NULL when the same,
 * else what differed (*param: the parameter, for "parameter"). Field by
 * field: Triton's launcher fills its CUlaunchConfig and attributes member
 * by member on its stack, so their padding and the unused bytes of an
 * attribute's value hold whatever was there, which the driver never reads. */
const char *fp_launch_differs(const struct fp_entry *e, const struct fp_capture *cap, const unsigned g[3],
                              uint64_t stream, const struct fp_want *want, unsigned *param);

/* A launcher-level layer's verified hit, done: what its own launch differed
 * in (NULL: nothing; result NULL: it raised) counted, said once (*once)
 * as the layer's, and the key blocked on a difference; e unpinned. */
void fp_verified(struct fp_stat *s, struct fp_entry *e, PyObject *result, const char *what, unsigned param,
                 const char *layer, atomic_flag *once);
/* A launcher-level layer's miss, done: e (the capture's entry) stored, or
 * reason counted when there is none. */
void fp_memoized(struct fp_stat *s, struct fp_entry *e, int reason, const char *layer);

/* ---- torch's static CUDA launcher (static_launcher.c) ---- */
/* StaticallyLaunchedTritonKernel.run(self, grid_x, grid_y, grid_z, stream,
 * *args): as fp_launcher_call and fp_launcher_done. */
PyObject *fp_static_call(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, void **state);
void fp_static_done(void *state, PyObject *result);
/* k.run(*g, stream, *kargs) replayed: 1, or 0 when run() must run. */
int fp_static_serve(PyObject *k, const unsigned g[3], uint64_t stream, PyObject *const *kargs, Py_ssize_t nk);
/* Whether runner is k.run of a static kernel served here: 1 (*k borrowed
 * from runner), 0 not, -1 one whose class is not known yet (its kernels'
 * first runs teach it). */
int fp_static_kernel_of(PyObject *runner, PyObject **k);

/* An enter or exit hook the launcher would call to no effect (compiled.c). */
int fp_hook_idle(PyObject *h);

/* ---- Inductor's CachingAutotuner.run (inductor.c) ---- */
/* run(self, *args, stream=s) through its analysed launcher: None (new
 * reference) when replayed, NULL with an error set when the replay's launch
 * failed, NULL without one when run() must run. */
PyObject *fp_inductor_run(PyObject *orig, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

/* ---- FlagGems' LibEntry.run served in C (libentry.c) ---- */
/* The call served (its result, or NULL with the error it raised), or NULL
 * without an error: the original runs. Verify mode runs the original
 * itself and checks its launch against the model (fp_libentry_check, from
 * the launcher's call). */
PyObject *fp_libentry_run(PyObject *orig, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

/* ---- a LibEntry's last keys (libentry_last.c) ---- */
#define FP_LE_SIG 192 /* words of a key's signature */
struct fp_le_last;    /* per LibEntry, allocated at its first store */
/* A key() item: the pair (a, b), or a alone when b is NULL. */
struct fp_le_part {
    PyObject *a, *b;
};
struct fp_le_sig {
    unsigned n;
    uint64_t w[FP_LE_SIG];
};
/* The signature of the key made of parts p[0..n): 0, or -1 when it has an
 * item compared otherwise (or there are no dict watchers). */
int fp_le_sig_make(struct fp_le_sig *s, const struct fp_le_part *p, unsigned n);
/* The entry cache gave for a key of signature s, when that was one of the
 * last stored and cache has not changed since; NULL: look it up. */
PyObject *fp_le_last_find(const struct fp_le_last *m, const struct fp_le_sig *s, PyObject *cache);
/* Stores what cache gave for s (cache watched from now on). */
void fp_le_last_store(struct fp_le_last **m, const struct fp_le_sig *s, PyObject *cache, PyObject *entry);
void fp_libentry_check(PyObject *launcher, const unsigned g[3], PyObject *const *kargs, Py_ssize_t nk);
extern uint64_t fp_found_libentry, fp_found_libentry_gprog, fp_found_libentry_last, fp_found_libentry_first,
    fp_found_ptrreads;

/* ---- trlat's share files run (sharepy.c): 0, -1 unreadable, -2 did not load ---- */
int fp_share_load(const char *file, const char *modname, const char *const *names, PyObject **fns, unsigned n,
                  char *path, size_t pathlen);
/* libentry_model.py's `check` or `getter` (borrowed), the file loaded once
 * for both; NULL, said once, when it did not load. */
PyObject *fp_model_fn(const char *name);
/* Verify mode: the grid a CudaLauncher got, against the one the program
 * computed for it on this thread (if any). */
void fp_inductor_check(PyObject *launcher, const unsigned g[3]);
/* Inductor's generated launcher fn analysed (gridcheck.py analyze_launcher):
 * its program (never freed) and *call, (runner, spec, argcount) borrowed
 * from it; NULL with *why. */
struct gp_prog;
struct gp_prog *fp_gprog_launcher(PyObject *fn, PyObject **call, const char **why);
/* p for positional arguments args[0..nargs) of fn: 0 with g[], else -1. */
int fp_gprog_run_args(struct gp_prog *p, PyObject *fn, PyObject *const *args, Py_ssize_t nargs, unsigned g[3]);

/* getitem.c: installs the C __getitem__ on JITFunction (once). */
void fp_getitem_install(void);
/* The call a C __getitem__ already keyed, handed to the run hook. */
struct fp_prekey {
    PyObject *jitfn;
    struct fp_call *call; /* NULL: already counted as a fallback */
    uint64_t t0, site;    /* the launcher's entry and caller site; t0 0: not its thread's outermost call */
};
extern _Thread_local struct fp_prekey *fp_prekey_tls __attribute__((tls_model("initial-exec")));

#endif
