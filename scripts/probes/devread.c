/* A probe, not part of trlat: best-of-7 ns per call of what reading the
 * current device and stream costs on the GPU machine (scripts/probes/devread.sh),
 * beside the GIL's release and re-take, a dict lookup and a locked
 * increment for scale. Loaded by devread.py with ctypes.PyDLL (GIL held). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <Python.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
static char cudart[512];
static int find(struct dl_phdr_info *i, size_t s, void *d)
{
    (void)s;
    (void)d;
    if (strstr(i->dlpi_name, "libcudart"))
        snprintf(cudart, sizeof cudart, "%s", i->dlpi_name);
    return 0;
}
struct c10s {
    int8_t t, i;
    int64_t id;
};
static volatile int sink;
#define N 1000000
int run(void)
{
    dl_iterate_phdr(find, NULL);
    printf("cudart: %s\n", cudart);
    void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void *rt = dlopen(cudart, RTLD_NOW | RTLD_NOLOAD);
    void *c10 = dlopen("libc10_cuda.so", RTLD_NOW | RTLD_NOLOAD);
    int (*ctxget)(void **) = dlsym(cu, "cuCtxGetCurrent");
    int (*ctxdev)(int *) = dlsym(cu, "cuCtxGetDevice");
    int (*rtget)(int *) = rt ? dlsym(rt, "cudaGetDevice") : 0;
    int (*gd)(int8_t *) = dlsym(c10, "_ZN3c104cuda9GetDeviceEPa");
    struct c10s (*cs)(int8_t) = dlsym(c10, "_ZN3c104cuda20getCurrentCUDAStreamEa");
    void *(*raw)(const struct c10s *) = dlsym(c10, "_ZNK3c104cuda10CUDAStream6streamEv");
    printf("syms %p %p %p %p %p %p\n", (void *)ctxget, (void *)ctxdev, (void *)rtget, (void *)gd, (void *)cs,
           (void *)raw);
    if (!ctxget || !ctxdev || !rtget || !gd || !cs || !raw)
        return 1;
    const char *names[] = {"cuCtxGetCurrent",    "cuCtxGetDevice",  "cudaGetDevice",
                           "c10 GetDevice",      "c10 stream(dev)", "c10 GetDevice+stream",
                           "SaveThread+Restore", "empty loop",      "PyDict_GetItem",
                           "lock xadd",          "load+store"};
    PyObject *dd = PyDict_New(), *kk = PyUnicode_FromString("abc");
    PyDict_SetItem(dd, kk, kk);
    static _Atomic unsigned long ctr;
    double best[11];
    for (int k = 0; k < 11; k++)
        best[k] = 1e18;
    for (int round = 0; round < 7; round++)
        for (int k = 0; k < 11; k++) {
            double t = now();
            for (int n = 0; n < N; n++) {
                void *c;
                int d;
                int8_t d8;
                struct c10s s;
                switch (k) {
                case 0:
                    ctxget(&c);
                    sink += (int)(intptr_t)c;
                    break;
                case 1:
                    ctxdev(&d);
                    sink += d;
                    break;
                case 2:
                    rtget(&d);
                    sink += d;
                    break;
                case 3:
                    gd(&d8);
                    sink += d8;
                    break;
                case 4:
                    s = cs(0);
                    sink += (int)s.id;
                    break;
                case 5:
                    gd(&d8);
                    s = cs(d8);
                    sink += (int)(intptr_t)raw(&s);
                    break;
                case 6: {
                    PyThreadState *ts = PyEval_SaveThread();
                    PyEval_RestoreThread(ts);
                } break;
                case 7:
                    sink++;
                    break;
                case 8:
                    sink += (int)(intptr_t)PyDict_GetItem(dd, kk);
                    break;
                case 9:
                    __atomic_fetch_add(&ctr, 1, __ATOMIC_RELAXED);
                    break;
                case 10:
                    __atomic_store_n(&ctr, __atomic_load_n(&ctr, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
                    break;
                }
            }
            double ns = (now() - t) / N;
            if (ns < best[k])
                best[k] = ns;
        }
    for (int k = 0; k < 11; k++)
        printf("PROBE %-22s %.1f ns\n", names[k], best[k]);
    return 0;
}
