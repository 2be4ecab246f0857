/* Cost of trlat's clock sources on this machine: rdtsc, rdtscp and
 * clock_gettime(CLOCK_MONOTONIC), ns per read. */
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(void)
{
    enum { N = 2000000 };
    volatile uint64_t sink = 0;
    double t0 = now();
    for (int i = 0; i < N; i++) {
        uint32_t lo, hi;
        __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
        sink += lo;
    }
    double t1 = now();
    for (int i = 0; i < N; i++) {
        uint32_t lo, hi, aux;
        __asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
        sink += lo;
    }
    double t2 = now();
    for (int i = 0; i < N; i++) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        sink += (uint64_t)t.tv_nsec;
    }
    double t3 = now();
    printf("TABLE clock_ns rdtsc %.1f rdtscp %.1f clock_gettime %.1f\n", (t1 - t0) / N, (t2 - t1) / N, (t3 - t2) / N);
    return 0;
}
