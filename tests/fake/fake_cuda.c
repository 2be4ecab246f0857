/* A fake libcuda.so.1 for machines without a GPU: the entry points trlat's
 * tests use, each counting its calls. Function handles are pointers to
 * interned names. Knobs (environment):
 *   FAKE_CUDA_RESULT=N      every launch returns CUresult N
 *   FAKE_CUDA_LAUNCH_NS=N   every launch spins N ns (demo: a driver's cost)
 *   FAKE_CUDA_FIRST_LAUNCH_NS=N  the process's first launch spins N ns instead (a module load)
 *   FAKE_CUDA_PROC_ALIAS=1  cuGetProcAddress hands out internal aliases, not
 *                           the exported symbols (as a real driver may)
 * A fake libcupti (fake_cupti.c) sees every launch call, as the real one
 * does inside the driver, through fake_cuda_set_launch_hook. */
#include <cuda.h>
#undef cuGetProcAddress
#undef cuLaunchKernel
#undef cuLaunchKernelEx
#undef cuLaunchCooperativeKernel

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <stdio.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

enum {
    C_LK,
    C_LK_PTSZ,
    C_LKEX,
    C_LKEX_PTSZ,
    C_COOP,
    C_COOP_PTSZ,
    C_LK_ALIAS,
    C_GETFN,
    C_GPA,
    C_GPA2,
    C_NAME,
    C_ATTRS,
    C_FREE,
    C_TMAP,
    C_N
};
static atomic_ulong calls[C_N];
static const char *const call_names[C_N] = {"cuLaunchKernel",
                                            "cuLaunchKernel_ptsz",
                                            "cuLaunchKernelEx",
                                            "cuLaunchKernelEx_ptsz",
                                            "cuLaunchCooperativeKernel",
                                            "cuLaunchCooperativeKernel_ptsz",
                                            "alias_cuLaunchKernel",
                                            "cuModuleGetFunction",
                                            "cuGetProcAddress",
                                            "cuGetProcAddress_v2",
                                            "cuFuncGetName",
                                            "cuPointerGetAttributes",
                                            "cuMemFree_v2",
                                            "cuTensorMapEncodeTiled"};

/* Introspection for the tests' launchers. */
EXPORT unsigned long fake_cuda_calls(const char *entry)
{
    for (int i = 0; i < C_N; i++)
        if (strcmp(entry, call_names[i]) == 0)
            return atomic_load(&calls[i]);
    return (unsigned long)-1;
}

struct fake_fn {
    char name[128];
    unsigned nparams, psize[64]; /* cuFuncGetParamInfo's answer (fake_cuda_set_params) */
};
/* Enough handles for the scale tests (tests/integration/test_scale.sh);
 * found by name through an open-addressing index. */
#define FAKE_MAX_FNS (1 << 17)
static struct fake_fn fns[FAKE_MAX_FNS];
static int nfns;
static int fn_index[2 * FAKE_MAX_FNS]; /* fns index + 1; 0: empty */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned name_hash(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h & (2 * FAKE_MAX_FNS - 1);
}

/* A new handle for name (the lock held); NULL when all are taken. */
static CUfunction new_function(const char *name)
{
    if (nfns >= FAKE_MAX_FNS)
        return NULL;
    struct fake_fn *f = &fns[nfns++];
    strncpy(f->name, name, sizeof f->name - 1);
    f->name[sizeof f->name - 1] = 0;
    return (CUfunction)f;
}

/* A handle for name (also used by tests to make handles trlat never saw). */
EXPORT CUfunction fake_cuda_function(const char *name)
{
    pthread_mutex_lock(&lock);
    CUfunction f = NULL;
    unsigned h = name_hash(name);
    for (; fn_index[h]; h = (h + 1) & (2 * FAKE_MAX_FNS - 1))
        if (strcmp(fns[fn_index[h] - 1].name, name) == 0) {
            f = (CUfunction)&fns[fn_index[h] - 1];
            break;
        }
    if (!f && (f = new_function(name)))
        fn_index[h] = nfns;
    pthread_mutex_unlock(&lock);
    return f;
}

/* FAKE_CUDA_EVICT_CODE_KB=N: every launch also runs N KB of code, one
 * jump per 64-byte line, pushing the caller's code out of L1i as the real
 * driver's launch does (scripts/probes/coldlines.sh ... code). */
static void evict_code(void)
{
    static long kb = -1;
    static void (*code)(void);
    if (kb < 0) {
        const char *s = getenv("FAKE_CUDA_EVICT_CODE_KB");
        long k = s ? atol(s) : 0;
        void *p =
            k > 0 ? mmap(NULL, (size_t)k * 1024, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                  : MAP_FAILED;
        kb = p != MAP_FAILED ? k : 0;
        if (kb) {
            unsigned char *c = p;
            for (long i = 0; i < kb * 1024; i += 64) {
                c[i] = 0xeb; /* jmp rel8 to the next line */
                c[i + 1] = 62;
            }
            c[kb * 1024 - 64] = 0xc3; /* ret */
            code = (void (*)(void))p;
        }
    }
    if (code)
        code();
}

/* FAKE_CUDA_EVICT_KB=N: each launch writes a line in every 64 bytes of an
 * N KB buffer, pushing the caller's lines out of the caches as the real
 * driver's ~4 us launch does (a probe's setting: scripts/probes/coldlines.sh
 * counts the lines a fast-path hit then misses). */
static void evict(void)
{
    static long kb = -1;
    static volatile char *buf;
    if (kb < 0) {
        const char *s = getenv("FAKE_CUDA_EVICT_KB");
        long k = s ? atol(s) : 0;
        buf = k > 0 ? malloc((size_t)k * 1024) : NULL;
        kb = buf ? k : 0;
    }
    for (long i = 0; i < kb * 1024; i += 64)
        buf[i]++;
    evict_code();
}

static CUresult launch_result(void)
{
    static long ns = -1, first_ns = -1;
    static atomic_flag first_done;
    if (ns < 0) {
        const char *s = getenv("FAKE_CUDA_LAUNCH_NS");
        ns = s ? atol(s) : 0;
        s = getenv("FAKE_CUDA_FIRST_LAUNCH_NS");
        first_ns = s ? atol(s) : 0;
    }
    long spin = first_ns > 0 && !atomic_flag_test_and_set(&first_done) ? first_ns : ns;
    if (spin > 0) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        do
            clock_gettime(CLOCK_MONOTONIC, &b);
        while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < spin);
    }
    evict();
    const char *r = getenv("FAKE_CUDA_RESULT");
    return r ? (CUresult)atoi(r) : CUDA_SUCCESS;
}

static int valid(CUfunction f)
{
    return (struct fake_fn *)f >= fns && (struct fake_fn *)f < fns + FAKE_MAX_FNS;
}

/* ---- what CUPTI sees of the driver (for tests/fake/fake_cupti.c) ---- */

/* Called at a launch call's entry (rc unused) and at its return (rc: what
 * the call returns), on the launching thread; entry is the function's
 * name. */
typedef void (*fake_cuda_launch_hook)(int at_exit, const char *entry, CUresult rc);
static _Atomic(fake_cuda_launch_hook) launch_hook;

EXPORT void fake_cuda_set_launch_hook(fake_cuda_launch_hook h)
{
    atomic_store(&launch_hook, h);
}

static CUresult hooked_launch(int counter, CUfunction f)
{
    atomic_fetch_add_explicit(&calls[counter], 1, memory_order_relaxed);
    fake_cuda_launch_hook h = atomic_load_explicit(&launch_hook, memory_order_acquire);
    if (h)
        h(0, call_names[counter], CUDA_SUCCESS);
    CUresult rc = valid(f) ? launch_result() : CUDA_ERROR_INVALID_HANDLE;
    if (h)
        h(1, call_names[counter], rc);
    return rc;
}

#define LAUNCH(counter) return hooked_launch(counter, f)

EXPORT CUresult cuInit(unsigned flags)
{
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDriverGetVersion(int *v)
{
    *v = 13000;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned sh, CUstream s, void **p, void **e)
{
    LAUNCH(C_LK);
}
EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                    unsigned bz, unsigned sh, CUstream s, void **p, void **e)
{
    LAUNCH(C_LK_PTSZ);
}
static CUresult alias_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                     unsigned bz, unsigned sh, CUstream s, void **p, void **e)
{
    LAUNCH(C_LK_ALIAS);
}
EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **p, void **e)
{
    LAUNCH(C_LKEX);
}
EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **p, void **e)
{
    LAUNCH(C_LKEX_PTSZ);
}
EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                          unsigned bz, unsigned sh, CUstream s, void **p)
{
    LAUNCH(C_COOP);
}
EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                               unsigned by, unsigned bz, unsigned sh, CUstream s, void **p)
{
    LAUNCH(C_COOP_PTSZ);
}

EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    *m = (CUmodule)(uintptr_t)0x1000;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *out, CUmodule m, const char *name)
{
    atomic_fetch_add(&calls[C_GETFN], 1);
    if (!out || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if (strncmp(name, "missing", 7) == 0)
        return CUDA_ERROR_NOT_FOUND;
    *out = fake_cuda_function(name);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLibraryGetKernel(CUkernel *out, CUlibrary lib, const char *name)
{
    *out = (CUkernel)fake_cuda_function(name);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuKernelGetFunction(CUfunction *out, CUkernel k)
{
    /* A distinct handle for the function, as a real driver gives. */
    char buf[160];
    snprintf(buf, sizeof buf, "%s", ((struct fake_fn *)k)->name);
    pthread_mutex_lock(&lock);
    CUfunction f = new_function(buf);
    pthread_mutex_unlock(&lock);
    *out = f;
    return f ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuFuncGetName(const char **name, CUfunction f)
{
    atomic_fetch_add(&calls[C_NAME], 1);
    if (!valid(f))
        return CUDA_ERROR_INVALID_HANDLE;
    *name = ((struct fake_fn *)f)->name;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuKernelGetName(const char **name, CUkernel k)
{
    return cuFuncGetName(name, (CUfunction)k);
}

EXPORT CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *st);
EXPORT CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags);

static void *lookup(const char *sym, int ver, cuuint64_t flags)
{
    int ptds = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    int alias = getenv("FAKE_CUDA_PROC_ALIAS") != NULL;
    if (!strcmp(sym, "cuLaunchKernel"))
        return ptds ? (void *)cuLaunchKernel_ptsz : alias ? (void *)alias_cuLaunchKernel : (void *)cuLaunchKernel;
    if (!strcmp(sym, "cuLaunchKernelEx"))
        return ptds ? (void *)cuLaunchKernelEx_ptsz : (void *)cuLaunchKernelEx;
    if (!strcmp(sym, "cuLaunchCooperativeKernel"))
        return ptds ? (void *)cuLaunchCooperativeKernel_ptsz : (void *)cuLaunchCooperativeKernel;
    if (!strcmp(sym, "cuModuleGetFunction"))
        return (void *)cuModuleGetFunction;
    if (!strcmp(sym, "cuLibraryGetKernel"))
        return (void *)cuLibraryGetKernel;
    if (!strcmp(sym, "cuKernelGetFunction"))
        return (void *)cuKernelGetFunction;
    if (!strcmp(sym, "cuFuncGetName"))
        return (void *)cuFuncGetName;
    if (!strcmp(sym, "cuGetProcAddress"))
        return ver >= 12000 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress;
    if (!strcmp(sym, "cuInit"))
        return (void *)cuInit;
    if (!strcmp(sym, "cuMemFree"))
        return (void *)cuMemFree_v2;
    return NULL;
}

CUresult cuGetProcAddress_v2(const char *sym, void **pfn, int ver, cuuint64_t flags, CUdriverProcAddressQueryResult *st)
{
    atomic_fetch_add(&calls[C_GPA2], 1);
    void *p = sym ? lookup(sym, ver, flags) : NULL;
    if (st)
        *st = p ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (pfn)
        *pfn = p;
    return p ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult cuGetProcAddress(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
    atomic_fetch_add(&calls[C_GPA], 1);
    void *p = sym ? lookup(sym, ver, flags) : NULL;
    if (pfn)
        *pfn = p;
    return p ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/* ---- for the fast path's tests (fastpath/): parameter layouts, the
 * current context, error strings, pointer attributes ---- */

/* Declares a function's kernel parameters: n parameters of the given
 * sizes, laid out at their natural alignment (as a real kernel's). */
EXPORT int fake_cuda_set_params(CUfunction fn, unsigned n, const unsigned *sizes)
{
    struct fake_fn *f = (struct fake_fn *)fn;
    if (!valid(fn) || n > 64)
        return -1;
    for (unsigned i = 0; i < n; i++)
        f->psize[i] = sizes[i];
    f->nparams = n;
    return 0;
}

EXPORT CUresult cuFuncGetParamInfo(CUfunction fn, size_t index, size_t *offset, size_t *size)
{
    if (!valid(fn) || !offset || !size)
        return CUDA_ERROR_INVALID_VALUE;
    struct fake_fn *f = (struct fake_fn *)fn;
    if (index >= f->nparams)
        return CUDA_ERROR_INVALID_VALUE;
    size_t off = 0;
    for (size_t i = 0;; i++) {
        /* a CUtensorMap (128 bytes) is aligned to 64, as nvcc lays it out */
        size_t s = f->psize[i], a = s == 128 ? 64 : s >= 8 ? 8 : s ? s : 1;
        off = (off + a - 1) / a * a;
        if (i == index) {
            *offset = off;
            *size = s;
            return CUDA_SUCCESS;
        }
        off += s;
    }
}

/* One current context per device, the one of the device last made current
 * (fake_cuda_set_context_device: the stand-in torch's set_device does it,
 * as cudaSetDevice makes the device's primary context current);
 * FAKE_CUDA_CONTEXT_DEVICE picks the first. */
static int ctx_device = -1;

static int context_device(void)
{
    if (ctx_device < 0) {
        const char *e = getenv("FAKE_CUDA_CONTEXT_DEVICE");
        ctx_device = e ? atoi(e) : 0;
    }
    return ctx_device;
}

EXPORT void fake_cuda_set_context_device(int d)
{
    ctx_device = d;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    *ctx = getenv("FAKE_CUDA_NO_CONTEXT") ? NULL : (CUcontext)(uintptr_t)(0x2000 + 0x100 * context_device());
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *d)
{
    if (getenv("FAKE_CUDA_NO_CONTEXT"))
        return CUDA_ERROR_INVALID_CONTEXT;
    *d = context_device();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGetErrorString(CUresult r, const char **s)
{
    static char buf[32];
    snprintf(buf, sizeof buf, "fake error %d", (int)r);
    *s = buf;
    return CUDA_SUCCESS;
}

/* Device memory, for the pointer queries: [FAKE_DEVICE_LO, FAKE_DEVICE_HI)
 * (where the stand-in torch's tensors live), in allocations of 2 MiB;
 * anything else is memory CUDA does not know (a host pointer). */
#define FAKE_DEVICE_LO 0x7f0000000000ull
#define FAKE_DEVICE_HI 0x7f8000000000ull
#define FAKE_ALLOC (2ull << 20)

static int is_device(CUdeviceptr p)
{
    return p >= FAKE_DEVICE_LO && p < FAKE_DEVICE_HI;
}

EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr p)
{
    if (attr != CU_POINTER_ATTRIBUTE_DEVICE_POINTER || !is_device(p))
        return CUDA_ERROR_INVALID_VALUE;
    *(CUdeviceptr *)data = p; /* unified addressing: the same address */
    return CUDA_SUCCESS;
}

/* As the driver's: success for any address, the answers zero for memory
 * it does not know. */
EXPORT CUresult cuPointerGetAttributes(unsigned n, CUpointer_attribute *at, void **data, CUdeviceptr p)
{
    atomic_fetch_add(&calls[C_ATTRS], 1);
    int dev = is_device(p);
    for (unsigned i = 0; i < n; i++) {
        switch (at[i]) {
        case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
            *(CUdeviceptr *)data[i] = !dev                                           ? 0
                                      : at[i] == CU_POINTER_ATTRIBUTE_DEVICE_POINTER ? p
                                                                                     : p & ~(FAKE_ALLOC - 1);
            break;
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
            *(unsigned *)data[i] = dev ? CU_MEMORYTYPE_DEVICE : 0;
            break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
            *(size_t *)data[i] = dev ? FAKE_ALLOC : 0;
            break;
        default:
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
    atomic_fetch_add(&calls[C_FREE], 1);
    return is_device(p) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* A CUtensorMap from its inputs, as the driver encodes one (host only, no
 * launch): opaque bytes, the same for the same inputs, the address in the
 * first eight as the H200's driver keeps it (FAKE_TMAP_SCRAMBLE=1: mixed
 * into all of them, and =2 scrambled in place, so that no replay may
 * write it). Checks what the driver's does that Triton's callers can get
 * wrong: the rank, a 16-byte aligned address under 2^57, strides in
 * multiples of 16, a box of 1..256. */
EXPORT CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType dtype, cuuint32_t rank, void *addr,
                                       const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                                       const cuuint32_t *estrides, CUtensorMapInterleave interleave,
                                       CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                                       CUtensorMapFloatOOBfill oob)
{
    atomic_fetch_add(&calls[C_TMAP], 1);
    if (!map || rank < 1 || rank > 5 || ((uintptr_t)addr & 15) || ((uintptr_t)addr >> 57) || ((uintptr_t)map & 63))
        return CUDA_ERROR_INVALID_VALUE;
    const char *scramble = getenv("FAKE_TMAP_SCRAMBLE");
    int mix = scramble && *scramble == '1', twist = scramble && *scramble == '2';
    uint64_t w[16] = {0};
    w[0] = (uint64_t)(uintptr_t)addr;
    if (twist)
        w[0] = w[0] << 7 | w[0] >> 57;
    w[1] = (uint64_t)dtype | (uint64_t)rank << 8 | (uint64_t)interleave << 16 | (uint64_t)swizzle << 24 |
           (uint64_t)l2 << 32 | (uint64_t)oob << 40;
    for (unsigned i = 0; i < rank; i++) {
        if (box[i] < 1 || box[i] > 256 || (i + 1 < rank && (strides[i] & 15)))
            return CUDA_ERROR_INVALID_VALUE;
        w[2 + i] = dims[i];
        w[7 + i] = i + 1 < rank ? strides[i] : 0;
        w[12] = w[12] * 257 + box[i] * 17 + estrides[i];
    }
    uint64_t h = 14695981039346656037ull;
    for (unsigned i = mix ? 0 : 1; i < 15; i++)
        h = (h ^ w[i]) * 1099511628211ull;
    w[15] = h;
    memcpy(map, w, sizeof w);
    return CUDA_SUCCESS;
}
