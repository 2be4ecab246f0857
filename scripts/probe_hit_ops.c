/* The C-level cost of the calls a fast-path hit makes (fastpath/key_args.c,
 * fastpath/torch/torchcuda.c), in TSC ticks per call and ns: built and run by
 * scripts/probe_hit_ops.py on the GPU machine. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>
#include <time.h>
#include <x86intrin.h>

struct c10s {
    int8_t type, index;
    int64_t id;
};
typedef int8_t (*cur_dev_t)(void);
typedef struct c10s (*cur_stream_t)(int8_t);
typedef void *(*stream_t)(const struct c10s *);

static PyObject *run(PyObject *self, PyObject *args)
{
    PyObject *t, *gd, *gs;
    long n;
    if (!PyArg_ParseTuple(args, "OOOl", &t, &gd, &gs, &n))
        return NULL;
    PyObject *res = PyDict_New();
    uint64_t a, b;
    PyObject *name_dtype = PyUnicode_InternFromString("dtype"), *name_cuda = PyUnicode_InternFromString("is_cuda"),
             *name_dp = PyUnicode_InternFromString("data_ptr");
    PyObject *dtd = _PyType_Lookup(Py_TYPE(t), name_dtype), *icd = _PyType_Lookup(Py_TYPE(t), name_cuda);
    getter gdt = ((PyGetSetDescrObject *)dtd)->d_getset->get, gic = ((PyGetSetDescrObject *)icd)->d_getset->get;
    void *cdt = ((PyGetSetDescrObject *)dtd)->d_getset->closure, *cic = ((PyGetSetDescrObject *)icd)->d_getset->closure;
    PyObject *dpd = _PyType_Lookup(Py_TYPE(t), name_dp);
    PyCFunction dpf = ((PyMethodDescrObject *)dpd)->d_method->ml_meth;
    PyObject *dev = PyObject_CallNoArgs(gd);
    if (!dev)
        return NULL;
#define TIME(label, body)                                      \
    do {                                                       \
        a = __rdtsc();                                         \
        for (long i = 0; i < n; i++) {                         \
            body;                                              \
        }                                                      \
        b = __rdtsc();                                         \
        PyObject *v = PyFloat_FromDouble((double)(b - a) / n); \
        PyDict_SetItemString(res, label, v);                   \
        Py_DECREF(v);                                          \
    } while (0)
    TIME("empty", __asm__ volatile("" ::: "memory"));
    TIME("rdtsc", (void)__rdtsc());
    TIME("vectorcall _cuda_getDevice()", {
        PyObject *r = PyObject_Vectorcall(gd, NULL, 0, NULL);
        Py_DECREF(r);
    });
    TIME("vectorcall _cuda_getCurrentRawStream(dev)", {
        PyObject *r = PyObject_Vectorcall(gs, &dev, 1, NULL);
        Py_DECREF(r);
    });
    TIME("dtype getter", {
        PyObject *r = gdt(t, cdt);
        Py_DECREF(r);
    });
    TIME("is_cuda getter", {
        PyObject *r = gic(t, cic);
        Py_DECREF(r);
    });
    TIME("_PyObject_GetMethod data_ptr", {
        PyObject *m = NULL;
        _PyObject_GetMethod(t, name_dp, &m);
        Py_DECREF(m);
    });
    TIME("data_ptr C function + PyLong_AsLongLong", {
        PyObject *r = dpf(t, NULL);
        (void)PyLong_AsLongLong(r);
        Py_DECREF(r);
    });
    TIME("PyObject_GetAttr dtype", {
        PyObject *r = PyObject_GetAttr(t, name_dtype);
        Py_DECREF(r);
    });
    void *h = dlopen("libc10_cuda.so", RTLD_NOLOAD | RTLD_LAZY);
    cur_dev_t cd = h ? (cur_dev_t)dlsym(h, "_ZN3c104cuda14current_deviceEv") : NULL;
    cur_stream_t cs = h ? (cur_stream_t)dlsym(h, "_ZN3c104cuda20getCurrentCUDAStreamEa") : NULL;
    stream_t st = h ? (stream_t)dlsym(h, "_ZNK3c104cuda10CUDAStream6streamEv") : NULL;
    void *hr = dlopen("libcudart.so.13", RTLD_NOLOAD | RTLD_LAZY);
    int (*cgd)(int *) = hr ? (int (*)(int *))dlsym(hr, "cudaGetDevice") : NULL;
    if (cgd)
        TIME("cudaGetDevice (torch's cudart)", {
            int d;
            (void)cgd(&d);
            __asm__ volatile("" ::"r"(d));
        });
    else
        PyDict_SetItemString(res, "cudart", Py_None);
    if (cd && cs && st) {
        TIME("c10::cuda::current_device()", {
            int8_t d = cd();
            __asm__ volatile("" ::"r"(d));
        });
        TIME("c10::cuda::getCurrentCUDAStream(d).stream()", {
            struct c10s s = cs(0);
            void *p = st(&s);
            __asm__ volatile("" ::"r"(p));
        });
        struct c10s s = cs(cd());
        PyObject *r = PyObject_Vectorcall(gs, &dev, 1, NULL);
        PyObject *v = Py_BuildValue("(iiKK)", (int)cd(), (int)PyLong_AsLong(dev), (unsigned long long)(uintptr_t)st(&s),
                                    (unsigned long long)PyLong_AsUnsignedLongLong(r));
        PyDict_SetItemString(res, "check c10 dev, py dev, c10 stream, py stream", v);
        Py_DECREF(v);
        Py_DECREF(r);
    } else {
        PyDict_SetItemString(res, "c10 symbols", Py_None);
    }
    Py_DECREF(dev);
    /* ticks per ns, over a 20 ms busy interval */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    a = __rdtsc();
    do
        clock_gettime(CLOCK_MONOTONIC, &t1);
    while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 20000000L);
    b = __rdtsc();
    PyObject *v = PyFloat_FromDouble((double)(b - a) /
                                     (double)((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec)));
    PyDict_SetItemString(res, "ticks per ns", v);
    Py_DECREF(v);
    return res;
}
static PyMethodDef M[] = {{"run", run, METH_VARARGS, NULL}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "opcost", NULL, -1, M};
PyMODINIT_FUNC PyInit_opcost(void)
{
    return PyModule_Create(&mod);
}
