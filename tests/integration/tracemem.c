/* Traced launches from many threads, for TRLAT_TRACE's memory bound:
 * `tracemem THREADS M MARKERS`. Each thread launches trace_kernel M times
 * with grid (i + 1, thread + 1, 1) for its i-th launch; once they are
 * joined, the main thread launches marker_kernel MARKERS times. At exit,
 * after trlat's report is written (its exit handler, registered on the
 * first CUDA call, runs before this one), prints the process's peak
 * resident memory. */
#include <cuda.h>
#undef cuLaunchKernel

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                        void **, void **);

static long m;
static CUfunction kernel;

static void *thread_main(void *arg)
{
    unsigned t = (unsigned)(uintptr_t)arg;
    for (long i = 0; i < m; i++)
        cuLaunchKernel(kernel, (unsigned)i + 1, t + 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
    return NULL;
}

static void peak(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("maxrss_kb %ld\n", ru.ru_maxrss);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: tracemem THREADS M MARKERS\n");
        return 2;
    }
    atexit(peak); /* before any CUDA call: runs after trlat's exit handler */
    int nt = atoi(argv[1]);
    m = atol(argv[2]);
    long markers = atol(argv[3]);
    CUfunction marker;
    if (cuModuleGetFunction(&kernel, (CUmodule)0x1000, "trace_kernel") ||
        cuModuleGetFunction(&marker, (CUmodule)0x1000, "marker_kernel"))
        return 3;
    pthread_t *t = calloc((size_t)nt, sizeof *t);
    for (int i = 0; i < nt; i++)
        pthread_create(&t[i], NULL, thread_main, (void *)(uintptr_t)i);
    for (int i = 0; i < nt; i++)
        pthread_join(t[i], NULL);
    free(t);
    for (long i = 0; i < markers; i++)
        cuLaunchKernel(marker, (unsigned)i + 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
    return 0;
}
