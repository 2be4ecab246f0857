/* The Python-level floor: the least any launcher called from Python costs.
 * Three C functions Python calls directly (METH_FASTCALL|METH_KEYWORDS,
 * called with the launch statement's arguments, which they ignore), each launching a prebuilt block through the
 * driver's own cuLaunchKernelEx: "keep" holds the GIL; "gil" releases it around the driver call as Triton's launcher
 * (and trlat's replay) must; "device" also asks torch's C++ library for the current device and stream first, as every
 * faithful replay must (Triton keys and launches on them). No lookup, no key, no record: what is left above the raw C
 * loop is Python's call and these steps. scripts/bench_fastpath.py wraps them with ctypes (PyCFunction_NewEx) beside
 * the fast path's hit, in the same process. Built without Python's headers (CPython 3.12+: None is immortal, so it is
 * returned without a reference count). */
#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>

typedef struct _object PyObject;
extern PyObject _Py_NoneStruct;
extern void *PyEval_SaveThread(void);
extern void PyEval_RestoreThread(void *);

typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
struct c10_stream { /* c10::cuda::CUDAStream (fastpath/torch/torchcuda.c) */
    int8_t device_type, device_index;
    int64_t id;
};

static struct {
    launch_ex_fn launch;
    CUlaunchConfig cfg;
    CUfunction func;
    void **params;
    long errors;
    int (*get_device)(int8_t *);
    struct c10_stream (*current_stream)(int8_t);
    void *(*raw)(const struct c10_stream *);
} P;

#define EXPORT __attribute__((visibility("default")))

/* 0, or -1 when torch's C++ functions were not found ("device" unusable). */
EXPORT int trlat_bench_pyfloor_setup(void *launch_ex, void *func, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                     unsigned shmem, void *stream, void **params)
{
    P.launch = (launch_ex_fn)launch_ex;
    P.func = (CUfunction)func;
    P.params = params;
    P.cfg = (CUlaunchConfig){.gridDimX = gx,
                             .gridDimY = gy,
                             .gridDimZ = gz,
                             .blockDimX = bx,
                             .blockDimY = 1,
                             .blockDimZ = 1,
                             .sharedMemBytes = shmem,
                             .hStream = (CUstream)stream};
    void *h = dlopen("libc10_cuda.so", RTLD_NOLOAD | RTLD_LAZY);
    if (!h)
        return -1;
    P.get_device = (int (*)(int8_t *))dlsym(h, "_ZN3c104cuda9GetDeviceEPa");
    P.current_stream = (struct c10_stream(*)(int8_t))dlsym(h, "_ZN3c104cuda20getCurrentCUDAStreamEa");
    P.raw = (void *(*)(const struct c10_stream *))dlsym(h, "_ZNK3c104cuda10CUDAStream6streamEv");
    dlclose(h); /* RTLD_NOLOAD: torch keeps it loaded */
    return P.get_device && P.current_stream && P.raw ? 0 : -1;
}

/* Launches that failed since setup (the benchmark checks it is 0). */
EXPORT long trlat_bench_pyfloor_errors(void)
{
    return P.errors;
}

static void launch(const CUlaunchConfig *cfg)
{
    if (P.launch(cfg, P.func, P.params, NULL) != CUDA_SUCCESS)
        P.errors++;
}

EXPORT PyObject *trlat_bench_pyfloor_keep(PyObject *self, PyObject *const *args, long nargs, PyObject *kwnames)
{
    (void)self, (void)args, (void)nargs, (void)kwnames;
    launch(&P.cfg);
    return &_Py_NoneStruct;
}

EXPORT PyObject *trlat_bench_pyfloor_gil(PyObject *self, PyObject *const *args, long nargs, PyObject *kwnames)
{
    (void)self, (void)args, (void)nargs, (void)kwnames;
    void *ts = PyEval_SaveThread();
    launch(&P.cfg);
    PyEval_RestoreThread(ts);
    return &_Py_NoneStruct;
}

EXPORT PyObject *trlat_bench_pyfloor_device(PyObject *self, PyObject *const *args, long nargs, PyObject *kwnames)
{
    (void)self, (void)args, (void)nargs, (void)kwnames;
    int8_t d;
    CUlaunchConfig cfg = P.cfg;
    if (P.get_device(&d) != 0) {
        P.errors++;
        return &_Py_NoneStruct;
    }
    struct c10_stream s = P.current_stream(d);
    cfg.hStream = (CUstream)P.raw(&s);
    if (cfg.hStream != P.cfg.hStream)
        P.errors++; /* not the stream the benchmark set: the row would measure something else */
    void *ts = PyEval_SaveThread();
    launch(&cfg);
    PyEval_RestoreThread(ts);
    return &_Py_NoneStruct;
}
