/* Launches at the scale of real jobs on the fake driver, for
 * tests/integration/test_scale.sh:
 *   scale kernels K L        K distinct kernels, each launched L times
 *   scale modules M          M modules loaded, one kernel from each, launched
 *   scale threads T          T short-lived threads (64 at a time), one launch each
 *   scale launches N         N launches of one kernel
 *   scale mt T N             T threads at once, N launches each
 * Prints the number of launches it made on stdout and, at the very end of
 * the process (trlat's report written), its peak RSS on stderr. */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long per_thread;
static CUfunction shared_fn;

/* Registered before the first CUDA call starts trlat, so it runs after
 * trlat's exit handler: VmHWM then includes writing the report. */
static void print_peak_rss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            fprintf(stderr, "peak_rss_kb %ld\n", atol(line + 6));
    if (f)
        fclose(f);
}

static CUfunction get(CUmodule m, const char *name)
{
    CUfunction f = NULL;
    if (cuModuleGetFunction(&f, m, name) != CUDA_SUCCESS || !f) {
        fprintf(stderr, "scale: no handle for %s\n", name);
        exit(2);
    }
    return f;
}

static void launch(CUfunction f)
{
    if (cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS) {
        fprintf(stderr, "scale: launch failed\n");
        exit(2);
    }
}

static void *one_launch(void *arg)
{
    launch(shared_fn);
    return NULL;
}

static void *many_launches(void *arg)
{
    for (long i = 0; i < per_thread; i++)
        launch(shared_fn);
    return NULL;
}

static void run_threads(long total, long at_once, void *(*body)(void *))
{
    pthread_t t[64];
    for (long done = 0; done < total;) {
        long n = total - done < at_once ? total - done : at_once;
        for (long i = 0; i < n; i++)
            if (pthread_create(&t[i], NULL, body, NULL) != 0) {
                fprintf(stderr, "scale: pthread_create failed\n");
                exit(2);
            }
        for (long i = 0; i < n; i++)
            pthread_join(t[i], NULL);
        done += n;
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: scale kernels K L | modules M | threads T | launches N | mt T N\n");
        return 2;
    }
    const char *mode = argv[1];
    long a = atol(argv[2]), b = argc > 3 ? atol(argv[3]) : 1, launches = 0;
    char name[64];
    atexit(print_peak_rss);
    cuInit(0);
    if (!strcmp(mode, "kernels")) {
        CUfunction *f = calloc((size_t)a, sizeof *f);
        if (!f)
            return 2;
        for (long i = 0; i < a; i++) {
            snprintf(name, sizeof name, "scale_kernel_%ld", i);
            f[i] = get((CUmodule)0x1000, name);
        }
        for (long r = 0; r < b; r++)
            for (long i = 0; i < a; i++, launches++)
                launch(f[i]);
        free(f);
    } else if (!strcmp(mode, "modules")) {
        for (long i = 0; i < a; i++, launches++) {
            CUmodule m;
            if (cuModuleLoadData(&m, "fake image") != CUDA_SUCCESS)
                return 2;
            snprintf(name, sizeof name, "module_%ld_kernel", i);
            launch(get(m, name));
        }
    } else if (!strcmp(mode, "threads")) {
        shared_fn = get((CUmodule)0x1000, "thread_kernel");
        run_threads(a, 64, one_launch);
        launches = a;
    } else if (!strcmp(mode, "launches")) {
        CUfunction f = get((CUmodule)0x1000, "loop_kernel");
        for (; launches < a; launches++)
            launch(f);
    } else if (!strcmp(mode, "mt")) {
        if (a > 64)
            return 2;
        shared_fn = get((CUmodule)0x1000, "mt_kernel");
        per_thread = b;
        run_threads(a, a, many_launches);
        launches = a * b;
    } else {
        fprintf(stderr, "scale: unknown mode %s\n", mode);
        return 2;
    }
    printf("%ld\n", launches);
    return 0;
}
