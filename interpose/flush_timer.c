/* TRLAT_FLUSH_S=N: a thread of trlat's writes the report every N seconds
 * (trlat_checkpoint), so that a process that ends without exit's handlers
 * (os._exit in a multiprocessing child, SIGKILL, a launcher's hard stop)
 * leaves what it recorded until its last checkpoint. Every signal is
 * blocked in the thread; it is made again in a forked child. */
#include "interpose/config.h"
#include "interpose/lifecycle.h"
#include "interpose/log.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static void *timer(void *arg)
{
    struct timespec each = {(time_t)(long)(intptr_t)arg, 0};
    for (;;) {
        struct timespec left = each;
        while (nanosleep(&left, &left) != 0)
            ; /* EINTR: the rest of the interval */
        trlat_checkpoint();
    }
    return NULL;
}

static void start_timer(void)
{
    long s = trlat_config(TRLAT_OPT_FLUSH_S);
    if (s <= 0)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread inherits the mask */
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &a, timer, (void *)(intptr_t)s);
    pthread_attr_destroy(&a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        static atomic_flag once;
        trlat_log_once(&once,
                       "TRLAT_FLUSH_S=%ld: no thread for the periodic report (%s); the report is written at "
                       "exit only",
                       s, strerror(rc));
    }
}

static const struct trlat_module flush_module = {
    .name = "flush-timer", .start = start_timer, .after_fork_child = start_timer};

__attribute__((constructor)) static void register_flush_timer(void)
{
    trlat_module_register(&flush_module);
}
