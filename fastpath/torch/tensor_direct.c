/* A tensor's dtype, is_cuda and data_ptr() read straight from torch's
 * structs instead of through its three Python getters, which cost a hit
 * ~250 ns per tensor on the GPU machine (each builds a warning handler,
 * checks for __torch_function__, and data_ptr() allocates a Python int).
 *
 * Only for the torch whose layout trlat was built against (2.11: offsets
 * in fp.h, read from its headers by a probe against torch/include) and only
 * where the getters would answer from those fields, as torch's own code
 * does (python_variable.cpp THPVariable_data_ptr/dtype/is_cuda,
 * TensorImpl::data_impl, StorageImpl::mutable_data):
 *   - the object is exactly torch.Tensor or nn.Parameter whose data_ptr is
 *     not shadowed (the caller checks both) and no TorchFunctionMode is
 *     active (check_has_torch_function would call into Python);
 *   - its TensorImpl is a plain c10::TensorImpl (vtable: not a sparse,
 *     nested, functional or wrapper impl) with default size/stride and
 *     device policies, its StorageImpl a plain c10::StorageImpl with no
 *     mutable-data check pending (copy-on-write, throw or warn flags: the
 *     getter would materialize, raise or warn);
 *   - its TypeMeta index has been seen through the getters (the Python
 *     dtype object and its itemsize are learned there, never guessed).
 * Anything else: -1, and the caller uses the getters (which raise where
 * torch raises). The reader switches on only after FP_TD_AGREE reads
 * through the getters gave the same three answers as the fields (and the
 * same storage_offset() and numel()), and off for the process, said once,
 * at the first disagreement. tests/unit/test_fp_tensor_fields.c pins the
 * offsets. The read itself (fp_td_read, fp.h; fp_tensor_direct and
 * fp_read_tensor, fp_py.h) is inline in a hit's code; this file decides
 * when it may run. */
#include "fastpath/fp_py.h"
#include "interpose/log.h"
#include "interpose/real.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <string.h>

#define FP_TD_AGREE 16

struct fp_td fp_td;

static const void *vptr_of(void *lib, const char *vtable)
{
    const char *v = trlat_real_dlsym(lib, vtable);
    return v ? v + 16 : NULL; /* past offset-to-top and typeinfo */
}

static void resolve(void)
{
    fp_td.state = -1;
    if (!fpy.torch_layout_known || fp_conf.tensor_getters)
        return;
    void *c10 = dlopen("libc10.so", RTLD_NOLOAD | RTLD_LAZY);
    void *cpu = dlopen("libtorch_cpu.so", RTLD_NOLOAD | RTLD_LAZY);
    if (c10) {
        fp_td.lay.ti_vptr = vptr_of(c10, "_ZTVN3c1010TensorImplE");
        fp_td.lay.si_vptr = vptr_of(c10, "_ZTVN3c1011StorageImplE");
        dlclose(c10); /* RTLD_NOLOAD: torch keeps them loaded */
    }
    if (cpu) {
        fp_td.modes = (_Bool(*)(void))trlat_real_dlsym(cpu, "_ZN2at4impl27torch_function_mode_enabledEv");
        dlclose(cpu);
    }
    if (fp_td.lay.ti_vptr && fp_td.lay.si_vptr && fp_td.modes)
        fp_td.state = 1;
}

/* Said once whatever TRLAT_FASTPATH_DEBUG says: torch is not what this
 * reader was built for, and hits cost more from here on. */
static void turn_off(const char *why)
{
    fp_td.state = -1;
    static atomic_flag once;
    trlat_log_once(&once, "fast path: tensors are read through torch's getters from now on (%s)", why);
}

/* v.name() as a C long, or -1 - 2**62 when it cannot be had. */
static long call_long(PyObject *v, const char *name)
{
    PyObject *f = PY(PyObject_GetAttrString)(v, name);
    PyObject *r = f ? PY(PyObject_CallObject)(f, NULL) : NULL;
    long x = r ? PY(PyLong_AsLong)(r) : -1;
    trlat_py_drop(f);
    trlat_py_drop(r);
    if (PY(PyErr_Occurred)()) {
        PY(PyErr_Clear)();
        return -1 - (1L << 62);
    }
    return x;
}

/* While comparing: the two fields a pointer check cannot pin down alone
 * (an offset of 0 or a numel of 1 reads alike at a wrong place) against
 * storage_offset() and numel(). */
static int sizes_agree(PyObject *v)
{
    const void *impl = FP_AT(v, FP_THPV_CDATA, const void *);
    return FP_AT(impl, FP_TI_STORAGE_OFFSET, int64_t) == call_long(v, "storage_offset") &&
           FP_AT(impl, FP_TI_NUMEL, int64_t) == call_long(v, "numel");
}

/* The getters' answers for v: learn v's dtype, compare with the fields. */
void fp_tensor_direct_check(PyObject *v, PyObject *dtype, int cuda, uint64_t ptr)
{
    if (!fp_td.state)
        resolve();
    if (fp_td.state <= 0 || fp_td.modes())
        return;
    unsigned idx = FP_TD_DTYPES;
    int c;
    uint64_t p;
    int r = fp_td_read(v, &fp_td.lay, &idx, &c, &p);
    if (r && idx < FP_TD_DTYPES && !fp_td.lay.itemsize[idx]) { /* a plain tensor of a dtype not seen yet */
        PyObject *n = trlat_py_attr(dtype, "itemsize");
        long sz = n ? PY(PyLong_AsLong)(n) : -1;
        trlat_py_drop(n);
        if (sz <= 0 || sz > 64) {
            PY(PyErr_Clear)();
            turn_off("a dtype without an itemsize");
            return;
        }
        fp_td.dtype[idx] = dtype;
        fp_td.lay.itemsize[idx] = (uint32_t)sz;
        r = fp_td_read(v, &fp_td.lay, &idx, &c, &p);
    }
    if (r)
        return; /* not a plain tensor: the getters serve it */
    if (fp_td.dtype[idx] != dtype || c != cuda || p != ptr || (fp_td.state == 1 && !sizes_agree(v))) {
        turn_off("a tensor's fields disagreed with its getters");
        return;
    }
    if (fp_td.state == 1 && ++fp_td.agreed >= FP_TD_AGREE) {
        fp_td.state = 2;
        if (fp_conf.debug)
            trlat_log_debug("fast path: tensors are read from torch's TensorImpl (%u reads agreed with its getters)",
                            fp_td.agreed);
    }
}
