/* trlat's life cycle inside a process: started on the first CUDA call that
 * passes through a wrapper (never at load: a program that does not use CUDA
 * sees nothing of trlat), reset in a forked child, reported at exit. */
#ifndef TRLAT_LIFECYCLE_H
#define TRLAT_LIFECYCLE_H

#include <stdint.h>

#define TRLAT_EXPORT __attribute__((visibility("default")))

/* Starts trlat if it has not started; returns 1 when it records, 0 when
 * disabled (TRLAT_DISABLE=1) or it could not start. Cheap after the first
 * call. */
int trlat_active(void);

struct trlat_pymemo;    /* interpose/python/pyhook.h */
struct trlat_tmap_call; /* interpose/tmap.h */

/* A part of trlat with work at start, exit or fork (CUPTI, the Python hook,
 * the fast path, the report writer), and the one way a lower part reaches a
 * higher one (README's layout table): what a module offers is a member
 * here, looked up through the table, never a weak symbol or a global
 * function pointer. Modules register from a constructor (no work there);
 * `start` runs when trlat starts, in registration order; at exit every
 * module's `flush` runs (newest first), then every `finish` (the report
 * writer's writes the report); a `checkpoint` (trlat_checkpoint) writes
 * what was recorded so far, the process going on. */
struct trlat_module {
    const char *name;
    void (*start)(void);
    void (*flush)(void);
    void (*finish)(void);
    /* 0, or -1 when nothing was written */
    int (*checkpoint)(void);
    /* the report's path once written, else NULL */
    const char *(*report_path)(void);
    void (*after_fork_child)(void);
    /* a kernel handle was just made (interpose/handles.c; the driver's
     * locks not held): the Python hook's cue to look for Triton again */
    void (*kernel_loaded)(void);
    /* the fast path's side of a hooked Triton call, for the Python hook */
    const struct trlat_pymemo *pymemo;
    /* the fast path switched on (1) or off (0) at run time: the state
     * before, or -1 when it did not start in this process */
    int (*set_fastpath)(int on);
    /* cuTensorMapEncodeTiled succeeded on this thread (the driver's locks
     * not held) */
    void (*tmap_encoded)(const struct trlat_tmap_call *c);
};
#define TRLAT_MAX_MODULES 12
void trlat_module_register(const struct trlat_module *m);
/* The registered modules, in registration order; *n of them. */
const struct trlat_module *const *trlat_modules(int *n);
/* Calls every module's kernel_loaded. */
void trlat_modules_kernel_loaded(void);

/* Runs the exit sequence now (flush, finish); at most once per process
 * (again in a forked child): a second call, or one while another thread
 * runs it, returns at once. Called from atexit, from the signal watcher
 * (signals.c) and from Python's atexit when the interpreter ends on an
 * uncaught KeyboardInterrupt (interpose/python/pyhook.py). */
void trlat_finish(void);

/* Writes the report of what was recorded so far (TRLAT_FLUSH_S's timer,
 * trlat_api_flush), replacing the last one; the exit's report replaces it
 * in turn. Serialized with itself and with trlat_finish; nothing once that
 * has run. 0, or -1 when no report was written (none launched yet, the
 * exit's already written, or the write failed). Never on the launch path. */
int trlat_checkpoint(void);
/* The report's path once written in this process, copied into buf: its
 * length, or -1 when none was written yet or it does not fit. */
int trlat_report_path(char *buf, unsigned long len);

/* Time trlat started in this process (in a forked child: the fork), in ns
 * on trlat's clock. */
extern uint64_t trlat_start_ns;

#endif
