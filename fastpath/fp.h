/* The launch memo's shared declarations (fastpath/ only; not the contract
 * with the Python hook, which is fastpath.h). The Python-free layers (key,
 * slot map, memo, capture, counters) are declared here; the layers that
 * touch Python objects are in fp_py.h. See docs/FASTPATH.md. */
#ifndef TRLAT_FP_H
#define TRLAT_FP_H

#include "interpose/config.h"
#include "interpose/cuda_api.h"
#include "interpose/tmap.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FP_MAX_ARGS 64    /* kernel parameters (Python side) a layout handles */
#define FP_MAX_PARAMS 256 /* driver-level parameters of a captured kernel */
#define FP_MAX_BLOB 4096  /* parameter bytes (the classic 4 KiB limit) */
#define FP_MAX_ATTRS 8    /* launch attributes (Triton 3.6 sets at most 4) */
#define FP_KEY_MAX 2048

/* Why a call did not replay (the report's fastpath.fallbacks). Each call is
 * counted once: a hit, a miss (captured or not), or one of these. The
 * nomemo_* reasons count misses whose launch could not be memoized. */
#define FP_REASONS(X)                                                                            \
    X(NONE, "none")                       /* no reason: 0, not a fallback */                     \
    X(PRE_RUN_HOOKS, "pre_run_hooks")     /* JITFunction.pre_run_hooks set */                    \
    X(LAUNCH_HOOKS, "launch_hooks")       /* knobs.runtime.launch_*_hook set */                  \
    X(WARMUP, "warmup")                   /* warmup=True */                                      \
    X(ARGTYPE, "argtype")                 /* an argument the key cannot describe */              \
    X(NOTDEVICE, "not_device_memory")     /* a data_ptr() not known as device memory */          \
    X(BINDING, "binding")                 /* arguments Triton's binder rejects */                \
    X(KWARGS, "kwargs")                   /* a keyword option the key cannot describe */         \
    X(GLOBALS, "globals")                 /* a global the kernel used changed */                 \
    X(KNOBS, "knobs")                     /* a Triton knob or hook not understood */             \
    X(GRID, "grid")                       /* a grid the fast path does not launch */             \
    X(CLASS, "class")                     /* not a plain triton JITFunction */                   \
    X(LAUNCHER, "launcher")               /* a CudaLauncher unknown, not readable, or changed */ \
    X(CAPTURING, "capturing")             /* inside another call being captured */               \
    X(CACHE, "cache")                     /* Triton's kernel cache changed */                    \
    X(CONTEXT, "context")                 /* no current CUDA context */                          \
    X(DEVICE, "device")                   /* current device/stream unreadable */                 \
    X(TABLE, "table_full")                /* too many distinct JITFunctions */                   \
    X(VERIFY, "verify_mismatch")          /* verify mode disagreed */                            \
    X(BLOCKED, "verify_blocked")          /* key blocked after a mismatch */                     \
    X(LAUNCH_ERROR, "launch_error")       /* replay's launch failed */                           \
    X(NOMEMO_SCRATCH, "nomemo_scratch")   /* kernel needs per-launch scratch */                  \
    X(NOMEMO_LAUNCHES, "nomemo_launches") /* the call launched 0 or 2+ times */                  \
    X(NOMEMO_RAISED, "nomemo_raised")     /* Triton raised */                                    \
    X(NOMEMO_BLOCK, "nomemo_block")       /* launch block not copyable */                        \
    X(NOMEMO_CACHE, "nomemo_cache")       /* result not found in Triton's cache */               \
    X(BACKOFF, "backoff")                 /* its calls kept missing: not keyed for a while */    \
    X(INTERNAL, "internal")               /* trlat's own failure (memory, ...) */

enum fp_reason {
#define FP_R_ENUM(e, s) FP_R_##e,
    FP_REASONS(FP_R_ENUM)
#undef FP_R_ENUM
        FP_R_COUNT
};
extern const char *const fp_reason_names[FP_R_COUNT];

/* ---- configuration (fastpath.c, read at start) ---- */
struct fp_conf {
    int on;             /* TRLAT_FASTPATH != 0 and not switched off (trlat_api_fastpath: read and written relaxed) */
    int verify;         /* TRLAT_FASTPATH=verify */
    int mode;           /* TRLAT_FASTPATH_MODE: TRLAT_FP_MODE_VALUE or _IDENTICAL */
    unsigned memo_cap;  /* TRLAT_FASTPATH_MEMO: entries, 0 = never store */
    int keep_gil;       /* TRLAT_FASTPATH_GIL=keep: launch without releasing the GIL */
    int getitem;        /* TRLAT_FASTPATH_GETITEM=0 turns the C __getitem__ off */
    int libentry;       /* TRLAT_FASTPATH_LIBENTRY=1: FlagGems' LibEntry.run in C (libentry.c) */
    int debug;          /* TRLAT_FASTPATH_DEBUG=1: a stderr line per capture */
    int grid;           /* TRLAT_FASTPATH_GRID: TRLAT_FP_GRID_EVAL (default), _CALL, _SKEW (tests) */
    int tensor_getters; /* TRLAT_FASTPATH_TENSORS=getters: never read torch's structs (tensor_direct.c) */
};
extern struct fp_conf fp_conf;

/* ---- key (key.c): bytes that decide what Triton picks and launches ---- */
struct fp_key {
    uint32_t len;
    int overflow;
    uint64_t hash;
    unsigned char b[FP_KEY_MAX];
};
static inline void fp_key_reset(struct fp_key *k)
{
    k->len = 0;
    k->overflow = 0;
}
static inline void fp_key_bytes(struct fp_key *k, const void *p, size_t n)
{
    if (n > FP_KEY_MAX - k->len) {
        k->overflow = 1;
        return;
    }
    memcpy(k->b + k->len, p, n);
    k->len += (uint32_t)n;
}
static inline void fp_key_u64(struct fp_key *k, uint64_t v)
{
    fp_key_bytes(k, &v, 8);
}
/* Length-prefixed text (names, string values). */
void fp_key_text(struct fp_key *k, const char *s, size_t n);
uint64_t fp_hash(const void *p, size_t n);
static inline void fp_key_finish(struct fp_key *k)
{
    k->hash = fp_hash(k->b, k->len);
}

/* What a value contributes to the key: a tag word, then its value words. */
enum fp_tag {
    FP_T_NONE = 1,
    FP_T_BOOL,
    FP_T_INT,
    FP_T_UINT,
    FP_T_FLOAT,
    FP_T_STR,
    FP_T_TENSOR,
    FP_T_PARAM,
    FP_T_OPTION,
    FP_T_DEBUG,
    FP_T_INSTR,
    FP_T_GRIDLESS,
    FP_T_OBJECT, /* an immutable object keyed by identity (held by the entry) */
    FP_T_PTROBJ, /* another object with data_ptr(): its type, dtype and alignment */
    FP_T_ANNINT  /* an int annotated i32/i64/u64: its class (fp_annint_class) */
};

/* Triton 3.6's specialization of one non-constexpr argument
 * (python/src/specialize.cc: handle_long_type, handle_tensor,
 * handle_float_type, handle_bool_type; jit.py create_function_from_signature). */
enum fp_spec {
    FP_S_CONST = 1, /* ("constexpr", v): not a kernel parameter (int 1, None) */
    FP_S_I32,
    FP_S_I64,
    FP_S_U64,
    FP_S_FP32,
    FP_S_U1,
    FP_S_PTR,
    FP_S_FIXED, /* annotated: Triton's type is the annotation; value is in the key */
    FP_S_TMADDR /* a CUtensorMap (128 bytes): val its global address, at byte sub of it (tmap_learn.c) */
};
/* The class of a Python int (bits: the value as int64, or as uint64 when
 * is_u64) for a parameter with the given specialize/align flags: FP_S_CONST
 * for 1 (when specialized), else i32/i64/u64 by range; *div16 is set when
 * Triton's key would be "D". */
int fp_int_spec(int is_u64, uint64_t bits, int specialize, int align, int *div16);
/* Bytes a slot of this spec occupies in the parameter block (0: none). */
unsigned fp_spec_width(int spec);
/* The slot value as the launcher packs it (driver.py make_launcher:
 * int32_t/int64_t/uint64_t, pack_fp32 of a double, uint8_t, CUdeviceptr). */
uint64_t fp_float_bits(double d);

/* ---- a torch 2.11 tensor's fields (tensor_direct.c; the Python side in
 * fp_py.h decides when they may be read) ---- */
#define FP_TD_DTYPES 64
struct fp_td_layout {
    const void *ti_vptr, *si_vptr;   /* c10::TensorImpl's and c10::StorageImpl's vtables */
    uint32_t itemsize[FP_TD_DTYPES]; /* by TypeMeta index; 0: not learned */
};
/* torch 2.11 (x86-64, Linux): offsets read from its headers by a probe
 * against torch/include; tests/unit/test_fp_tensor_fields.c pins them. */
enum {
    FP_THPV_CDATA = 16,         /* THPVariable: PyObject_HEAD, at::Tensor cdata (a TensorImpl*) */
    FP_TI_STORAGE = 16,         /* TensorImpl: vptr, refcounts, Storage storage_ (a StorageImpl*) */
    FP_TI_STORAGE_OFFSET = 152, /* int64_t storage_offset_ */
    FP_TI_NUMEL = 160,          /* int64_t numel_ */
    FP_TI_DTYPE = 168,          /* caffe2::TypeMeta data_type_ (uint16_t index) */
    FP_TI_DEVICE = 170,         /* std::optional<Device>: type, index, has_value */
    FP_TI_POLICY = 174,         /* bitfield byte: sizes_strides_policy_ (0x0c), */
    FP_TI_POLICY_MASK = 0x9c,   /* has_symbolic_sizes_strides_ (0x10), device_policy_ (0x80) */
    FP_SI_DATA = 16,            /* StorageImpl: vptr, refcounts, DataPtr data_ptr_ (void *data first) */
    FP_SI_CHECK = 59,           /* bool has_mutable_data_ptr_check_ */
    FP_DEV_CUDA = 1,            /* c10::DeviceType::CUDA */
};
#define FP_AT(p, off, T) (*(const T *)((const char *)(p) + (off)))

/* From a THPVariable: the TypeMeta index (set whenever impl and storage are
 * plain), is_cuda and data_ptr() as torch computes them. 0, or -1 where
 * torch's getters would not answer from these fields alone (another impl or
 * storage class, a size/stride or device policy, a copy-on-write/throw/warn
 * check on the storage, an unlearned dtype, no data with elements). Inline:
 * a hit reads its tensors here. */
static inline int fp_td_read(const void *obj, const struct fp_td_layout *lay, unsigned *idx, int *cuda, uint64_t *ptr)
{
    const void *impl = FP_AT(obj, FP_THPV_CDATA, const void *);
    if (!impl || FP_AT(impl, 0, const void *) != lay->ti_vptr ||
        (FP_AT(impl, FP_TI_POLICY, uint8_t) & FP_TI_POLICY_MASK))
        return -1;
    const void *st = FP_AT(impl, FP_TI_STORAGE, const void *);
    if (!st || FP_AT(st, 0, const void *) != lay->si_vptr || FP_AT(st, FP_SI_CHECK, uint8_t))
        return -1;
    *idx = FP_AT(impl, FP_TI_DTYPE, uint16_t);
    *cuda = FP_AT(impl, FP_TI_DEVICE + 2, uint8_t) && FP_AT(impl, FP_TI_DEVICE, int8_t) == FP_DEV_CUDA;
    if (*idx >= FP_TD_DTYPES || !lay->itemsize[*idx])
        return -1;
    const char *data = FP_AT(st, FP_SI_DATA, const char *);
    if (FP_AT(impl, FP_TI_NUMEL, int64_t) == 0)
        *ptr = 0; /* data_impl: an empty tensor's data_ptr() is NULL */
    else if (!data)
        return -1;
    else
        *ptr = (uint64_t)(uintptr_t)data +
               (uint64_t)lay->itemsize[*idx] * (uint64_t)FP_AT(impl, FP_TI_STORAGE_OFFSET, int64_t);
    return 0;
}

/* The bytes of a launch attribute's value the driver reads for its id
 * (the rest of the union is whatever the launcher's stack held): a
 * cluster's three dimensions, one int for the others Triton sets, the
 * whole value for any other. */
static inline unsigned fp_attr_value_size(int id)
{
    switch (id) {
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        return 12;
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
        return 4;
    default:
        return (unsigned)sizeof(((CUlaunchAttribute *)0)->value);
    }
}

/* ---- slot map (slotmap.c) ---- */
/* One kernel parameter the call supplies, in Triton's parameter order. */
struct fp_want {
    uint8_t spec; /* FP_S_* (never FP_S_CONST) */
    uint8_t sub;  /* FP_S_TMADDR: where in the parameter the address is (FP_TMAP_UNKNOWN: not known) */
    uint16_t arg; /* the Python parameter index */
    uint64_t val; /* the packed value (FP_S_FIXED: unused) */
};
#define FP_TMAP_UNKNOWN 0xff
struct fp_slot {
    uint32_t off;  /* byte offset in the parameter block */
    uint16_t want; /* index into the call's wants */
    uint8_t width;
};
enum { FP_MAP_VALUE = 0, FP_MAP_IDENT = 1, FP_MAP_SCRATCH = 2, FP_MAP_BAD = 3 };
/* Checks a captured block (nparams parameters at off/size in blob) against
 * the wants of the call that produced it: nwant parameters then Triton's
 * global and profile scratch pointers. FP_MAP_VALUE: every slot is where
 * and what it should be (slots[0..*nslots) say where to write this call's
 * values); FP_MAP_IDENT: the block is the call's but some slot did not check
 * out byte for byte (replay only for identical values); FP_MAP_SCRATCH: a
 * scratch pointer is set; FP_MAP_BAD: the block is not laid out as expected. */
int fp_slotmap_build(const struct fp_want *w, unsigned nwant, const uint32_t *off, const uint32_t *size,
                     unsigned nparams, const unsigned char *blob, uint32_t blob_len, struct fp_slot *slots,
                     unsigned *nslots);
/* Writes this call's values into buf's slots (fp_slotmap_build orders them
 * by width, widest first); little-endian: a value's low bytes. */
static inline void fp_slots_patch(unsigned char *buf, const struct fp_slot *s, unsigned n, const struct fp_want *w)
{
    unsigned i = 0;
    for (; i < n && s[i].width == 8; i++)
        memcpy(buf + s[i].off, &w[s[i].want].val, 8);
    for (; i < n && s[i].width == 4; i++) {
        uint32_t x = (uint32_t)w[s[i].want].val;
        memcpy(buf + s[i].off, &x, 4);
    }
    for (; i < n; i++)
        buf[s[i].off] = (unsigned char)w[s[i].want].val;
}

/* ---- the memo (memo.c): bounded, CLOCK eviction; GIL-protected ---- */
enum { FP_E_VALUE = 0, FP_E_IDENT = 1, FP_E_BLOCKED = 2 };
struct fp_stat;
struct fp_entry {
    struct fp_entry *next; /* hash chain */
    uint64_t hash;
    uint32_t key_len;
    uint32_t clock; /* index in the clock ring */
    uint8_t ref;    /* clock bit */
    uint8_t kind;   /* FP_E_* */
    uint8_t num_ctas;
    uint8_t api;   /* FP_API_*: the driver entry point it replays through */
    uint8_t dead;  /* unlinked while pinned: freed at the last unpin */
    uint16_t pins; /* a hit in progress (Python code may run meanwhile): not evicted */
    /* the launch block */
    CUfunction func;
    CUlaunchConfig cfg; /* attrs points into attrs[] of the copy made at replay */
    CUlaunchAttribute attrs[FP_MAX_ATTRS];
    uint32_t nparams, blob_len;
    uint32_t *off, *size; /* nparams each */
    unsigned char *blob;
    struct fp_slot *slots;
    uint32_t nslots, nwant;
    uint64_t *ident; /* FP_E_IDENT: the wants' values at capture */
    /* owner's bits (Python references: released through the memo's release) */
    void *kernel, *kcache, *kkey, *layout_ref;
    void **refs;
    uint32_t nrefs;
    uint64_t checked_epoch;
    struct fp_stat *stat;
    unsigned char *key;
};
struct fp_memo {
    struct fp_entry **ring, **buckets;
    uint32_t cap, n, hand, nbuckets;
    uint64_t gen; /* bumped by every insert and removal: an entry seen at gen g lives while gen == g */
};
/* cap 0: a memo that stores nothing. Returns -1 without memory. */
int fp_memo_init(struct fp_memo *m, uint32_t cap);
struct fp_entry *fp_memo_find(struct fp_memo *m, const struct fp_key *k);
/* Takes e (whose key/hash are set); returns the entry pushed out to make
 * room (or replaced: same key), unlinked, for the caller to free once its
 * own state is consistent (freeing may run Python code); NULL if none; e
 * itself when it could not be stored (cap 0, every entry pinned). Pinned
 * entries are never pushed out (a same-key one is replaced: the caller
 * frees it when unpinned). */
struct fp_entry *fp_memo_insert(struct fp_memo *m, struct fp_entry *e);
void fp_memo_remove(struct fp_memo *m, struct fp_entry *e);
/* Removes every entry; fn(e) frees each. */
void fp_memo_clear(struct fp_memo *m, void (*fn)(struct fp_entry *));
/* An entry with room for its key, parameters and slots (one allocation). */
struct fp_entry *fp_entry_new(const struct fp_key *k, uint32_t nparams, uint32_t blob_len, uint32_t nslots,
                              uint32_t nwant, uint32_t nrefs);

/* ---- capture (capture.c): the launch block a Python call produced ---- */
struct fp_pinfo {
    uint32_t n, blob_len;
    uint32_t off[FP_MAX_PARAMS], size[FP_MAX_PARAMS];
};
/* The kernel's parameter layout from cuFuncGetParamInfo (cached per
 * function); 0 when known, -1 when the driver cannot say. */
int fp_pinfo_get(CUfunction f, struct fp_pinfo *out);

/* The launch entry point a block was captured at and is replayed through:
 * Triton's launcher calls cuLaunchKernelEx; torch's static CUDA launcher
 * cuLaunchKernel (its config then holds the grid, block, shared memory and
 * stream, and no attributes). */
enum { FP_API_EX = 0, FP_API_LEGACY, FP_API_LEGACY_PTSZ };

#define FP_TMAP_CALLS 8 /* tensor maps encoded during one captured call that are kept */
struct trlat_tstate;
struct fp_capture {
    struct trlat_tstate *ts; /* the thread asking for its launches through the hook (NULL: none) */
    uint32_t launches;       /* launches seen since begin */
    int ok;                  /* the first launch was copied whole */
    uint8_t legacy_ok;       /* a cuLaunchKernel launch is copied too (set after begin), else only Ex */
    uint8_t api;             /* FP_API_*: where the copied launch was made */
    CUfunction func;
    CUcontext ctx;
    CUlaunchConfig cfg;
    CUlaunchAttribute attrs[FP_MAX_ATTRS];
    struct fp_pinfo pi;
    unsigned char blob[FP_MAX_BLOB];
    uint32_t ntmap; /* cuTensorMapEncodeTiled calls during the call (the first FP_TMAP_CALLS kept) */
    struct trlat_tmap_call tmap[FP_TMAP_CALLS];
};
/* Marks the calling thread as capturing into c (0), or returns -1 when it
 * already is (a nested call). */
int fp_capture_begin(struct fp_capture *c);
void fp_capture_end(struct fp_capture *c);
int fp_capturing(void);
/* The launch hook's work, exposed for tests: counts and copies one launch. */
struct trlat_launch;
void fp_capture_launch(struct fp_capture *c, const struct trlat_launch *l);
/* A tensor map the capturing thread encoded (the module's tmap_encoded). */
void fp_capture_tmap(const struct trlat_tmap_call *t);
/* Installs the launch hooks (capture and TRLAT_FASTPATH_LOG). */
void fp_capture_install(const char *log_path);
void fp_capture_after_fork(void);

/* ---- the layers' records by object (ptrmap.c) ---- */
/* A bounded map from a Python object's address to a layer's record (a
 * launcher's layout, an autotuner's analysis): open addressing, never
 * shrinking (each layer keeps what it learnt for the life of the process,
 * holding the object); past FP_PMAP_MAX entries nothing more is learnt. */
#define FP_PMAP_SLOTS 8192 /* a power of 2 */
#define FP_PMAP_MAX 4096
struct fp_pmap_slot {
    const void *key;
    void *val;
};
struct fp_pmap {
    struct fp_pmap_slot *slot; /* NULL until the first put */
    unsigned n;
};
static inline unsigned fp_pmap_hash(const void *p)
{
    return (unsigned)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> 51) & (FP_PMAP_SLOTS - 1);
}
/* key's record, NULL if none. Inline: the launcher layers look up on every call. */
static inline void *fp_pmap_get(const struct fp_pmap *m, const void *key)
{
    if (!m->slot)
        return NULL;
    for (unsigned i = fp_pmap_hash(key);; i = (i + 1) & (FP_PMAP_SLOTS - 1))
        if (!m->slot[i].key || m->slot[i].key == key)
            return m->slot[i].val;
}
static inline int fp_pmap_full(const struct fp_pmap *m)
{
    return m->n >= FP_PMAP_MAX;
}
/* Adds key (not in m) -> val: 0, or -1 when full or without memory. */
int fp_pmap_put(struct fp_pmap *m, const void *key, void *val);

/* ---- host TMA descriptors' addresses (tmap_learn.c) ---- */
/* The address bits a replay may change in a CUtensorMap: 4..56 (the
 * encoder wants 16-byte alignment and refuses any higher bit); the others
 * are keyed. */
#define FP_TMAP_ADDR_MASK 0x01fffffffffffff0ull
/* The byte offset at which the encoding call c keeps its global address,
 * as a little-endian uint64 and nothing else depending on it, found by
 * encoding again with each bit of FP_TMAP_ADDR_MASK flipped and with all
 * of them at once; -1 when any of those does not show exactly that. */
int fp_tmap_addr_offset(const struct trlat_tmap_call *c);
/* Sets the sub of each FP_S_TMADDR want of a captured call from the tensor
 * maps it encoded: the k-th such want, the k-th encode, when they number
 * the same and each encode's address is its want's. Where that fails,
 * sets fp_tmap_keyed: tensordesc.c keys the whole address from then on
 * (under the GIL, as the keys are made). */
void fp_tmap_learn(const struct fp_capture *cap, struct fp_want *w, unsigned nwant);
extern int fp_tmap_keyed;

/* ---- grid programs' arithmetic (gridop.c): Python's int operators on
 * int64, for the grid functions fastpath/gridcheck.py accepts ---- */
enum fp_gop {
    FP_G_CONST = 1,
    FP_G_CELL = 2,
    FP_G_META = 3,
    FP_G_GLOBAL = 4,
    FP_G_ARG = 5, /* a launcher's positional argument (inductor.c) */
    FP_G_ADD = 10,
    FP_G_SUB,
    FP_G_MUL,
    FP_G_FLOORDIV,
    FP_G_MOD,
    FP_G_AND,
    FP_G_OR,
    FP_G_XOR,
    FP_G_LSHIFT,
    FP_G_RSHIFT,
    FP_G_MIN,
    FP_G_MAX,
    FP_G_NEG = 30,
    FP_G_INV = 31
};
/* *r = a OP b (b unused for NEG/INV) exactly as Python computes it on ints
 * (floor division and modulo, arithmetic shifts); -1 where Python would
 * raise (division by zero, a negative shift) or the result leaves int64
 * (Python's ints do not overflow: the caller calls the grid instead). */
int fp_gop_eval(int op, int64_t a, int64_t b, int64_t *r);

/* ---- device addresses (devptr.c) ---- */
/* 1 when p lies in device memory as the driver described it (asked once
 * per allocation, forgotten at any free), else 0. Under the GIL. */
int fp_devptr_known(uint64_t p);

/* ---- counters per kernel name (stats.c) ---- */
struct fp_stat {
    char name[128];
    uint64_t hits, misses;
    uint64_t library_hits; /* calls a library's layer above Triton's was served for (libentry.c) */
    uint64_t reasons[FP_R_COUNT];
};
/* The record for name (never freed); a shared "(other)" record past the
 * table's size. NULL only without memory. */
struct fp_stat *fp_stat_get(const char *name);
static inline void fp_stat_reason(struct fp_stat *s, int r)
{
    if (s)
        s->reasons[r]++;
}
void fp_stats_reset(void);
/* Hits counted so far, all kernels. */
uint64_t fp_stats_hits(void);

#endif
