#include "interpose/cupti/gpu_stats.h"
#include "interpose/hash.h"
#include "interpose/cupti/corrmap.h"

#include <stdlib.h>
#include <string.h>

#define NO_START UINT64_MAX
#define OTHER_NAME "(other)"
#define PTR_CACHE 256

/* A kernel on its way through the fold. */
struct item {
    uint64_t start, end;
    uint32_t corr, kernel, device, stream;
};

/* A folded kernel whose launch record has not arrived: its idle intervals
 * wait for the launch time that decides whether they were starvation. */
struct pending {
    struct item it;
    uint64_t dev_idle_from, dev_idle; /* dev_idle 0: none */
    uint64_t st_idle_from, st_idle;
};

struct launch {
    uint64_t start; /* another call entered the driver; NO_START: none */
    uint64_t ext;   /* trlat's driver entry time; 0: not launched through trlat */
};

struct device {
    struct item *heap; /* min-heap by start, `window` items */
    uint32_t n;
    int seen;
    uint64_t max_end, last_start;
};

struct stream_state {
    uint64_t key; /* (device << 32 | stream) + 1; 0 empty */
    uint64_t max_end;
};

struct trlat_gpu_stats {
    struct trlat_gpu_limits lim;
    struct trlat_corrmap launches, waiting;
    struct launch *launch;
    struct pending *pending;
    struct device dev[TRLAT_GPU_MAX_DEVICES];
    struct stream_state *streams;
    uint32_t nstreams, smask;
    struct trlat_gpu_kstat **k;
    uint32_t nk, kcap;
    uint32_t *names; /* open addressing on name hash: kernel index + 1 */
    uint32_t nmask;
    uint32_t other; /* index of "(other)" + 1 */
    struct {
        const char *p;
        uint32_t kernel;
    } cache[PTR_CACHE];
    struct trlat_gpu_event *ev;
    uint64_t ev_next;
    uint32_t ev_cap;
    struct trlat_gpu_totals t;
};

void trlat_gpu_limits_default(struct trlat_gpu_limits *l)
{
    *l = (struct trlat_gpu_limits){
        .api_cap = 1u << 16,
        .pending_cap = 1u << 14,
        .window = 1u << 15,
        .max_kernels = 4096,
        .max_streams = 4096,
        .events = 0,
    };
}

static uint32_t pow2(uint32_t n)
{
    uint32_t c = 16;
    while (c < n && c < (1u << 30))
        c <<= 1;
    return c;
}

struct trlat_gpu_stats *trlat_gpu_stats_new(const struct trlat_gpu_limits *l)
{
    struct trlat_gpu_stats *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->lim = *l;
    if (g->lim.window < 1)
        g->lim.window = 1;
    if (g->lim.max_kernels < 1)
        g->lim.max_kernels = 1;
    g->kcap = g->lim.max_kernels + 1; /* + "(other)" */
    g->nmask = pow2(2 * g->kcap) - 1;
    g->smask = pow2(2 * g->lim.max_streams) - 1;
    g->ev_cap = 3 * g->lim.events; /* a kernel, and its device and stream starvation */
    if (trlat_corrmap_init(&g->launches, g->lim.api_cap) || trlat_corrmap_init(&g->waiting, g->lim.pending_cap))
        goto fail;
    g->launch = calloc(g->launches.cap, sizeof *g->launch);
    g->pending = calloc(g->waiting.cap, sizeof *g->pending);
    g->k = calloc(g->kcap, sizeof *g->k);
    g->names = calloc((size_t)g->nmask + 1, sizeof *g->names);
    g->streams = calloc((size_t)g->smask + 1, sizeof *g->streams);
    if (g->ev_cap)
        g->ev = calloc(g->ev_cap, sizeof *g->ev);
    if (!g->launch || !g->pending || !g->k || !g->names || !g->streams || (g->ev_cap && !g->ev))
        goto fail;
    return g;
fail:
    trlat_gpu_stats_free(g);
    return NULL;
}

void trlat_gpu_stats_free(struct trlat_gpu_stats *g)
{
    if (!g)
        return;
    trlat_corrmap_free(&g->launches);
    trlat_corrmap_free(&g->waiting);
    free(g->launch);
    free(g->pending);
    for (uint32_t i = 0; i < g->nk; i++) {
        free(g->k[i]->name);
        free(g->k[i]);
    }
    free(g->k);
    free(g->names);
    free(g->streams);
    free(g->ev);
    for (int d = 0; d < TRLAT_GPU_MAX_DEVICES; d++)
        free(g->dev[d].heap);
    free(g);
}

/* ---- kernel names ---- */

static uint32_t add_name(struct trlat_gpu_stats *g, const char *name, uint32_t h)
{
    struct trlat_gpu_kstat *k = calloc(1, sizeof *k);
    if (!k || !(k->name = strdup(name))) {
        free(k);
        return UINT32_MAX;
    }
    uint32_t i = g->nk++;
    g->k[i] = k;
    uint32_t p = h & g->nmask;
    while (g->names[p])
        p = (p + 1) & g->nmask;
    g->names[p] = i + 1;
    return i;
}

static uint32_t kernel_index(struct trlat_gpu_stats *g, const char *name)
{
    if (!name || !*name)
        name = "(unnamed)";
    /* CUPTI shares one name string among a kernel's records. */
    uint32_t c = (uint32_t)(((uintptr_t)name >> 4) & (PTR_CACHE - 1));
    if (g->cache[c].p == name && strcmp(g->k[g->cache[c].kernel]->name, name) == 0)
        return g->cache[c].kernel;
    uint32_t h = (uint32_t)trlat_hash_str(name), i = UINT32_MAX;
    for (uint32_t p = h & g->nmask; g->names[p]; p = (p + 1) & g->nmask)
        if (strcmp(g->k[g->names[p] - 1]->name, name) == 0) {
            i = g->names[p] - 1;
            break;
        }
    if (i == UINT32_MAX && g->nk < g->lim.max_kernels)
        i = add_name(g, name, h);
    if (i == UINT32_MAX) { /* too many names, or no memory */
        if (!g->other)
            g->other = add_name(g, OTHER_NAME, (uint32_t)trlat_hash_str(OTHER_NAME)) + 1;
        if (!g->other)
            return UINT32_MAX;
        g->t.other_names++;
        return g->other - 1;
    }
    g->cache[c].p = name;
    g->cache[c].kernel = i;
    return i;
}

/* ---- events ---- */

static void event(struct trlat_gpu_stats *g, const struct trlat_gpu_event *e)
{
    if (g->ev_cap)
        g->ev[g->ev_next++ % g->ev_cap] = *e;
}

void trlat_gpu_stats_events(const struct trlat_gpu_stats *g, void (*fn)(const struct trlat_gpu_event *e, void *arg),
                            void *arg)
{
    uint64_t from = g->ev_next > g->ev_cap ? g->ev_next - g->ev_cap : 0;
    for (uint64_t i = from; i < g->ev_next; i++)
        fn(&g->ev[i % g->ev_cap], arg);
}

/* ---- the join ---- */

static void count_launch(struct trlat_gpu_stats *g, struct trlat_gpu_kstat *k, const struct launch *l)
{
    if (!l) {
        k->unjoined++;
        g->t.unjoined++;
    } else if (l->ext) {
        k->driver++;
        g->t.joined_trlat++;
    } else {
        k->other++;
    }
}

/* A kernel meets its launch record (l NULL: it never will). */
static void resolve(struct trlat_gpu_stats *g, const struct pending *p, const struct launch *l)
{
    struct trlat_gpu_kstat *k = g->k[p->it.kernel];
    int driver = l && l->ext;
    count_launch(g, k, l);
    uint64_t t0 = !l ? 0 : driver ? l->ext : l->start;
    struct trlat_gpu_event e = {.kind = TRLAT_GPU_EV_KERNEL,
                                .driver = (uint8_t)driver,
                                .kernel = p->it.kernel,
                                .device = p->it.device,
                                .stream = p->it.stream,
                                .corr = p->it.corr,
                                .start = p->it.start,
                                .end = p->it.end,
                                .ext = driver ? l->ext : 0};
    event(g, &e);
    if (p->dev_idle && p->dev_idle_from < t0) {
        k->starved_ns += p->dev_idle;
        k->starved_launches++;
        g->t.starved_ns += p->dev_idle;
        g->t.starved_launches++;
        e.kind = TRLAT_GPU_EV_STARVED_DEVICE;
        e.start = p->dev_idle_from;
        e.end = p->it.start;
        event(g, &e);
    }
    if (p->st_idle && p->st_idle_from < t0) {
        k->stream_starved_ns += p->st_idle;
        k->stream_starved_launches++;
        g->t.stream_starved_ns += p->st_idle;
        e.kind = TRLAT_GPU_EV_STARVED_STREAM;
        e.start = p->st_idle_from;
        e.end = p->it.start;
        event(g, &e);
    }
}

static struct launch *find_launch(struct trlat_gpu_stats *g, uint32_t corr)
{
    uint32_t cur = 0, s = trlat_corrmap_find(&g->launches, corr, &cur);
    return s == TRLAT_CORRMAP_NONE ? NULL : &g->launch[s];
}

static void wait_for_launch(struct trlat_gpu_stats *g, const struct pending *p)
{
    uint32_t s = trlat_corrmap_next(&g->waiting);
    if (g->waiting.live[s]) { /* full: the oldest gives up waiting */
        struct pending old = g->pending[s];
        trlat_corrmap_remove(&g->waiting, s);
        resolve(g, &old, NULL);
    }
    s = trlat_corrmap_insert(&g->waiting, p->it.corr);
    g->pending[s] = *p;
}

static void wake_waiting(struct trlat_gpu_stats *g, uint32_t corr, const struct launch *l)
{
    for (;;) {
        uint32_t cur = 0, s = trlat_corrmap_find(&g->waiting, corr, &cur);
        if (s == TRLAT_CORRMAP_NONE)
            return;
        struct pending p = g->pending[s];
        trlat_corrmap_remove(&g->waiting, s);
        resolve(g, &p, l);
    }
}

static struct launch *launch_record(struct trlat_gpu_stats *g, uint32_t corr)
{
    struct launch *l = find_launch(g, corr);
    if (l)
        return l;
    uint32_t s = trlat_corrmap_next(&g->launches);
    if (g->launches.live[s]) /* forget the oldest */
        trlat_corrmap_remove(&g->launches, s);
    s = trlat_corrmap_insert(&g->launches, corr);
    g->launch[s] = (struct launch){.start = NO_START, .ext = 0};
    return &g->launch[s];
}

void trlat_gpu_stats_other(struct trlat_gpu_stats *g, uint32_t corr, uint64_t start)
{
    struct launch *l = launch_record(g, corr);
    if (start < l->start)
        l->start = start;
    wake_waiting(g, corr, l);
}

void trlat_gpu_stats_trlat(struct trlat_gpu_stats *g, uint32_t corr, uint64_t t0)
{
    struct launch *l = launch_record(g, corr);
    l->ext = t0 ? t0 : 1;
    wake_waiting(g, corr, l);
}

/* ---- start order and idle time ---- */

static struct stream_state *stream_of(struct trlat_gpu_stats *g, uint32_t device, uint32_t stream, int *fresh)
{
    uint64_t key = (((uint64_t)device << 32) | stream) + 1;
    uint32_t h = (uint32_t)(key * 0x9E3779B97F4A7C15ull >> 32);
    for (uint32_t p = h & g->smask;; p = (p + 1) & g->smask) {
        if (g->streams[p].key == key)
            return &g->streams[p];
        if (!g->streams[p].key) {
            if (g->nstreams >= g->lim.max_streams)
                return NULL;
            g->nstreams++;
            g->streams[p].key = key;
            *fresh = 1;
            return &g->streams[p];
        }
    }
}

/* Folds one kernel, in start order on its device. */
static void fold_item(struct trlat_gpu_stats *g, const struct item *it)
{
    struct device *d = &g->dev[it->device];
    struct trlat_gpu_kstat *k = g->k[it->kernel];
    int late = d->seen && it->start < d->last_start;
    struct pending p = {.it = *it};
    g->t.kernels++;
    trlat_stat_add(&k->gpu, it->end - it->start);
    if (late) {
        g->t.late++;
    } else {
        d->last_start = it->start;
        if (d->seen && it->start > d->max_end) {
            p.dev_idle_from = d->max_end;
            p.dev_idle = it->start - d->max_end;
        }
    }
    if (it->end > d->max_end) {
        g->t.busy_ns += it->end - (it->start > d->max_end ? it->start : d->max_end);
        d->max_end = it->end;
    }
    if (!d->seen) {
        d->seen = 1;
        g->t.devices++;
    }
    int fresh = 0;
    struct stream_state *s = stream_of(g, it->device, it->stream, &fresh);
    if (s) {
        if (!fresh && !late && it->start > s->max_end) {
            p.st_idle_from = s->max_end;
            p.st_idle = it->start - s->max_end;
        }
        if (it->end > s->max_end)
            s->max_end = it->end;
    }
    struct launch *l = find_launch(g, it->corr);
    if (l)
        resolve(g, &p, l);
    else
        wait_for_launch(g, &p);
}

static int before(const struct item *a, const struct item *b)
{
    return a->start < b->start || (a->start == b->start && a->corr < b->corr);
}

static void heap_push(struct device *d, const struct item *it)
{
    uint32_t i = d->n++;
    while (i > 0) {
        uint32_t up = (i - 1) / 2;
        if (!before(it, &d->heap[up]))
            break;
        d->heap[i] = d->heap[up];
        i = up;
    }
    d->heap[i] = *it;
}

static struct item heap_pop(struct device *d)
{
    struct item top = d->heap[0], last = d->heap[--d->n];
    uint32_t i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= d->n)
            break;
        if (c + 1 < d->n && before(&d->heap[c + 1], &d->heap[c]))
            c++;
        if (!before(&d->heap[c], &last))
            break;
        d->heap[i] = d->heap[c];
        i = c;
    }
    if (d->n)
        d->heap[i] = last;
    return top;
}

void trlat_gpu_stats_kernel(struct trlat_gpu_stats *g, const struct trlat_gpu_kernel *k)
{
    uint32_t ki = kernel_index(g, k->name);
    if (ki == UINT32_MAX)
        return;
    uint32_t dev = k->device < TRLAT_GPU_MAX_DEVICES ? k->device : TRLAT_GPU_MAX_DEVICES - 1;
    struct item it = {
        .start = k->start, .end = k->end, .corr = k->corr, .kernel = ki, .device = dev, .stream = k->stream};
    if (!k->start || !k->end || k->end < k->start) {
        /* No time: count the launch, nothing else. */
        g->t.untimed++;
        g->k[ki]->untimed++;
        count_launch(g, g->k[ki], find_launch(g, k->corr));
        return;
    }
    struct device *d = &g->dev[dev];
    if (!d->heap && !(d->heap = malloc((size_t)g->lim.window * sizeof *d->heap))) {
        fold_item(g, &it); /* no memory for ordering: fold as it comes */
        return;
    }
    if (d->n == g->lim.window) {
        struct item first = heap_pop(d);
        if (before(&it, &first)) { /* older than anything held: fold it now */
            heap_push(d, &first);
            fold_item(g, &it);
            return;
        }
        fold_item(g, &first);
    }
    heap_push(d, &it);
}

void trlat_gpu_stats_dropped(struct trlat_gpu_stats *g, uint64_t n)
{
    g->t.dropped += n;
}

void trlat_gpu_stats_lost_join(struct trlat_gpu_stats *g, uint64_t n)
{
    g->t.lost_join += n;
}

void trlat_gpu_stats_drain(struct trlat_gpu_stats *g)
{
    for (int i = 0; i < TRLAT_GPU_MAX_DEVICES; i++)
        while (g->dev[i].n) {
            struct item it = heap_pop(&g->dev[i]);
            fold_item(g, &it);
        }
    for (uint32_t s = 0; s < g->waiting.cap; s++)
        if (g->waiting.live[s]) {
            struct pending p = g->pending[s];
            trlat_corrmap_remove(&g->waiting, s);
            resolve(g, &p, NULL);
        }
}

size_t trlat_gpu_stats_count(const struct trlat_gpu_stats *g)
{
    return g->nk;
}

const struct trlat_gpu_kstat *trlat_gpu_stats_at(const struct trlat_gpu_stats *g, size_t i)
{
    return i < g->nk ? g->k[i] : NULL;
}

void trlat_gpu_stats_totals(const struct trlat_gpu_stats *g, struct trlat_gpu_totals *t)
{
    *t = g->t;
    t->pending = g->waiting.count;
}
