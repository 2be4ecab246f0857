/* A sampling profiler for a machine without perf (docs/BENCHMARKS.md,
 * "four last hits; a sampler"): LD_PRELOAD'ed beside libtrlat.so, it samples the interrupted
 * instruction of the thread that called sampler_start(tag), every
 * SAMPLER_US microseconds of wall time (a POSIX timer delivering a signal to
 * that thread), tagging each sample with the tag; sampler_dump(path) writes
 * "tag ip" lines and /proc/self/maps after them. Python reaches the three
 * functions with ctypes.CDLL(None). A probe, not part of trlat.
 *   gcc -O2 -shared -fPIC -o libsampler.so sampler.c -lrt */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define MAX_SAMPLES (4u << 20)
static uint64_t *ips;
static uint8_t *tags;
static volatile uint32_t n;
static volatile int tag;
static timer_t timer;
static int have_timer;

static void on_sample(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)si;
    if (!tag || n >= MAX_SAMPLES)
        return;
    const ucontext_t *u = ctx;
    ips[n] = (uint64_t)u->uc_mcontext.gregs[REG_RIP];
    tags[n] = (uint8_t)tag;
    n = n + 1;
}

__attribute__((visibility("default"))) int sampler_start(int t)
{
    if (!ips) {
        ips = mmap(NULL, MAX_SAMPLES * 8ul, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        tags = mmap(NULL, MAX_SAMPLES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (ips == MAP_FAILED || tags == MAP_FAILED)
            return -1;
    }
    if (!have_timer) {
        struct sigaction sa = {0};
        sa.sa_sigaction = on_sample;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGRTMIN + 3, &sa, NULL))
            return -1;
        struct sigevent ev = {0};
        ev.sigev_notify = SIGEV_THREAD_ID;
        ev.sigev_signo = SIGRTMIN + 3;
        ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
        if (timer_create(CLOCK_MONOTONIC, &ev, &timer))
            return -1;
        long us = getenv("SAMPLER_US") ? atol(getenv("SAMPLER_US")) : 50;
        struct itimerspec it = {{0, us * 1000}, {0, us * 1000}};
        if (timer_settime(timer, 0, &it, NULL))
            return -1;
        have_timer = 1;
    }
    tag = t;
    return 0;
}

__attribute__((visibility("default"))) void sampler_stop(void)
{
    tag = 0;
}

__attribute__((visibility("default"))) int sampler_dump(const char *path)
{
    tag = 0;
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        fprintf(f, "%u %llx\n", tags[i], (unsigned long long)ips[i]);
    fputs("MAPS\n", f);
    FILE *m = fopen("/proc/self/maps", "r");
    char line[4096];
    while (m && fgets(line, sizeof line, m))
        fputs(line, f);
    if (m)
        fclose(m);
    return fclose(f);
}
