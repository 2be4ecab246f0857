/* The launch memo one layer below JITFunction.run: Triton 3.6's
 * CudaLauncher.__call__(gridX, gridY, gridZ, stream, function,
 * packed_metadata, launch_metadata, enter_hook, exit_hook, *args)
 * (backends/nvidia/driver.py), which every Python launch of a compiled
 * kernel goes through: compiled[grid](...) (CompiledKernel.__getitem__'s
 * runner; runner.c serves that one without its Python), CompiledKernel.run,
 * a library's cached kernels (FlagGems' LibEntry calls kernel[grid] on the
 * CompiledKernel it keeps) and Inductor's launchers. Everything that decides
 * the launch is an argument or the launcher's own: a call is keyed by the
 * launcher, the function handle, the metadata tuple and each argument's
 * kind, and replays the block the launcher's generated C code built the
 * first time, this call's values in their slots.
 *
 * The signature comes from the `src` each launcher is made with
 * (CudaLauncher.__init__ is wrapped: fp_launcher_made); a launcher made
 * before the hook, or one with an argument the generated code packs in ways
 * not modelled here (tuples, fp16/bf16, 16-bit ints), is
 * never served. The packing modelled is make_launcher's: PyArg_ParseTuple's
 * formats (i, L, K, I, B, b, d) and getPointer (an int, None, or a tensor's
 * data_ptr()), and host tensor descriptors keyed whole (tensordesc.c);
 * anything a format would reject goes to the launcher, which raises as it
 * would. A call inside a JITFunction.run that the JIT layer
 * let run is that layer's, never served or counted here. */
#include "fastpath/fp_py.h"
#include "interpose/log.h"
#include "interpose/names.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

enum ck {
    CK_CONST = 0, /* "constexpr": format O, ignored */
    CK_PTR,       /* "*T": getPointer */
    CK_I32,       /* "i32": i */
    CK_I64,       /* "i64": L */
    CK_U64,       /* "u64": K (masked) */
    CK_U32,       /* "u32": I (masked) */
    CK_U8,        /* "u1", "u8": B (masked) */
    CK_I8,        /* "i1", "i8": b (0..255) */
    CK_FP32,      /* "fp32", "f32": d, pack_fp32 */
    CK_FP64,      /* "fp64": d, pack_fp64 */
    CK_DESC       /* "tensordesc<T[...]>": a TensorDescriptor (tensordesc.c) */
};

struct fp_clayout {
    PyObject *launcher; /* held: never dropped (a compiled kernel keeps its launcher for life) */
    void *type;         /* its class when made: a later change of class is not modelled */
    uint64_t id;
    struct fp_stat *stat;
    int bad; /* a reason that holds for every call, 0 if none */
    unsigned n;
    uint8_t kind[FP_MAX_ARGS];
    uint8_t rank[FP_MAX_ARGS]; /* CK_DESC: the descriptor's rank, and whether */
    uint8_t tma[FP_MAX_ARGS];  /* the kernel's tensordesc_meta has its entry */
    /* the attributes __call__ reads, as read when made; read again when
     * fpy.epoch moved (its __dict__ is watched), on every call without
     * watchers: any change, and the launcher is not served again */
    uint64_t epoch;
    PyObject *launch;      /* held */
    long attrs[5];         /* global/profile scratch size, cooperative, pdl, num_ctas */
    struct fp_entry *last; /* the last hit found by its key, valid while fp_memo.gen == last_gen */
    uint64_t last_gen;
};

/* launcher -> layout; bounded (a job has a few thousand compiled kernels
 * at most): past FP_PMAP_MAX launchers, none is served. */
static struct fp_pmap layouts;

static struct fp_clayout *layout_find(PyObject *launcher)
{
    return (struct fp_clayout *)fp_pmap_get(&layouts, launcher);
}

static int kind_of(PyObject *ty, int *rank)
{
    const char *s = FP_TYPE(ty) == fpy.t_str ? PY(PyUnicode_AsUTF8)(ty) : NULL;
    if (!s) {
        PY(PyErr_Clear)();
        return -1; /* a tuple (a tuple argument) or anything else */
    }
    if (s[0] == '*')
        return CK_PTR;
    if ((*rank = fp_desc_rank(s)) > 0 && *rank <= 5)
        return CK_DESC;
    static const struct {
        const char *name;
        int kind;
    } kinds[] = {{"constexpr", CK_CONST}, {"i32", CK_I32},   {"i64", CK_I64},  {"u64", CK_U64},
                 {"u32", CK_U32},         {"u1", CK_U8},     {"u8", CK_U8},    {"i1", CK_I8},
                 {"i8", CK_I8},           {"fp32", CK_FP32}, {"f32", CK_FP32}, {"fp64", CK_FP64}};
    for (unsigned i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(s, kinds[i].name))
            return kinds[i].kind;
    return -1; /* nvTmaDesc, fp16, bf16, i16, u16 */
}

static const char *const attr_names[5] = {"global_scratch_size", "profile_scratch_size", "launch_cooperative_grid",
                                          "launch_pdl", "num_ctas"};

/* The launcher's attributes into a[] and its launch (new reference); -1
 * when one is missing or not an int. */
static int read_attrs(PyObject *launcher, long a[5], PyObject **launch)
{
    int r = 0;
    for (int i = 0; i < 5 && !r; i++) {
        PyObject *v = PY(PyObject_GetAttrString)(launcher, attr_names[i]);
        if (!v || (FP_TYPE(v) != fpy.t_long && FP_TYPE(v) != fpy.t_bool))
            r = -1;
        else
            a[i] = PY(PyLong_AsLong)(v);
        trlat_py_drop(v);
    }
    *launch = r ? NULL : PY(PyObject_GetAttrString)(launcher, "launch");
    PY(PyErr_Clear)();
    return *launch ? 0 : -1;
}

void fp_launcher_made(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!kwnames && nargs == 2 && fp_ready())
        fp_launcher_learn(self, args[0], args[1]);
}

void fp_launcher_learn(PyObject *self, PyObject *src, PyObject *metadata)
{
    if (layout_find(self) || fp_pmap_full(&layouts))
        return;
    struct fp_clayout *L = calloc(1, sizeof *L);
    if (!L)
        return;
    PyObject *sig = PY(PyObject_GetAttrString)(src, "signature");
    PyObject *name = PY(PyObject_GetAttrString)(metadata, "name");
    PyObject *meta = PY(PyObject_GetAttrString)(metadata, "tensordesc_meta");
    const char *nm = name && FP_TYPE(name) == fpy.t_str ? PY(PyUnicode_AsUTF8)(name) : NULL;
    PY(PyErr_Clear)();
    L->stat = fp_stat_get(nm ? nm : "(unnamed)");
    if (!sig || FP_TYPE(sig) != fpy.t_dict || PY(PyDict_Size)(sig) > FP_MAX_ARGS) {
        L->bad = FP_R_LAUNCHER;
    } else {
        Py_ssize_t pos = 0, ndesc = 0;
        PyObject *k, *v;
        /* driver.py: an entry of tensordesc_meta per descriptor, in order,
         * or none (then every descriptor is decomposed) */
        Py_ssize_t nmeta = !meta || meta == fpy.o_none ? 0 : FP_TYPE(meta) == fpy.t_list ? PY(PyList_Size)(meta) : -1;
        while (PY(PyDict_Next)(sig, &pos, &k, &v)) {
            int rank = 0, kind = kind_of(v, &rank);
            if (kind < 0 || (kind == CK_DESC && nmeta < 0))
                L->bad = FP_R_ARGTYPE;
            if (kind == CK_DESC && nmeta > 0)
                L->tma[L->n] = ndesc < nmeta && PY(PyList_GetItem)(meta, ndesc) != fpy.o_none;
            ndesc += kind == CK_DESC;
            L->rank[L->n] = (uint8_t)rank;
            L->kind[L->n++] = (uint8_t)(kind < 0 ? CK_CONST : kind);
        }
        if (nmeta > 0 && ndesc != nmeta)
            L->bad = FP_R_ARGTYPE; /* the launcher asserts they agree */
    }
    trlat_py_drop(meta);
    trlat_py_drop(sig);
    trlat_py_drop(name);
    if (read_attrs(self, L->attrs, &L->launch))
        L->bad = FP_R_LAUNCHER;
    else if (!L->bad && L->attrs[0] + L->attrs[1] != 0)
        L->bad = FP_R_NOMEMO_SCRATCH; /* allocated per launch */
    PY(Py_IncRef)(self);
    L->launcher = self;
    L->type = FP_TYPE(self);
    L->id = fpy.next_layout_id++; /* the JIT layouts' counter, as layout.c takes it: keys never collide */
    L->epoch = fpy.epoch;
    fp_watch_dict_of(self);
    if (fp_pmap_put(&layouts, self, L)) {
        PY(Py_DecRef)(self); /* no memory for the map: L is never found */
        free(L);
        return;
    }
    if (fp_conf.debug)
        trlat_log_debug("fast path: %s: a launcher of %u arguments%s%s", L->stat ? L->stat->name : "?", L->n,
                        L->bad ? ", never served: " : "", L->bad ? fp_reason_names[L->bad] : "");
}

/* Still as made: 0, else the layout is bad from now on. */
static int attrs_current(struct fp_clayout *L)
{
    if (fpy.watchers && L->epoch == fpy.epoch)
        return 0;
    long a[5];
    PyObject *launch;
    int same = read_attrs(L->launcher, a, &launch) == 0 && launch == L->launch && !memcmp(a, L->attrs, sizeof a);
    trlat_py_drop(launch);
    L->epoch = fpy.epoch;
    if (!same)
        L->bad = FP_R_LAUNCHER;
    return !same;
}

/* An enter or exit hook the launcher would call to no effect: None, or an
 * exact HookChain with an empty list (knobs' default). */
int fp_hook_idle(PyObject *h)
{
    if (h == fpy.o_none)
        return 1;
    if (FP_TYPE(h) != fpy.t_hookchain)
        return 0;
    static PyObject *chain, *calls; /* the last chain seen and its list (held) */
    static uint64_t epoch;
    if (h != chain || !fpy.watchers || epoch != fpy.epoch) {
        trlat_py_drop(chain);
        trlat_py_drop(calls);
        PY(Py_IncRef)(h);
        chain = h;
        calls = fp_getattr(h, fpy.s_calls);
        epoch = fpy.epoch;
        fp_watch_dict_of(h);
    }
    return calls && FP_TYPE(calls) == fpy.t_list && trlat_py_size(calls) == 0;
}

int fp_grid_dim(PyObject *v, unsigned *g)
{
    long long x;
    uint64_t bits;
    int u;
    if (FP_TYPE(v) != fpy.t_long && FP_TYPE(v) != fpy.t_bool)
        return -1;
    if (!fp_small_int(v, &x)) {
        if (fp_read_int(v, &bits, &u) || u)
            return -1;
        x = (long long)bits;
    }
    if (x < 0 || x > 0x7fffffff)
        return -1;
    *g = (unsigned)x;
    return 0;
}

/* One call's wants and key; 0 or a reason. */
struct ccall {
    struct fp_call c; /* stream and wants (what fp_replay reads), modes (tensor reads) */
    struct fp_key key;
    unsigned g[3];
    uint64_t fn; /* the function handle passed */
};

static int read_arg(struct ccall *cc, const struct fp_clayout *L, unsigned i, PyObject *v, uint8_t *tag)
{
    int kind = L->kind[i];
    void *t = FP_TYPE(v);
    if (kind == CK_DESC) {
        *tag = 8;
        return fp_desc_key(&cc->c, &cc->key, v, L->tma[i], L->rank[i]);
    }
    struct fp_want *w = &cc->c.want[cc->c.nwant];
    uint64_t bits = 0;
    int u = 0;
    if (kind == CK_PTR) {
        w->spec = FP_S_PTR;
        if (fp_is_tensor(v)) {
            PyObject *dtype;
            int cuda;
            if (fp_read_tensor(&cc->c, v, &dtype, &cuda, &w->val) || !cuda)
                return FP_R_ARGTYPE; /* a CPU tensor: the launcher raises */
            *tag = 1;
        } else if (v == fpy.o_none) {
            w->val = 0;
            *tag = 2;
        } else if (t == fpy.t_long && !fp_read_int(v, &bits, &u) && (u || (int64_t)bits >= 0)) {
            w->val = bits; /* PyLong_AsUnsignedLongLong: a negative int raises */
            *tag = 3;
        } else {
            /* another object with data_ptr(): getPointer's checks, which read no dtype */
            int r = fp_read_ptrobj(v, NULL, &w->val);
            if (r)
                return r;
            *tag = 7;
        }
    } else if (kind == CK_FP32 || kind == CK_FP64) {
        double d;
        if (t == fpy.t_float)
            d = PY(PyFloat_AsDouble)(v);
        else if (t == fpy.t_bool)
            d = v == fpy.o_true;
        else if (t == fpy.t_long && !fp_read_int(v, &bits, &u))
            d = u ? (double)bits : (double)(int64_t)bits; /* PyLong_AsDouble rounds as C does here */
        else
            return FP_R_ARGTYPE;
        *tag = t == fpy.t_float ? 4 : 5;
        if (kind == CK_FP32) {
            w->spec = FP_S_FP32;
            w->val = fp_float_bits(d);
        } else {
            w->spec = FP_S_I64;
            memcpy(&w->val, &d, 8);
        }
    } else {
        if (t == fpy.t_bool)
            bits = v == fpy.o_true;
        else if (t != fpy.t_long || fp_read_int(v, &bits, &u))
            return FP_R_ARGTYPE;
        int64_t x = (int64_t)bits;
        *tag = 6;
        switch (kind) {
        case CK_I32:
            if (u || x < INT32_MIN || x > INT32_MAX)
                return FP_R_ARGTYPE; /* "i" raises OverflowError */
            w->spec = FP_S_I32;
            w->val = (uint32_t)x;
            break;
        case CK_I64:
            if (u)
                return FP_R_ARGTYPE;
            w->spec = FP_S_I64;
            w->val = bits;
            break;
        case CK_U64:
            w->spec = FP_S_U64;
            w->val = bits;
            break;
        case CK_U32:
            w->spec = FP_S_I32;
            w->val = bits & 0xffffffffu;
            break;
        case CK_U8:
            w->spec = FP_S_U1;
            w->val = bits & 0xff;
            break;
        default: /* CK_I8: "b", 0..255 */
            if (u || x < 0 || x > 255)
                return FP_R_ARGTYPE;
            w->spec = FP_S_U1;
            w->val = bits;
        }
    }
    w->arg = (uint16_t)cc->c.nwant;
    cc->c.nwant++;
    return 0;
}

/* Keys a call: launcher, function, packed metadata (by identity: the entry
 * holds it), each argument's kind; in identical mode the values and the
 * stream too. 0 or a reason. */
static int key_call(struct ccall *cc, struct fp_clayout *L, uint64_t stream, PyObject *function, PyObject *packed,
                    PyObject *const *kargs, Py_ssize_t nk)
{
    uint64_t fn;
    int u;
    if ((size_t)nk != L->n)
        return FP_R_BINDING; /* PyArg_ParseTuple raises TypeError */
    if (FP_TYPE(function) != fpy.t_long || fp_read_int(function, &fn, &u) || FP_TYPE(packed) != fpy.t_tuple)
        return FP_R_ARGTYPE;
    cc->fn = fn;
    cc->c.modes = -1;
    cc->c.nwant = 0;
    cc->c.stream = stream;
    struct fp_key *k = &cc->key;
    fp_key_reset(k);
    fp_key_u64(k, L->id);
    fp_key_u64(k, fn);
    fp_key_u64(k, (uint64_t)(uintptr_t)packed);
    uint8_t tags[FP_MAX_ARGS];
    unsigned nt = 0;
    for (unsigned i = 0; i < L->n; i++) {
        if (L->kind[i] == CK_CONST)
            continue;
        int r = read_arg(cc, L, i, kargs[i], &tags[nt++]);
        if (r)
            return r;
    }
    fp_key_bytes(k, tags, nt);
    if (fp_conf.mode == TRLAT_FP_MODE_IDENTICAL) {
        for (unsigned i = 0; i < cc->c.nwant; i++)
            fp_key_u64(k, cc->c.want[i].val);
        fp_key_u64(k, stream);
    }
    return k->overflow ? FP_R_ARGTYPE : 0; /* hashed only when the last hit's key is not it */
}

/* A miss being captured, or a hit being verified against the launcher's own launch. */
struct cstate {
    struct fp_capture cap;
    struct ccall cc;
    struct fp_clayout *L;
    struct fp_entry *verify; /* pinned */
    PyObject *packed;
};

static struct cstate *begin(struct fp_clayout *L, const struct ccall *cc, struct fp_entry *verify, PyObject *packed)
{
    struct cstate *st = malloc(sizeof *st);
    if (!st)
        return NULL;
    if (fp_capture_begin(&st->cap)) {
        free(st);
        return NULL;
    }
    memcpy(&st->cc, cc, sizeof *cc);
    st->L = L;
    st->verify = verify;
    st->packed = packed;
    if (verify)
        verify->pins++;
    return st;
}

const char *fp_launch_differs(const struct fp_entry *e, const struct fp_capture *cap, const unsigned g[3],
                              uint64_t stream, const struct fp_want *want, unsigned *param)
{
    if ((uint64_t)g[0] * g[1] * g[2] == 0)
        return cap->launches == 0 ? NULL : "a launch for an empty grid";
    if (cap->launches != 1 || !cap->ok)
        return cap->launches != 1 ? "the number of launches" : "a launch not captured";
    if (cap->func != e->func || cap->api != e->api)
        return "the function or entry point";
    if (cap->pi.n != e->nparams || cap->pi.blob_len != e->blob_len)
        return "the parameter layout";
    const CUlaunchConfig *w = &e->cfg, *c = &cap->cfg;
    if (c->gridDimX != g[0] * e->num_ctas || c->gridDimY != g[1] || c->gridDimZ != g[2])
        return "the grid";
    if (c->blockDimX != w->blockDimX || c->blockDimY != w->blockDimY || c->blockDimZ != w->blockDimZ ||
        c->sharedMemBytes != w->sharedMemBytes)
        return "the block or shared memory";
    if ((uintptr_t)c->hStream != stream)
        return "the stream";
    if (c->numAttrs != w->numAttrs)
        return "the attributes";
    for (unsigned i = 0; i < w->numAttrs; i++)
        if (cap->attrs[i].id != e->attrs[i].id ||
            memcmp(&cap->attrs[i].value, &e->attrs[i].value, fp_attr_value_size(e->attrs[i].id)))
            return "the attributes";
    unsigned char blob[FP_MAX_BLOB];
    memcpy(blob, e->blob, e->blob_len);
    if (e->kind == FP_E_VALUE)
        fp_slots_patch(blob, e->slots, e->nslots, want);
    for (unsigned i = 0; i < e->nparams; i++)
        if (memcmp(blob + e->off[i], cap->blob + e->off[i], e->size[i])) {
            *param = i;
            return "parameter";
        }
    return NULL;
}

void fp_verified(struct fp_stat *s, struct fp_entry *e, PyObject *result, const char *what, unsigned param,
                 const char *layer, atomic_flag *once)
{
    if (result && what) {
        char part[48] = "";
        if (!strcmp(what, "parameter"))
            snprintf(part, sizeof part, " %u", param);
        if (fp_conf.debug)
            trlat_log_debug("fast path: verify: %s's %s launched other than its memoized block (%s%s)", s->name, layer,
                            what, part);
        trlat_log_once(once,
                       "fast path: verify: %s's %s launched other than its memoized block (%s%s); that call goes to "
                       "the launcher from now on",
                       s->name, layer, what, part);
        e->kind = FP_E_BLOCKED;
        fp_count_stat(s, FP_FALLBACK, FP_R_VERIFY);
    } else {
        fp_count_stat(s, result ? FP_HIT : FP_FALLBACK, result ? 0 : FP_R_NOMEMO_RAISED);
    }
    fp_entry_unpin(e);
}

void fp_memoized(struct fp_stat *s, struct fp_entry *e, int reason, const char *layer)
{
    if (!e) {
        fp_count_stat(s, FP_FALLBACK, reason);
        return;
    }
    e->stat = s;
    e->checked_epoch = fpy.epoch;
    if (fp_conf.debug)
        trlat_log_debug("fast path: %s: memoized a %s %s entry (%u parameters, %u slots)", s->name, layer,
                        e->kind == FP_E_IDENT ? "identical-only" : "value-mode", e->nparams, e->nslots);
    fp_entry_free(fp_memo_insert(&fp_memo, e));
}

void fp_launcher_done(void *state, PyObject *result)
{
    struct cstate *st = state;
    if (!st)
        return;
    fp_capture_end(&st->cap);
    struct fp_stat *s = st->L->stat;
    if (st->verify) {
        static atomic_flag once;
        unsigned param = 0;
        const char *what =
            result ? fp_launch_differs(st->verify, &st->cap, st->cc.g, st->cc.c.stream, st->cc.c.want, &param) : NULL;
        fp_verified(s, st->verify, result, what, param, "launcher", &once);
    } else {
        int r = FP_R_NOMEMO_RAISED;
        PyObject *refs[1] = {st->packed};
        struct fp_entry *e = result ? fp_entry_capture(&st->cc.key, &st->cap, (uintptr_t)st->cc.fn, st->cc.c.want,
                                                       st->cc.c.nwant, refs, 1, &r)
                                    : NULL;
        fp_memoized(s, e, r, "launcher");
    }
    free(st);
}

int fp_keyed_lookup(struct fp_key *k, const struct fp_want *want, unsigned nwant, struct fp_entry **last,
                    uint64_t *last_gen, struct fp_entry **e, int *reason)
{
    /* the layout's last hit, while the memo is unchanged since (an entry
     * seen at gen lives while gen stands): its key compared, not hashed */
    struct fp_entry *x = *last;
    if (x && *last_gen == fp_memo.gen && x->kind == FP_E_VALUE && x->key_len == k->len &&
        !memcmp(x->key, k->b, k->len)) {
        *e = x;
        return FP_HIT;
    }
    fp_key_finish(k);
    x = fp_memo_find(&fp_memo, k);
    if (!x)
        return FP_MISS;
    if (x->kind == FP_E_BLOCKED) {
        *reason = FP_R_BLOCKED;
        return FP_FALLBACK;
    }
    if (x->kind == FP_E_IDENT) {
        if (x->nwant != nwant)
            return FP_MISS;
        for (uint32_t i = 0; i < x->nwant; i++)
            if (x->ident[i] != want[i].val)
                return FP_MISS; /* a block that only replays for the values it was captured with */
    }
    *last = x;
    *last_gen = fp_memo.gen;
    *e = x;
    return FP_HIT;
}

/* The shared lookup: FP_HIT (*e, pinned by the caller), FP_MISS or FP_FALLBACK (*reason). */
static int lookup(struct fp_clayout *L, struct ccall *cc, PyObject *enter, PyObject *exit_, uint64_t stream,
                  PyObject *function, PyObject *packed, PyObject *const *kargs, Py_ssize_t nk, struct fp_entry **e,
                  int *reason)
{
    *e = NULL;
    *reason = L->bad;
    if (!*reason && (FP_TYPE(L->launcher) != L->type || attrs_current(L)))
        *reason = L->bad ? L->bad : FP_R_LAUNCHER;
    if (!*reason && (!fp_hook_idle(enter) || !fp_hook_idle(exit_)))
        *reason = FP_R_LAUNCH_HOOKS;
    if (!*reason)
        *reason = key_call(cc, L, stream, function, packed, kargs, nk);
    if (*reason)
        return FP_FALLBACK;
    return fp_keyed_lookup(&cc->key, cc->c.want, cc->c.nwant, &L->last, &L->last_gen, e, reason);
}

/* A hit: replays (1: *result None, or NULL with the launch's error set as
 * the launcher raises it) or 0 with *reason. */
static int replay(struct fp_entry *e, struct ccall *cc, PyObject **result, int *reason)
{
    if (!fp_has_context()) {
        *reason = FP_R_CONTEXT; /* the launcher makes the primary context current */
        return 0;
    }
    if ((uint64_t)cc->g[0] * cc->g[1] * cc->g[2] != 0) {
        CUresult rc = fp_replay(e, &cc->c, cc->g);
        if (rc != CUDA_SUCCESS) {
            fp_raise_launch_error(rc);
            *result = NULL;
            return 1;
        }
    }
    PY(Py_IncRef)(fpy.o_none);
    *result = fpy.o_none;
    return 1;
}

static void hit(struct fp_clayout *L)
{
    fp_count_stat(L->stat, FP_HIT, 0);
    if (fp_conf.debug)
        fp_found_launcher++;
}

static int usable(void)
{
    return !fp_in_jit_run && !fp_capturing() && fp_ready() && fp_memo.cap;
}

PyObject *fp_launcher_call(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, void **state)
{
    *state = NULL;
    if (kwnames || nargs < 10 || !usable())
        return NULL;
    if (fp_conf.verify) { /* a LibEntry call's launch against its model's */
        unsigned vg[3];
        int gok = !fp_grid_dim(args[1], &vg[0]) && !fp_grid_dim(args[2], &vg[1]) && !fp_grid_dim(args[3], &vg[2]);
        fp_libentry_check(args[0], gok ? vg : NULL, args + 10, nargs - 10);
    }
    struct fp_clayout *L = layout_find(args[0]);
    if (!L) {
        /* made before the hook: its signature unknown. Counted under its
         * kernel's name from its second call on: a process's first launch
         * runs while the hook is installed, and would otherwise show as a
         * fallback in every program (a pointer seen, not held). */
        static const void *seen[64];
        const void **slot = &seen[((uintptr_t)args[0] >> 4) % 64];
        if (*slot != args[0]) {
            *slot = args[0];
            return NULL;
        }
        uint64_t fn;
        int u;
        const char *name = FP_TYPE(args[5]) == fpy.t_long && !fp_read_int(args[5], &fn, &u)
                               ? trlat_names_get((void *)(uintptr_t)fn)
                               : NULL;
        fp_count_stat(fp_stat_get(name ? name : "(other)"), FP_FALLBACK, FP_R_LAUNCHER);
        return NULL;
    }
    struct ccall cc;
    uint64_t stream;
    int u, reason = 0;
    if (fp_grid_dim(args[1], &cc.g[0]) || fp_grid_dim(args[2], &cc.g[1]) || fp_grid_dim(args[3], &cc.g[2]))
        reason = FP_R_GRID;
    else if (FP_TYPE(args[4]) != fpy.t_long || fp_read_int(args[4], &stream, &u))
        reason = FP_R_DEVICE;
    if (!reason && fp_conf.verify)
        fp_inductor_check(args[0], cc.g);
    struct fp_entry *e = NULL;
    int what = reason ? FP_FALLBACK
                      : lookup(L, &cc, args[8], args[9], stream, args[5], args[6], args + 10, nargs - 10, &e, &reason);
    PyObject *r = NULL;
    if (what == FP_HIT && fp_conf.verify) {
        *state = begin(L, &cc, e, args[6]); /* the launcher launches; compared at done */
        if (!*state)
            fp_count_stat(L->stat, FP_FALLBACK, FP_R_INTERNAL);
        return NULL;
    }
    if (what == FP_HIT && replay(e, &cc, &r, &reason)) {
        hit(L);
        return r;
    }
    if (what == FP_MISS) {
        fp_count_stat(L->stat, FP_MISS, 0);
        if (!(*state = begin(L, &cc, NULL, args[6])))
            fp_count_stat(L->stat, FP_FALLBACK, FP_R_INTERNAL);
        return NULL;
    }
    fp_count_stat(L->stat, FP_FALLBACK, reason);
    if (PY(PyErr_Occurred)())
        PY(PyErr_Clear)();
    return NULL;
}

int fp_launcher_serve(PyObject *launcher, const unsigned g[3], uint64_t stream, PyObject *function, PyObject *packed,
                      PyObject *const *kargs, Py_ssize_t nk, PyObject **result)
{
    if (fp_conf.verify || !usable())
        return 0; /* verify: through the launcher, which the hook compares */
    struct fp_clayout *L = layout_find(launcher);
    if (!L)
        return 0;
    struct ccall cc;
    memcpy(cc.g, g, sizeof cc.g);
    struct fp_entry *e;
    int reason;
    /* the runner passes knobs' hooks, which runner.c found idle */
    int what = lookup(L, &cc, fpy.o_none, fpy.o_none, stream, function, packed, kargs, nk, &e, &reason);
    if (what == FP_HIT && replay(e, &cc, result, &reason)) {
        hit(L);
        return 1;
    }
    if (PY(PyErr_Occurred)())
        PY(PyErr_Clear)();
    return 0; /* counted (and a miss captured) in the launcher's own call, which follows */
}
