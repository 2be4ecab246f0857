/* trlat's life cycle inside a process: started on the first CUDA call that
 * passes through a wrapper (never at load: a program that does not use CUDA
 * sees nothing of trlat), reset in a forked child, reported at exit. */
#ifndef TRLAT_TRLAT_H
#define TRLAT_TRLAT_H

#include <stdint.h>

#define TRLAT_EXPORT __attribute__((visibility("default")))

/* Starts trlat if it has not started; returns 1 when it records, 0 when
 * disabled (TRLAT_DISABLE=1) or it could not start. Cheap after the first
 * call. */
int trlat_active(void);

/* A part of trlat with work at start, exit or fork (CUPTI, the Python hook,
 * the report writer). Modules register from a constructor (no work there);
 * `start` runs when trlat starts, in registration order; at exit every
 * module's `flush` runs (newest first), then every `finish` (the report
 * writer's writes the report). */
struct trlat_module {
    const char *name;
    void (*start)(void);
    void (*flush)(void);
    void (*finish)(void);
    void (*after_fork_child)(void);
};
void trlat_module_register(const struct trlat_module *m);

/* Runs the exit sequence now (flush, finish); at most once per process
 * (again in a forked child): a second call, or one while another thread
 * runs it, returns at once. Called from atexit, from the signal watcher
 * (signals.c) and from Python's atexit when the interpreter ends on an
 * uncaught KeyboardInterrupt (interpose/python/pyhook.py). */
void trlat_finish(void);

/* Time trlat started in this process (in a forked child: the fork), in ns
 * on trlat's clock. */
extern uint64_t trlat_start_ns;

#endif
