#include "interpose/tstate.h"
#include "interpose/clock.h"
#include "interpose/config.h"
#include "interpose/log.h"
#include "interpose/names.h"
#include "interpose/region.h"
#include "interpose/trace.h"
#include "interpose/lifecycle.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

_Thread_local struct trlat_tstate *trlat_tls __attribute__((tls_model("initial-exec")));
_Thread_local uint64_t trlat_sample_rng __attribute__((tls_model("initial-exec")));

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct trlat_tstate *_Atomic all_states; /* push-only list, read lock-free */
static struct trlat_tstate *free_states;        /* states of exited threads, under list_lock */
static _Atomic unsigned nstates;
_Static_assert(offsetof(struct trlat_tstate, rec_gen) <= 64, "the launch path's fields fit the first cache line");

/* what every thread's state takes: TRLAT_SLOW_HOOKS once trlat_tstate_slow_all
 * ran, TRLAT_SLOW_PAUSED while profiling is paused */
static _Atomic uint32_t slow_all;
static pthread_key_t exit_key;

/* A thread exits: its state (and its counts) stay in the list for the
 * report; the next new thread adopts it, so thread churn does not grow
 * memory. */
static void on_thread_exit(void *p)
{
    struct trlat_tstate *ts = p;
    trlat_tstate_drain(ts);
    pthread_mutex_lock(&list_lock);
    ts->next_free = free_states;
    free_states = ts;
    pthread_mutex_unlock(&list_lock);
}

void trlat_tstate_init(void)
{
    pthread_key_create(&exit_key, on_thread_exit);
    trlat_trace_init();
}

void trlat_tstate_after_fork_child(void)
{
    /* The child's only thread is the one that forked. The parent's states
     * are left behind (copy-on-write pages, never touched again). */
    pthread_mutex_init(&list_lock, NULL);
    atomic_store(&all_states, NULL);
    free_states = NULL;
    atomic_store(&nstates, 0);
    trlat_tls = NULL;
    pthread_setspecific(exit_key, NULL);
    trlat_trace_after_fork_child();
}

static struct trlat_tstate *new_state(void)
{
    /* aligned: the launch path's fields share the first cache line */
    struct trlat_tstate *ts = aligned_alloc(64, (sizeof *ts + 63) & ~(size_t)63);
    if (!ts)
        return NULL;
    memset(ts, 0, sizeof *ts);
    struct trlat_tstate *head = atomic_load(&all_states);
    do
        ts->next = head;
    while (!atomic_compare_exchange_weak(&all_states, &head, ts));
    atomic_fetch_add(&nstates, 1);
    return ts;
}

struct trlat_tstate *trlat_tstate_slow(void)
{
    if (!trlat_active())
        return NULL;
    pthread_mutex_lock(&list_lock);
    struct trlat_tstate *ts = free_states;
    if (ts)
        free_states = ts->next_free;
    pthread_mutex_unlock(&list_lock);
    if (ts) {
        ts->last_exit = 0;
        ts->last_weight = 0;
        ts->last_func = NULL;
        ts->py_t0 = 0;
        ts->py_launches = 0;
        ts->py_k = NULL;
        ts->py_rec = NULL;
        ts->divert = 0; /* hooks_wanted, in_launch */
        ts->cur_t0 = 0;
        trlat_region_reset(ts);
    } else if (!(ts = new_state())) {
        static atomic_flag once;
        trlat_log_once(&once, "out of memory for a thread's launch records; launches on it are not recorded");
        return NULL;
    }
    ts->tid = (uint32_t)syscall(SYS_gettid);
    ts->native_sites = (int)trlat_config(TRLAT_OPT_STACKS);
    /* slow_all is read after the state is in the list (new_state's
     * exchange; a reused state was there) and both sides OR their bits in:
     * trlat_tstate_slow_all sets slow_all first, then walks the list, so
     * one of the two sees the other */
    uint32_t slow = ts->native_sites || trlat_trace_on() ? TRLAT_SLOW_THREAD : 0;
    __atomic_fetch_or(&ts->slow, slow | atomic_load(&slow_all), __ATOMIC_SEQ_CST);
    trlat_tls = ts;
    pthread_setspecific(exit_key, ts);
    return ts;
}

static uint32_t hash_ptr(void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (uint32_t)x;
}

static int index_grow(struct trlat_tstate *ts)
{
    uint32_t cap = ts->index_cap ? ts->index_cap * 2 : 64;
    struct trlat_ientry *ix = calloc(cap, sizeof *ix);
    if (!ix)
        return -1;
    for (uint32_t i = 0; i < ts->index_cap; i++) {
        if (!ts->index[i].key)
            continue;
        uint32_t h = hash_ptr(ts->index[i].key) & (cap - 1);
        while (ix[h].key)
            h = (h + 1) & (cap - 1);
        ix[h] = ts->index[i];
    }
    free(ts->index);
    ts->index = ix;
    ts->index_cap = cap;
    return 0;
}

static struct trlat_kslot *new_slot(struct trlat_tstate *ts, void *func)
{
    struct trlat_chunk *c = ts->tail;
    if (!c || atomic_load_explicit(&c->used, memory_order_relaxed) == TRLAT_CHUNK_SLOTS) {
        struct trlat_chunk *n = calloc(1, sizeof *n);
        if (!n)
            return NULL;
        if (c)
            atomic_store_explicit(&c->next, n, memory_order_release);
        else
            atomic_store_explicit(&ts->chunks, n, memory_order_release);
        ts->tail = c = n;
    }
    uint32_t u = atomic_load_explicit(&c->used, memory_order_relaxed);
    struct trlat_kslot *k = &c->slots[u];
    k->func = func;
    k->name = trlat_name_of(func);
    atomic_store_explicit(&c->used, u + 1, memory_order_release);
    ts->nslots++;
    return k;
}

/* First launch of func on this thread (or a switch between kernels). */
struct trlat_kslot *trlat_kslot_slow(struct trlat_tstate *ts, void *func)
{
    struct trlat_kslot *k = NULL;
    if (ts->index_cap) {
        uint32_t h = hash_ptr(func) & (ts->index_cap - 1);
        while (ts->index[h].key) {
            if (ts->index[h].key == func) {
                k = ts->index[h].slot;
                goto found;
            }
            h = (h + 1) & (ts->index_cap - 1);
        }
    }
    if (ts->nslots >= TRLAT_MAX_SLOTS_PER_THREAD || (2 * (ts->nslots + 1) > ts->index_cap && index_grow(ts)) ||
        !(k = new_slot(ts, func))) {
        static atomic_flag once;
        trlat_log_once(&once,
                       "more distinct kernels than trlat keeps per thread (%d); the rest are counted as \"(other)\"",
                       TRLAT_MAX_SLOTS_PER_THREAD);
        k = &ts->overflow;
        goto found; /* not cached: keep looking up new kernels */
    }
    uint32_t h = hash_ptr(func) & (ts->index_cap - 1);
    while (ts->index[h].key)
        h = (h + 1) & (ts->index_cap - 1);
    ts->index[h].key = func;
    ts->index[h].slot = k;
found:
    if (k != &ts->overflow) {
        ts->last_func = func;
        ts->last_slot = k;
    }
    return k;
}

void trlat_tstate_drain(struct trlat_tstate *ts)
{
    uint32_t n = ts->nrec;
    if (n == 0)
        return;
    atomic_fetch_add_explicit(&ts->rec_gen, 1, memory_order_acq_rel);
    if (ts->py_rec) { /* an open call's first launch: its return is timed from its slot */
        ts->py_k = trlat_kslot_get(ts, ts->py_rec->func);
        ts->py_t1 = ts->py_rec->t1;
        ts->py_rec = NULL;
    }
    struct trlat_rec_last last = {ts->last_exit, ts->last_weight};
    for (uint32_t i = 0; i < n; i++) {
        const struct trlat_rec *r = &ts->recs[i];
        struct trlat_kslot *k = trlat_kslot_get(ts, r->func);
        uint64_t site = trlat_rec_site(r->site);
        unsigned region = trlat_rec_region(r->site);
        if (site || region) {
            struct trlat_rec_ns ns = trlat_rec_ns(r, &last);
            if (site)
                trlat_kslot_add_site(k, site, TRLAT_SITE_PYTHON, ns.gap, ns.py + ns.ret);
            if (region && ts->rs)
                trlat_region_add(&ts->rs->stats[region], &ns);
        }
        if (!trlat_rec_times(r, &last, &k->driver, &k->gap, &k->py, &k->ret, &k->weighted))
            TRLAT_WR(k->untimed, TRLAT_RD(k->untimed) + 1);
    }
    TRLAT_WR(ts->last_weight, last.weight);
    TRLAT_WR(ts->last_exit, last.t1);
    TRLAT_WR(ts->nrec, 0);
    atomic_fetch_add_explicit(&ts->rec_gen, 1, memory_order_release);
}

/* trlat_rec_times for a sampled hit's record (weight > 1) or the record after
 * one (its gap weighs as much): out of line, the common case stays as it
 * was before sampling. */
int trlat_rec_times_weighted(const struct trlat_rec *r, struct trlat_rec_last *last, struct trlat_stat *driver,
                             struct trlat_stat *gap, struct trlat_stat *py, struct trlat_stat *ret, uint64_t *weighted)
{
    uint64_t w = trlat_rec_weight(r->site), gw = w * (last->weight ? last->weight : 1);
    TRLAT_WR(*weighted, TRLAT_RD(*weighted) + (w - 1));
    trlat_rec_add_times(r, last, driver, gap, py, ret, w, gw);
    last->t1 = r->t1;
    last->weight = r->site >> TRLAT_SITE_WEIGHT_SHIFT;
    return 1;
}

uint32_t trlat_tstate_pending(const struct trlat_tstate *ts, struct trlat_rec *out, struct trlat_rec_last *last)
{
    for (int tries = 0; tries < 100; tries++) {
        uint64_t g0 = atomic_load_explicit(&((struct trlat_tstate *)ts)->rec_gen, memory_order_acquire);
        if (g0 & 1)
            continue;
        uint32_t n = TRLAT_RD(ts->nrec);
        if (n > TRLAT_REC_BATCH)
            n = TRLAT_REC_BATCH;
        for (uint32_t i = 0; i < n; i++) {
            out[i].func = TRLAT_RD(ts->recs[i].func);
            out[i].t0 = TRLAT_RD(ts->recs[i].t0);
            out[i].t1 = TRLAT_RD(ts->recs[i].t1);
            out[i].py_t0 = TRLAT_RD(ts->recs[i].py_t0);
            out[i].site = TRLAT_RD(ts->recs[i].site);
            out[i].ret = TRLAT_RD(ts->recs[i].ret);
        }
        last->t1 = TRLAT_RD(ts->last_exit);
        last->weight = TRLAT_RD(ts->last_weight);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&((struct trlat_tstate *)ts)->rec_gen, memory_order_relaxed) == g0)
            return n;
    }
    return 0;
}

void trlat_kslot_add_site(struct trlat_kslot *k, uint64_t site, int kind, uint64_t gap_ns, uint64_t triton_ns)
{
    for (int i = 0; i < TRLAT_MAX_SITES; i++) {
        struct trlat_site *s = &k->sites[i];
        uint64_t id = TRLAT_RD(s->id);
        if (id == site || id == 0) {
            TRLAT_WR(s->launches, TRLAT_RD(s->launches) + 1);
            TRLAT_WR(s->gap_ns, TRLAT_RD(s->gap_ns) + gap_ns);
            TRLAT_WR(s->triton_ns, TRLAT_RD(s->triton_ns) + triton_ns);
        }
        if (id == site)
            return;
        if (id == 0) {
            TRLAT_WR(s->id, site);
            TRLAT_WR(k->site_kind, kind);
            return;
        }
    }
    TRLAT_WR(k->other_sites, TRLAT_RD(k->other_sites) + 1);
    TRLAT_WR(k->other_gap_ns, TRLAT_RD(k->other_gap_ns) + gap_ns);
    TRLAT_WR(k->other_triton_ns, TRLAT_RD(k->other_triton_ns) + triton_ns);
}

void trlat_kslot_add_lib(struct trlat_kslot *k, uint64_t site, uint64_t lib_ns)
{
    for (int i = 0; i < TRLAT_MAX_SITES; i++) {
        struct trlat_site *s = &k->sites[i];
        uint64_t id = TRLAT_RD(s->id);
        if (id == site || id == 0) {
            TRLAT_WR(s->lib_ns, TRLAT_RD(s->lib_ns) + lib_ns);
            if (id == 0) {
                TRLAT_WR(s->id, site);
                TRLAT_WR(k->site_kind, TRLAT_SITE_PYTHON);
            }
            return;
        }
    }
    TRLAT_WR(k->other_lib_ns, TRLAT_RD(k->other_lib_ns) + lib_ns);
}

void trlat_stat_snapshot(struct trlat_stat *dst, const struct trlat_stat *src)
{
    dst->count = TRLAT_RD(src->count);
    dst->sum = TRLAT_RD(src->sum);
    dst->min = TRLAT_RD(src->min);
    dst->max = TRLAT_RD(src->max);
    uint64_t n = 0;
    for (unsigned i = 0; i < TRLAT_HIST_BUCKETS; i++)
        n += dst->hist[i] = TRLAT_RD(src->hist[i]);
    dst->count = n; /* the histogram is the truth if a launch was mid-update */
}

void trlat_tstate_foreach_thread(void (*fn)(const struct trlat_tstate *ts, void *arg), void *arg)
{
    for (struct trlat_tstate *ts = atomic_load(&all_states); ts; ts = ts->next)
        fn(ts, arg);
}

void trlat_tstate_foreach(trlat_slot_fn fn, void *arg)
{
    for (struct trlat_tstate *ts = atomic_load(&all_states); ts; ts = ts->next) {
        struct trlat_chunk *c = atomic_load_explicit(&ts->chunks, memory_order_acquire);
        for (; c; c = atomic_load_explicit(&c->next, memory_order_acquire)) {
            uint32_t used = atomic_load_explicit(&c->used, memory_order_acquire);
            for (uint32_t i = 0; i < used; i++)
                fn(ts, &c->slots[i], arg);
        }
        if (TRLAT_RD(ts->overflow.driver.count) || TRLAT_RD(ts->overflow.untimed))
            fn(ts, &ts->overflow, arg);
    }
}

void trlat_tstate_slow_all(void)
{
    atomic_fetch_or(&slow_all, TRLAT_SLOW_HOOKS);
    for (struct trlat_tstate *ts = atomic_load(&all_states); ts; ts = ts->next)
        __atomic_fetch_or(&ts->slow, TRLAT_SLOW_HOOKS, __ATOMIC_SEQ_CST);
}

int trlat_tstate_set_paused(int paused)
{
    uint32_t was;
    if (paused)
        was = atomic_fetch_or(&slow_all, TRLAT_SLOW_PAUSED);
    else
        was = atomic_fetch_and(&slow_all, ~(uint32_t)TRLAT_SLOW_PAUSED);
    for (struct trlat_tstate *ts = atomic_load(&all_states); ts; ts = ts->next)
        if (paused)
            __atomic_fetch_or(&ts->slow, TRLAT_SLOW_PAUSED, __ATOMIC_SEQ_CST);
        else
            __atomic_fetch_and(&ts->slow, ~(uint32_t)TRLAT_SLOW_PAUSED, __ATOMIC_SEQ_CST);
    return (was & TRLAT_SLOW_PAUSED) != 0;
}

unsigned trlat_tstate_count(void)
{
    return atomic_load(&nstates);
}
