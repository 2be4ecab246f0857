#include "interpose/cupti/joinring.h"
#include "interpose/clock.h"
#include "interpose/log.h"
#include "interpose/tstate.h"

#include <pthread.h>
#include <stdlib.h>

_Thread_local struct trlat_joinring *trlat_joinring_tls __attribute__((tls_model("initial-exec")));

static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static struct trlat_joinring *_Atomic rings; /* push-only list, read lock-free by the drainer */
static struct trlat_joinring *free_rings;    /* rings of exited threads, under free_lock */
static _Atomic unsigned nrings;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

/* A thread exits: its ring stays in the list (the drainer still empties
 * it) and is handed to the next thread that needs one. */
static void on_thread_exit(void *p)
{
    struct trlat_joinring *r = p;
    trlat_joinring_tls = NULL;
    pthread_mutex_lock(&free_lock);
    r->next_free = free_rings;
    free_rings = r;
    pthread_mutex_unlock(&free_lock);
}

static void make_key(void)
{
    pthread_key_create(&exit_key, on_thread_exit);
}

struct trlat_joinring *trlat_joinring_slow(void)
{
    pthread_once(&key_once, make_key);
    pthread_mutex_lock(&free_lock);
    struct trlat_joinring *r = free_rings;
    if (r)
        free_rings = r->next_free;
    pthread_mutex_unlock(&free_lock);
    if (!r) {
        if (!(r = calloc(1, sizeof *r))) {
            static atomic_flag once;
            trlat_log_once(&once, "out of memory for a thread's CUPTI launch callbacks; its kernels are not joined");
            return NULL;
        }
        struct trlat_joinring *head = atomic_load(&rings);
        do
            r->next = head;
        while (!atomic_compare_exchange_weak(&rings, &head, r));
        atomic_fetch_add(&nrings, 1);
    }
    r->next_free = NULL;
    trlat_joinring_tls = r;
    pthread_setspecific(exit_key, r);
    return r;
}

void trlat_joinring_drain(struct trlat_gpu_stats *g)
{
    for (struct trlat_joinring *r = atomic_load(&rings); r; r = r->next) {
        uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
        uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
        for (; t != h; t++) {
            const struct trlat_join_rec *e = &r->rec[t & (TRLAT_JOINRING_CAP - 1)];
            if (e->kind == TRLAT_JOIN_TRLAT)
                trlat_gpu_stats_trlat(g, e->corr, trlat_launch_corr(e->t));
            else
                trlat_gpu_stats_other(g, e->corr, trlat_ticks_to_time(e->t));
        }
        atomic_store_explicit(&r->tail, t, memory_order_release);
        uint64_t lost = atomic_load_explicit(&r->lost, memory_order_relaxed);
        if (lost != r->lost_folded) {
            trlat_gpu_stats_lost_join(g, lost - r->lost_folded);
            r->lost_folded = lost;
        }
    }
}

unsigned trlat_joinring_count(void)
{
    return atomic_load(&nrings);
}

void trlat_joinring_after_fork_child(void)
{
    pthread_mutex_init(&free_lock, NULL);
}
