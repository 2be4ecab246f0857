/* The raw driver-launch floor: a C loop of cuLaunchKernelEx on an empty
 * kernel loaded from PTX, with the parameter list of tritonbench's
 * nop_with_args_kernel as Triton 3.6 launches it (5 pointers, 9 ints, the
 * global and profile scratch pointers: 16 parameters), or with none.
 *
 *   bench_launch N [args16|args0|legacy16]   prints ns_per_launch=X
 *   bench_launch N ab                         under LD_PRELOAD=libtrlat.so:
 *       alternates blocks of direct driver calls and calls through trlat's
 *       wrapper in one process; prints both and their difference
 *
 * Every benchmark puts this number beside its own, measured in the same run. */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char ptx[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry nop16(.param .u64 a0, .param .u64 a1, .param .u64 a2, .param .u64 a3, .param .u64 a4,"
    " .param .u32 b0, .param .u32 b1, .param .u32 b2, .param .u32 b3, .param .u32 b4, .param .u32 b5,"
    " .param .u32 b6, .param .u32 b7, .param .u32 b8, .param .u64 s0, .param .u64 s1) { ret; }\n"
    ".visible .entry nop0() { ret; }\n";

#define CHECK(x)                                                                  \
    do {                                                                          \
        CUresult r_ = (x);                                                        \
        if (r_ != CUDA_SUCCESS) {                                                 \
            const char *s_ = "?";                                                 \
            cuGetErrorString(r_, &s_);                                            \
            fprintf(stderr, "bench_launch: %s failed: %d %s\n", #x, (int)r_, s_); \
            exit(1);                                                              \
        }                                                                         \
    } while (0)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    const char *mode = argc > 2 ? argv[2] : "args16";
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    CHECK(cuModuleLoadData(&mod, ptx));
    int zero = strcmp(mode, "args0") == 0;
    CHECK(cuModuleGetFunction(&f, mod, zero ? "nop0" : "nop16"));
    CUdeviceptr buf;
    CHECK(cuMemAlloc(&buf, 1 << 20));
    unsigned long long ptrs[5] = {buf, buf + 256, buf + 512, buf + 768, buf + 1024}, scratch[2] = {0, 0};
    unsigned ints[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    void *params[16];
    for (int i = 0; i < 5; i++)
        params[i] = &ptrs[i];
    for (int i = 0; i < 9; i++)
        params[5 + i] = &ints[i];
    params[14] = &scratch[0];
    params[15] = &scratch[1];
    CUstream stream;
    CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    CUlaunchConfig cfg = {.gridDimX = 1,
                          .gridDimY = 1,
                          .gridDimZ = 1,
                          .blockDimX = 128,
                          .blockDimY = 1,
                          .blockDimZ = 1,
                          .sharedMemBytes = 0,
                          .hStream = stream,
                          .attrs = NULL,
                          .numAttrs = 0};
    int legacy = strcmp(mode, "legacy16") == 0;
    if (strcmp(mode, "ab") == 0) {
        typedef CUresult (*lkex_t)(const CUlaunchConfig *, CUfunction, void **, void **);
        void *(*real_of)(const char *) = (void *(*)(const char *))dlsym(RTLD_DEFAULT, "trlat_api_real_function");
        lkex_t direct = real_of ? (lkex_t)real_of("cuLaunchKernelEx") : cuLaunchKernelEx, wrapped = cuLaunchKernelEx;
        enum { BLOCK = 5000, BLOCKS = 40 };
        double a[BLOCKS], b[BLOCKS];
        for (int k = 0; k < BLOCKS; k++) {
            lkex_t first = (k & 1) ? wrapped : direct, second = (k & 1) ? direct : wrapped;
            double s0 = now();
            for (int i = 0; i < BLOCK; i++)
                CHECK(first(&cfg, f, params, NULL));
            double s1 = now();
            for (int i = 0; i < BLOCK; i++)
                CHECK(second(&cfg, f, params, NULL));
            double s2 = now();
            a[k] = ((k & 1) ? s2 - s1 : s1 - s0) / BLOCK;
            b[k] = ((k & 1) ? s1 - s0 : s2 - s1) / BLOCK;
            CHECK(cuStreamSynchronize(stream));
        }
        /* medians */
        for (int i = 0; i < BLOCKS; i++)
            for (int j = i + 1; j < BLOCKS; j++) {
                if (a[j] < a[i]) {
                    double t = a[i];
                    a[i] = a[j];
                    a[j] = t;
                }
                if (b[j] < b[i]) {
                    double t = b[i];
                    b[i] = b[j];
                    b[j] = t;
                }
            }
        printf("direct_ns=%.1f wrapped_ns=%.1f delta_ns=%.1f trlat=%d\n", a[BLOCKS / 2], b[BLOCKS / 2],
               b[BLOCKS / 2] - a[BLOCKS / 2], real_of != NULL);
        return 0;
    }
    for (long i = 0; i < 2000; i++) /* warm up */
        CHECK(cuLaunchKernelEx(&cfg, f, zero ? NULL : params, NULL));
    CHECK(cuStreamSynchronize(stream));
    double t0 = now();
    if (legacy) {
        for (long i = 0; i < n; i++)
            CHECK(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, stream, params, NULL));
    } else {
        for (long i = 0; i < n; i++)
            CHECK(cuLaunchKernelEx(&cfg, f, zero ? NULL : params, NULL));
    }
    double t1 = now();
    CHECK(cuStreamSynchronize(stream));
    printf("ns_per_launch=%.1f\n", (t1 - t0) / n);
    return 0;
}
