/* The report when SIGTERM, SIGINT, SIGHUP or SIGQUIT ends the process
 * (signals.h). Each signal's disposition is looked at once, when trlat
 * starts: ignored, it is left alone; the default action (terminate), trlat's
 * handler takes it, has the report written and re-raises; a handler the
 * program installed earlier, trlat's handler calls it with the same
 * arguments, under the program's mask and flags, and does nothing else (if
 * the program then exits, atexit writes the report). A handler the program
 * installs after trlat's start replaces trlat's, and the program decides.
 *
 * The handler only does async-signal-safe work: it wakes the watcher (a
 * thread made at start, every signal blocked in it so that the kernel never
 * picks it, sleeping in sem_wait) which runs trlat_finish, and polls for the
 * report with nanosleep for at most TRLAT_SIGNAL_WAIT_MS. The bound ends the
 * process as it would have ended when the watcher cannot finish (the signal
 * interrupted a thread holding a lock the report needs, malloc's say), and
 * when the report is being written on another thread at exit. On the thread
 * writing the report itself the signal is held (the handler returns) and
 * re-raised once the report is out; the watcher ends the process if that
 * takes longer than the bound. The launch path never sees any of this. */
#include "interpose/signals.h"
#include "interpose/log.h"
#include "interpose/lifecycle.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
#define NSIGS ((int)(sizeof sigs / sizeof *sigs))

/* The program's handler of sigs[i] when trlat started, when chained[i]. */
static struct sigaction prev[NSIGS];
static int chained[NSIGS];

static sem_t wake;
static atomic_int watcher_up; /* a watcher runs in this process */
static atomic_int woken;      /* it was woken for a signal */
static atomic_int done;       /* trlat_finish has run to its end */
static atomic_int held;       /* a signal that arrived on the thread writing the report */
static _Thread_local int writing __attribute__((tls_model("initial-exec")));

/* Polls until the report is out or TRLAT_SIGNAL_WAIT_MS have passed. */
static void wait_done(void)
{
    struct timespec now, end, tick = {0, 1000000};
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += TRLAT_SIGNAL_WAIT_MS / 1000;
    end.tv_nsec += (TRLAT_SIGNAL_WAIT_MS % 1000) * 1000000L;
    if (end.tv_nsec >= 1000000000L) {
        end.tv_sec++;
        end.tv_nsec -= 1000000000L;
    }
    while (!atomic_load(&done)) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
            return;
        nanosleep(&tick, NULL);
    }
}

static void set_default(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
}

/* The signal's default action, as without trlat: the process ends by it. */
static void die(int sig)
{
    set_default(sig);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    pthread_sigmask(SIG_UNBLOCK, &s, NULL);
    raise(sig);
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    int saved_errno = errno;
    int i = 0;
    while (i < NSIGS && sigs[i] != sig)
        i++;
    if (i < NSIGS && chained[i]) {
        if (prev[i].sa_flags & SA_SIGINFO)
            prev[i].sa_sigaction(sig, si, uc);
        else
            prev[i].sa_handler(sig);
        errno = saved_errno;
        return;
    }
    if (!atomic_load(&done) && atomic_load(&watcher_up)) {
        if (writing) { /* interrupted trlat_finish: it re-raises when done */
            int none = 0;
            if (atomic_compare_exchange_strong(&held, &none, sig))
                sem_post(&wake); /* the watcher keeps the bound */
            errno = saved_errno;
            return;
        }
        if (!atomic_exchange(&woken, 1))
            sem_post(&wake);
        wait_done();
    }
    die(sig);
    errno = saved_errno;
}

static void *watch(void *unused)
{
    for (;;) {
        while (sem_wait(&wake) != 0 && errno == EINTR)
            ;
        trlat_finish(); /* returns at once when another thread writes it */
        int sig = atomic_load(&held);
        if (sig) {
            wait_done();
            if (!atomic_load(&done)) { /* the writer is stuck: end as without trlat */
                set_default(sig);
                kill(getpid(), sig);
            }
        }
    }
    return NULL;
}

static int start_watcher(void)
{
    if (sem_init(&wake, 0, 0) != 0)
        return -1;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* inherited by the thread */
    pthread_attr_t attr;
    pthread_t t;
    int rc = pthread_attr_init(&attr);
    if (rc == 0) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        rc = pthread_create(&t, &attr, watch, NULL);
        pthread_attr_destroy(&attr);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return -1;
    pthread_setname_np(t, "trlat-signal");
    atomic_store(&watcher_up, 1);
    return 0;
}

static void take(int i)
{
    struct sigaction old, act, cur;
    if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
        return;
    memset(&act, 0, sizeof act);
    act.sa_sigaction = on_signal;
    if (old.sa_handler == SIG_DFL) {
        /* the others blocked meanwhile: one report, one signal ends it */
        sigemptyset(&act.sa_mask);
        for (int j = 0; j < NSIGS; j++)
            sigaddset(&act.sa_mask, sigs[j]);
        act.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    } else {
        prev[i] = old;
        chained[i] = 1;
        act.sa_mask = old.sa_mask;
        act.sa_flags = old.sa_flags | SA_SIGINFO;
    }
    if (sigaction(sigs[i], &act, &cur) == 0 && cur.sa_handler != old.sa_handler)
        sigaction(sigs[i], &cur, NULL); /* the program changed it meanwhile: its own stays */
}

void trlat_signals_start(void)
{
    if (start_watcher() != 0) {
        trlat_log("could not start a thread to write the report on a signal; a SIGTERM, SIGINT, SIGHUP or "
                  "SIGQUIT that ends the process writes none");
        return;
    }
    for (int i = 0; i < NSIGS; i++)
        take(i);
}

void trlat_signals_after_fork_child(void)
{
    atomic_store(&woken, 0);
    atomic_store(&done, 0);
    atomic_store(&held, 0);
    writing = 0;
    if (atomic_exchange(&watcher_up, 0) && start_watcher() != 0)
        trlat_log("could not start a thread to write the report on a signal in a forked child; a signal that "
                  "ends it writes none");
}

void trlat_signals_finish_begin(void)
{
    writing = 1;
}

void trlat_signals_finish_end(void)
{
    atomic_store(&done, 1);
    writing = 0;
    int sig = atomic_exchange(&held, 0);
    if (sig)
        die(sig);
}
