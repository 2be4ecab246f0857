/* Host tensor descriptors (triton.tools.tensor_descriptor.TensorDescriptor)
 * at the launcher layer. Triton 3.6's CudaLauncher turns each into kernel
 * parameters (driver.py wrap_handle_tensordesc, make_tensordesc_arg,
 * expand_signature): with the kernel's tensordesc_meta, a CUtensorMap that
 * fill_tma_descriptor encodes (cuTensorMapEncodeTiled) from base.data_ptr(),
 * the shape, strides and padding and the meta, then the shape (i32) and
 * strides (i64); without, the base pointer, shape and strides (i64), the
 * padding (i1), shape and strides again.
 *
 * The encoding is a pure function of those values, and a replay may call no
 * driver function but the launch: a descriptor is keyed by every field of
 * its dataclass (the base by dtype and data pointer, the rest by value) and
 * its parameters replay as the miss's launch left them (FP_S_FIXED wants,
 * which the capture checks against the block's layout), but for a
 * CUtensorMap's address: its base is keyed by dtype and the address bits a
 * replay may not change, and the address goes where the encoder keeps it,
 * learned at the capture (FP_S_TMADDR, tmap_learn.c). A program that makes
 * new descriptors on every call (FlagGems' mm) then hits over new buffers
 * too; where the learning finds no such place, over the same buffers only. */
#include "fastpath/fp_py.h"

/* The class and its fields (__dataclass_fields__, in order), learned from
 * sys.modules when a launcher first takes a descriptor. */
#define FP_DESC_FIELDS 16
static struct {
    int state; /* 0 not looked up, 1 known, -1 absent or not a dataclass (looked up again later) */
    void *cls; /* held */
    unsigned nfields;
    PyObject *field[FP_DESC_FIELDS]; /* held */
    int has_tf32;                    /* a round_f32_to_tf32 field: the decomposition has one more i1 */
    int base;                        /* the index of the "base" field, -1 if none */
    unsigned misses;                 /* lookups that found none, to retry now and then */
} D;

static void learn(void)
{
    if (D.state < 0 && (D.misses++ & 1023))
        return;
    PyObject *n = PY(PyUnicode_FromString)("triton.tools.tensor_descriptor");
    PyObject *m = n ? PY(PyImport_GetModule)(n) : NULL; /* imported by the program, never by trlat */
    trlat_py_drop(n);
    PyObject *cls = m ? trlat_py_attr(m, "TensorDescriptor") : NULL;
    PyObject *f = cls ? trlat_py_attr(cls, "__dataclass_fields__") : NULL;
    trlat_py_drop(m);
    D.state = -1;
    if (f && FP_TYPE(f) == fpy.t_dict && trlat_py_size(f) <= FP_DESC_FIELDS) {
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        D.nfields = 0;
        D.has_tf32 = 0;
        D.base = -1;
        while (PY(PyDict_Next)(f, &pos, &k, &v) && FP_TYPE(k) == fpy.t_str) {
            const char *s = PY(PyUnicode_AsUTF8AndSize)(k, NULL);
            D.has_tf32 |= s && !strcmp(s, "round_f32_to_tf32");
            if (s && !strcmp(s, "base"))
                D.base = (int)D.nfields;
            PY(Py_IncRef)(k);
            D.field[D.nfields++] = k;
        }
        if (D.nfields == (unsigned)trlat_py_size(f)) {
            PY(Py_IncRef)(cls);
            D.cls = cls;
            D.state = 1;
            fp_watch_type(cls);
        } else {
            while (D.nfields)
                PY(Py_DecRef)(D.field[--D.nfields]);
        }
    }
    trlat_py_drop(f);
    trlat_py_drop(cls);
    PY(PyErr_Clear)();
}

int fp_desc_rank(const char *sig)
{
    /* driver.py: re.match("tensordesc<([^[>]*)\\[([^]]*)\\]", sig), ndim = group(2).count(",") + 1 */
    if (strncmp(sig, "tensordesc<", 11))
        return -1;
    const char *p = sig + 11;
    while (*p && *p != '[' && *p != '>')
        p++;
    if (*p != '[')
        return -1;
    int rank = 1;
    for (p++; *p && *p != ']'; p++)
        rank += *p == ',';
    return *p == ']' ? rank : -1;
}

/* A sequence's key word: past every FP_T_* tag a scalar keys with. */
#define DESC_SEQ 0x40

/* One field's value: 0, or a reason. A tensor's data pointer goes into
 * *addr when addr is given: then only its bits outside FP_TMAP_ADDR_MASK
 * are keyed. */
static int key_value(struct fp_call *c, struct fp_key *k, PyObject *v, uint64_t *addr)
{
    void *t = FP_TYPE(v);
    if (fp_key_scalar(k, v) == 0)
        return 0; /* None, a bool, an int, a float, a str (padding) */
    if (t == fpy.t_tuple || (fpy.t_size && t == fpy.t_size) || t == fpy.t_list) {
        /* shape (a torch.Size from tensor.shape), strides, block_shape */
        int list = t == fpy.t_list;
        Py_ssize_t n = list ? PY(PyList_Size)(v) : PY(PyTuple_Size)(v);
        if (n < 0 || n > 8) {
            PY(PyErr_Clear)();
            return FP_R_ARGTYPE;
        }
        fp_key_u64(k, DESC_SEQ | (uint64_t)list << 8 | (uint64_t)n << 16);
        for (Py_ssize_t i = 0; i < n; i++)
            if (fp_key_scalar(k, list ? PY(PyList_GetItem)(v, i) : PY(PyTuple_GetItem)(v, i)))
                return FP_R_ARGTYPE;
        return 0;
    }
    if (fp_is_tensor(v)) {
        PyObject *dtype;
        int cuda;
        uint64_t ptr;
        if (fp_read_tensor(c, v, &dtype, &cuda, &ptr) || !cuda)
            return FP_R_ARGTYPE; /* host memory: the launcher's encode or getPointer decides */
        if (addr && !ptr)
            return FP_R_ARGTYPE; /* an empty base: the encoder's to refuse */
        fp_key_u64(k, FP_T_TENSOR);
        fp_key_u64(k, addr ? ptr & ~FP_TMAP_ADDR_MASK : ptr);
        fp_key_u64(k, (uint64_t)(uintptr_t)dtype); /* torch's dtypes live as long as torch */
        if (addr)
            *addr = ptr;
        return 0;
    }
    return FP_R_ARGTYPE; /* a layout object, another base: not modelled */
}

int fp_desc_key(struct fp_call *c, struct fp_key *k, PyObject *v, int tma, unsigned rank)
{
    if (D.state <= 0)
        learn();
    if (D.state <= 0 || FP_TYPE(v) != D.cls)
        return FP_R_ARGTYPE;
    int patch = tma && !fp_tmap_keyed; /* a CUtensorMap whose address a replay writes */
    if (patch && D.base < 0)
        return FP_R_ARGTYPE;
    fp_key_u64(k, (uint64_t)(uintptr_t)D.cls | (uint64_t)patch); /* a class is aligned */
    uint64_t addr = 0;
    for (unsigned i = 0; i < D.nfields; i++) {
        PyObject *f = PY(PyObject_GetAttr)(v, D.field[i]);
        if (!f) {
            PY(PyErr_Clear)();
            return FP_R_ARGTYPE;
        }
        int r = key_value(c, k, f, patch && (int)i == D.base ? &addr : NULL);
        PY(Py_DecRef)(f); /* v holds it through the call */
        if (r)
            return r;
    }
    if (patch && !addr)
        return FP_R_ARGTYPE; /* a base that is not a CUDA tensor */
    /* the parameters it becomes (expand_signature), all keyed but a
     * tensor map's address */
    unsigned n = tma ? 1 + 2 * rank : 1 + 2 * rank + 1 + (unsigned)D.has_tf32 + 2 * rank;
    if (c->nwant + n > FP_MAX_ARGS)
        return FP_R_ARGTYPE;
    for (unsigned i = 0; i < n; i++, c->nwant++)
        c->want[c->nwant] = (struct fp_want){.spec = FP_S_FIXED, .arg = (uint16_t)c->nwant};
    if (patch)
        c->want[c->nwant - n] =
            (struct fp_want){.spec = FP_S_TMADDR, .sub = FP_TMAP_UNKNOWN, .arg = (uint16_t)(c->nwant - n), .val = addr};
    return 0;
}
