/* The raw driver-launch floor inside a Python process: n calls of the
 * driver's own cuLaunchKernelEx (the pointer trlat forwards to,
 * trlat_api_real_function: no wrapper in between) on a kernel and parameter
 * list the caller prepared, timed here. scripts/bench_fastpath.py loads it
 * with ctypes to put the fast path's hits beside the floor in alternating
 * blocks of one process: the machine's processes differ by far more than
 * the ratios it compares. */
#include <cuda.h>
#include <time.h>

typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);

__attribute__((visibility("default"))) double trlat_bench_raw_loop(void *launch_ex, void *func, unsigned gx,
                                                                   unsigned gy, unsigned gz, unsigned bx,
                                                                   unsigned shmem, void *stream, void **params, long n)
{
    CUlaunchConfig cfg = {.gridDimX = gx,
                          .gridDimY = gy,
                          .gridDimZ = gz,
                          .blockDimX = bx,
                          .blockDimY = 1,
                          .blockDimZ = 1,
                          .sharedMemBytes = shmem,
                          .hStream = (CUstream)stream,
                          .attrs = NULL,
                          .numAttrs = 0};
    launch_ex_fn launch = (launch_ex_fn)launch_ex;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < n; i++) {
        CUresult rc = launch(&cfg, (CUfunction)func, params, NULL);
        if (rc != CUDA_SUCCESS)
            return -(double)rc;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n;
}
