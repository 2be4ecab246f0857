/* trlat's start (lazy, on the first CUDA call through a wrapper), exit and
 * fork handling. The report is written at exit (atexit), or when a signal
 * ends the process (signals.c). */
#include "interpose/clock.h"
#include "interpose/config.h"
#include "interpose/log.h"
#include "interpose/names.h"
#include "interpose/signals.h"
#include "interpose/lifecycle.h"
#include "interpose/tstate.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static const struct trlat_module *modules[TRLAT_MAX_MODULES];
static int nmodules;
static atomic_int state; /* 0: not started, 1: recording, -1: disabled */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static atomic_int finished;
/* one report write at a time: the exit's and a checkpoint's */
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
uint64_t trlat_start_ns;

void trlat_module_register(const struct trlat_module *m)
{
    if (nmodules < TRLAT_MAX_MODULES)
        modules[nmodules++] = m;
    else
        trlat_log("more than %d modules registered; %s is left out", TRLAT_MAX_MODULES, m->name);
}

const struct trlat_module *const *trlat_modules(int *n)
{
    *n = nmodules;
    return modules;
}

void trlat_modules_kernel_loaded(void)
{
    for (int i = 0; i < nmodules; i++)
        if (modules[i]->kernel_loaded)
            modules[i]->kernel_loaded();
}

static void at_exit(void)
{
    trlat_finish();
}

void trlat_finish(void)
{
    if (atomic_exchange(&finished, 1) || atomic_load(&state) <= 0)
        return;
    trlat_signals_finish_begin();
    for (int i = nmodules - 1; i >= 0; i--)
        if (modules[i]->flush)
            modules[i]->flush();
    pthread_mutex_lock(&write_lock); /* a checkpoint's write ends first */
    for (int i = nmodules - 1; i >= 0; i--)
        if (modules[i]->finish)
            modules[i]->finish();
    pthread_mutex_unlock(&write_lock);
    trlat_signals_finish_end();
}

int trlat_report_path(char *buf, unsigned long len)
{
    int n = -1;
    pthread_mutex_lock(&write_lock); /* not while a write may change it */
    for (int i = 0; i < nmodules && n < 0; i++) {
        const char *p = modules[i]->report_path ? modules[i]->report_path() : NULL;
        size_t l = p ? strlen(p) : 0;
        if (p && l < len) {
            memcpy(buf, p, l + 1);
            n = (int)l;
        }
    }
    pthread_mutex_unlock(&write_lock);
    return n;
}

int trlat_checkpoint(void)
{
    if (atomic_load(&state) <= 0)
        return -1;
    int rc = -1;
    pthread_mutex_lock(&write_lock);
    if (!atomic_load(&finished))
        for (int i = nmodules - 1; i >= 0; i--)
            if (modules[i]->checkpoint && modules[i]->checkpoint() == 0)
                rc = 0;
    pthread_mutex_unlock(&write_lock);
    return rc;
}

static void fork_child(void)
{
    /* A child starts clean and reports under its own pid, if it launches. */
    trlat_log_reset();
    trlat_names_reset();
    trlat_tstate_after_fork_child();
    pthread_mutex_init(&write_lock, NULL); /* a thread of the parent's may have held it */
    atomic_store(&finished, 0);
    trlat_start_ns = trlat_now_ns();
    for (int i = 0; i < nmodules; i++)
        if (modules[i]->after_fork_child)
            modules[i]->after_fork_child();
    trlat_signals_after_fork_child();
}

static void start(void)
{
    trlat_config_load();
    if (trlat_config(TRLAT_OPT_DISABLE)) {
        atomic_store(&state, -1);
        return;
    }
    trlat_clock_init();
    trlat_clk.untimed = trlat_config(TRLAT_OPT_TIMING) == TRLAT_TIMING_NONE;
    trlat_clk.sampled = trlat_config(TRLAT_OPT_TIMING) == TRLAT_TIMING_SAMPLED;
    trlat_start_ns = 0;
    trlat_tstate_init();
    pthread_atfork(NULL, NULL, fork_child);
    if (atexit(at_exit) != 0)
        trlat_log("could not register the exit handler; no report will be written");
    /* Recording from here on: a module's start may itself call the driver
     * (through trlat's wrappers) without coming back here. */
    atomic_store(&state, 1);
    for (int i = 0; i < nmodules; i++)
        if (modules[i]->start)
            modules[i]->start();
    /* Last: a signal from here on finds every module started. */
    trlat_signals_start();
}

int trlat_active(void)
{
    int s = atomic_load_explicit(&state, memory_order_acquire);
    if (__builtin_expect(s != 0, 1))
        return s > 0;
    pthread_once(&once, start);
    return atomic_load(&state) > 0;
}
