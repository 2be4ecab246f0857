/* The GPU statistics fed with synthetic CUPTI records: starvation per device and
 * per stream, the join with launch callbacks in any order, start order
 * across buffers, bounded memory; the per-thread join rings (what CUPTI's
 * launch callbacks write) drained into it. */
#include "interpose/clock.h"
#include "interpose/cupti/corrmap.h"
#include "interpose/cupti/gpu_stats.h"
#include "interpose/cupti/joinring.h"
#include "tests/unit/check_main.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static struct trlat_gpu_stats *mk(uint32_t window, uint32_t events)
{
    struct trlat_gpu_limits l;
    trlat_gpu_limits_default(&l);
    l.window = window;
    l.events = events;
    struct trlat_gpu_stats *g = trlat_gpu_stats_new(&l);
    ck_assert_ptr_nonnull(g);
    return g;
}

static void kern(struct trlat_gpu_stats *g, uint32_t corr, uint32_t dev, uint32_t stream, uint64_t start, uint64_t end,
                 const char *name)
{
    struct trlat_gpu_kernel k = {
        .corr = corr, .device = dev, .stream = stream, .start = start, .end = end, .name = name};
    trlat_gpu_stats_kernel(g, &k);
}

/* A launch through trlat: its id is its driver entry time. */
static void driver_launch(struct trlat_gpu_stats *g, uint32_t corr, uint64_t t0)
{
    trlat_gpu_stats_trlat(g, corr, t0);
}

static const struct trlat_gpu_kstat *get(const struct trlat_gpu_stats *g, const char *name)
{
    for (size_t i = 0; i < trlat_gpu_stats_count(g); i++)
        if (strcmp(trlat_gpu_stats_at(g, i)->name, name) == 0)
            return trlat_gpu_stats_at(g, i);
    return NULL;
}

static struct trlat_gpu_totals totals(const struct trlat_gpu_stats *g)
{
    struct trlat_gpu_totals t;
    trlat_gpu_stats_totals(g, &t);
    return t;
}

START_TEST(idle_before_the_launch_call_is_starvation)
{
    struct trlat_gpu_stats *g = mk(64, 0);
    /* k1 [1000,2000]; k2 launched at 2500 (GPU idle since 2000): starved
     * 2000..3000; k3 launched at 2600, before k2 ended: its idle 3500..4000
     * began after the call, launch latency, not starvation. */
    driver_launch(g, 1, 500);
    kern(g, 1, 0, 7, 1000, 2000, "k");
    driver_launch(g, 2, 2500);
    kern(g, 2, 0, 7, 3000, 3500, "k");
    driver_launch(g, 3, 2600);
    kern(g, 3, 0, 7, 4000, 4100, "k");
    trlat_gpu_stats_drain(g);
    const struct trlat_gpu_kstat *k = get(g, "k");
    ck_assert_ptr_nonnull(k);
    ck_assert_uint_eq(k->driver, 3);
    ck_assert_uint_eq(k->other, 0);
    ck_assert_uint_eq(k->gpu.count, 3);
    ck_assert_uint_eq(k->gpu.sum, 1000 + 500 + 100);
    ck_assert_uint_eq(k->starved_ns, 1000);
    ck_assert_uint_eq(k->starved_launches, 1);
    struct trlat_gpu_totals t = totals(g);
    ck_assert_uint_eq(t.busy_ns, 1600);
    ck_assert_uint_eq(t.starved_ns, 1000);
    ck_assert_uint_eq(t.kernels, 3);
    ck_assert_uint_eq(t.devices, 1);
    trlat_gpu_stats_free(g);
}
END_TEST

START_TEST(two_streams_overlapping)
{
    struct trlat_gpu_stats *g = mk(64, 0);
    /* stream 1: a [0,1000], c [3000,4000]; stream 2: b [500,2500].
     * Device idle only 2500..3000 (ends with c); stream 1 idle 1000..3000. */
    driver_launch(g, 1, 10);
    driver_launch(g, 2, 20);
    driver_launch(g, 3, 2800); /* called after the device went idle */
    kern(g, 1, 0, 1, 100, 1000, "a");
    kern(g, 2, 0, 2, 500, 2500, "b");
    kern(g, 3, 0, 1, 3000, 4000, "c");
    trlat_gpu_stats_drain(g);
    const struct trlat_gpu_kstat *c = get(g, "c"), *b = get(g, "b");
    ck_assert_uint_eq(c->starved_ns, 500);
    ck_assert_uint_eq(c->starved_launches, 1);
    ck_assert_uint_eq(c->stream_starved_ns, 2000);
    ck_assert_uint_eq(c->stream_starved_launches, 1);
    ck_assert_uint_eq(b->starved_ns, 0);
    ck_assert_uint_eq(b->stream_starved_ns, 0); /* first on its stream */
    struct trlat_gpu_totals t = totals(g);
    ck_assert_uint_eq(t.busy_ns, 2400 + 1000);
    ck_assert_uint_eq(t.starved_ns, 500);
    ck_assert_uint_eq(t.stream_starved_ns, 2000);
    trlat_gpu_stats_free(g);
}
END_TEST

START_TEST(runtime_and_driver_interleaved)
{
    struct trlat_gpu_stats *g = mk(64, 0);
    uint64_t t = 0;
    for (uint32_t i = 1; i <= 100; i++) {
        /* odd: trlat's launches; even: the runtime's (a driver call trlat
         * did not make) */
        uint64_t call = t + 3000;
        if (i & 1)
            driver_launch(g, i, call);
        else
            trlat_gpu_stats_other(g, i, call);
        kern(g, i, 0, 7, call + 1000, call + 1500, (i & 1) ? "triton_k" : "_ZN2at6native7kernelEv");
        t = call + 1500;
    }
    trlat_gpu_stats_drain(g);
    const struct trlat_gpu_kstat *d = get(g, "triton_k"), *r = get(g, "_ZN2at6native7kernelEv");
    ck_assert_uint_eq(d->driver, 50);
    ck_assert_uint_eq(d->other, 0);
    ck_assert_uint_eq(r->driver, 0);
    ck_assert_uint_eq(r->other, 50);
    /* every idle gap (4000 ns) began before the next call (3000 ns after
     * the previous kernel ended) */
    ck_assert_uint_eq(d->starved_launches + r->starved_launches, 99);
    ck_assert_uint_eq(d->starved_ns + r->starved_ns, 99 * 4000);
    ck_assert_uint_eq(r->gpu.count, 50);
    trlat_gpu_stats_free(g);
}
END_TEST

/* The same launches folded in order and shuffled (kernel records across
 * buffers, launch records after their kernels) give the same result. */
static void run_launches(struct trlat_gpu_stats *g, int shuffled, uint32_t n)
{
    struct rec {
        int kind; /* 0 launch, 1 kernel */
        uint32_t corr, stream;
        uint64_t t0, start, end;
    } *v = calloc(2 * n, sizeof *v);
    uint64_t end[2] = {0, 0};
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = i % 2;
        uint64_t t0 = 1000 + (uint64_t)i * 700 + (uint64_t)(i / 10) * 4000; /* a host pause every 10 */
        uint64_t start = t0 + 2000 > end[s] ? t0 + 2000 : end[s];
        uint64_t dur = (i % 5 == 0) ? 3000 : 300;
        end[s] = start + dur;
        v[2 * i] = (struct rec){0, i + 1, s, t0, 0, 0};
        v[2 * i + 1] = (struct rec){1, i + 1, s, t0, start, start + dur};
    }
    if (shuffled) {
        /* kernel records: blocks of 50 swapped in pairs, then shuffled
         * (at most ~130 places from home: inside the window of 256);
         * launch records after the kernels of their group of 25 */
        srand(7);
        for (uint32_t b = 0; b + 100 <= n; b += 100) {
            for (uint32_t i = 0; i < 50; i++) {
                struct rec x = v[2 * (b + i) + 1];
                v[2 * (b + i) + 1] = v[2 * (b + 50 + i) + 1];
                v[2 * (b + 50 + i) + 1] = x;
            }
        }
        for (uint32_t c = 0; c + 32 <= n; c += 32) /* and shuffled within 32 */
            for (uint32_t i = 31; i > 0; i--) {
                uint32_t j = (uint32_t)rand() % (i + 1);
                struct rec x = v[2 * (c + i) + 1];
                v[2 * (c + i) + 1] = v[2 * (c + j) + 1];
                v[2 * (c + j) + 1] = x;
            }
        for (uint32_t i = 0; i < n; i += 25) /* kernels first, then their launches */
            for (int pass = 1; pass >= 0; pass--)
                for (uint32_t k = i; k < i + 25 && k < n; k++) {
                    struct rec *r = &v[2 * k + (pass == 1 ? 1 : 0)];
                    if (r->kind)
                        kern(g, r->corr, 0, r->stream, r->start, r->end, r->stream ? "odd" : "even");
                    else
                        driver_launch(g, r->corr, r->t0);
                }
    } else {
        for (uint32_t i = 0; i < 2 * n; i++) {
            struct rec *r = &v[i];
            if (r->kind)
                kern(g, r->corr, 0, r->stream, r->start, r->end, r->stream ? "odd" : "even");
            else
                driver_launch(g, r->corr, r->t0);
        }
    }
    free(v);
    trlat_gpu_stats_drain(g);
}

START_TEST(out_of_order_across_buffers)
{
    struct trlat_gpu_stats *a = mk(256, 0), *b = mk(256, 0);
    run_launches(a, 0, 2000);
    run_launches(b, 1, 2000);
    struct trlat_gpu_totals ta = totals(a), tb = totals(b);
    ck_assert_uint_eq(ta.kernels, 2000);
    ck_assert_uint_eq(tb.kernels, 2000);
    ck_assert_uint_eq(tb.late, 0);
    ck_assert_uint_eq(tb.unjoined, 0);
    ck_assert_uint_eq(ta.busy_ns, tb.busy_ns);
    ck_assert_uint_gt(ta.starved_ns, 0);
    ck_assert_uint_eq(ta.starved_ns, tb.starved_ns);
    ck_assert_uint_eq(ta.starved_launches, tb.starved_launches);
    ck_assert_uint_eq(ta.stream_starved_ns, tb.stream_starved_ns);
    for (int i = 0; i < 2; i++) {
        const char *n = i ? "odd" : "even";
        ck_assert_uint_eq(get(a, n)->starved_ns, get(b, n)->starved_ns);
        ck_assert_uint_eq(get(a, n)->driver, 1000);
        ck_assert_uint_eq(get(b, n)->driver, 1000);
        ck_assert_uint_eq(get(a, n)->gpu.sum, get(b, n)->gpu.sum);
    }
    trlat_gpu_stats_free(a);
    trlat_gpu_stats_free(b);
}
END_TEST

START_TEST(too_late_for_the_window)
{
    struct trlat_gpu_stats *g = mk(4, 0);
    for (uint32_t i = 1; i <= 10; i++) {
        driver_launch(g, i, i * 1000);
        kern(g, i, 0, 7, i * 1000 + 100, i * 1000 + 200, "k");
    }
    /* a record that started before kernels already folded */
    driver_launch(g, 99, 50);
    kern(g, 99, 0, 7, 150, 180, "old");
    trlat_gpu_stats_drain(g);
    struct trlat_gpu_totals t = totals(g);
    ck_assert_uint_eq(t.late, 1);
    ck_assert_uint_eq(t.kernels, 11);
    ck_assert_uint_eq(get(g, "old")->gpu.count, 1);
    ck_assert_uint_eq(get(g, "old")->driver, 1);
    ck_assert_uint_eq(get(g, "old")->starved_launches, 0);
    trlat_gpu_stats_free(g);
}
END_TEST

START_TEST(launch_record_after_its_kernel)
{
    struct trlat_gpu_stats *g = mk(1, 0); /* kernels folded at once */
    driver_launch(g, 1, 0);
    kern(g, 1, 0, 7, 100, 200, "k");
    kern(g, 2, 0, 7, 1000, 1100, "k"); /* its launch record comes later */
    kern(g, 3, 0, 7, 2000, 2100, "k");
    ck_assert_uint_eq(totals(g).pending, 1); /* 2 was folded, waits for its launch record */
    trlat_gpu_stats_other(g, 2, 900);        /* runtime launch called at 900 > 200: starved */
    trlat_gpu_stats_drain(g);
    const struct trlat_gpu_kstat *k = get(g, "k");
    ck_assert_uint_eq(k->driver, 1);
    ck_assert_uint_eq(k->other, 1);
    ck_assert_uint_eq(k->unjoined, 1); /* corr 3 never had a launch record */
    ck_assert_uint_eq(k->starved_ns, 800);
    ck_assert_uint_eq(k->starved_launches, 1);
    struct trlat_gpu_totals t = totals(g);
    ck_assert_uint_eq(t.unjoined, 1);
    ck_assert_uint_eq(t.pending, 0);
    trlat_gpu_stats_free(g);
}
END_TEST

START_TEST(driver_launch_without_trlat_id)
{
    struct trlat_gpu_stats *g = mk(16, 0);
    driver_launch(g, 1, 0);
    kern(g, 1, 0, 7, 100, 200, "k");
    trlat_gpu_stats_other(g, 2, 500); /* a driver launch trlat did not make */
    kern(g, 2, 0, 7, 1000, 1100, "k");
    trlat_gpu_stats_drain(g);
    const struct trlat_gpu_kstat *k = get(g, "k");
    ck_assert_uint_eq(k->driver, 1);
    ck_assert_uint_eq(k->other, 1);
    ck_assert_uint_eq(k->starved_ns, 800); /* its call (500) came after the GPU went idle (200) */
    ck_assert_uint_eq(totals(g).joined_trlat, 1);
    trlat_gpu_stats_free(g);
}
END_TEST

START_TEST(trlat_id_wins_over_another_call_with_the_same_id)
{
    /* Two callbacks with one correlation id, in either order: trlat's
     * launch (its driver entry time decides starvation) counts, once. */
    struct trlat_gpu_stats *g = mk(16, 0);
    kern(g, 1, 0, 7, 100, 200, "k");
    trlat_gpu_stats_other(g, 2, 150); /* before the GPU went idle ... */
    driver_launch(g, 2, 300);         /* ... but trlat's entry came after: starved */
    kern(g, 2, 0, 7, 1000, 1100, "k");
    driver_launch(g, 3, 1150); /* the other way round */
    trlat_gpu_stats_other(g, 3, 1040);
    kern(g, 3, 0, 7, 2000, 2100, "k");
    trlat_gpu_stats_drain(g);
    const struct trlat_gpu_kstat *k = get(g, "k");
    ck_assert_uint_eq(k->driver, 2);
    ck_assert_uint_eq(k->other, 0);
    ck_assert_uint_eq(k->unjoined, 1);
    ck_assert_uint_eq(k->starved_launches, 2);
    ck_assert_uint_eq(k->starved_ns, 800 + 900);
    ck_assert_uint_eq(totals(g).joined_trlat, 2);
    trlat_gpu_stats_free(g);
}
END_TEST

START_TEST(graph_launch_shares_one_record)
{
    struct trlat_gpu_stats *g = mk(16, 0);
    trlat_gpu_stats_other(g, 5, 100);
    kern(g, 5, 0, 3, 1000, 1100, "g1");
    kern(g, 5, 0, 3, 1100, 1200, "g2");
    kern(g, 5, 0, 3, 1300, 1400, "g3");
    trlat_gpu_stats_drain(g);
    ck_assert_uint_eq(get(g, "g1")->other + get(g, "g2")->other + get(g, "g3")->other, 3);
    ck_assert_uint_eq(get(g, "g3")->starved_ns, 0); /* its idle began after the graph launch */
    ck_assert_uint_eq(totals(g).busy_ns, 300);
    trlat_gpu_stats_free(g);
}
END_TEST

START_TEST(dropped_and_untimed_records)
{
    struct trlat_gpu_stats *g = mk(16, 0);
    trlat_gpu_stats_dropped(g, 12);
    trlat_gpu_stats_dropped(g, 3);
    driver_launch(g, 1, 10);
    kern(g, 1, 0, 7, 0, 0, "k"); /* CUPTI could not time it */
    trlat_gpu_stats_drain(g);
    struct trlat_gpu_totals t = totals(g);
    ck_assert_uint_eq(t.dropped, 15);
    ck_assert_uint_eq(t.untimed, 1);
    ck_assert_uint_eq(t.kernels, 0);
    ck_assert_uint_eq(get(g, "k")->driver, 1);
    ck_assert_uint_eq(get(g, "k")->untimed, 1);
    ck_assert_uint_eq(get(g, "k")->gpu.count, 0);
    trlat_gpu_stats_free(g);
}
END_TEST

START_TEST(two_devices)
{
    struct trlat_gpu_stats *g = mk(64, 0);
    /* device 0 busy [0,1000] then [5000,6000] launched at 4000 (starved
     * 4000 ns); device 1 busy [500,5500], never idle. */
    driver_launch(g, 1, 0);
    driver_launch(g, 2, 1);
    driver_launch(g, 3, 4000);
    kern(g, 1, 0, 7, 10, 1000, "d0");
    kern(g, 2, 1, 7, 500, 5500, "d1");
    kern(g, 3, 0, 7, 5000, 6000, "d0");
    trlat_gpu_stats_drain(g);
    ck_assert_uint_eq(get(g, "d0")->starved_ns, 4000);
    ck_assert_uint_eq(get(g, "d1")->starved_ns, 0);
    struct trlat_gpu_totals t = totals(g);
    ck_assert_uint_eq(t.devices, 2);
    ck_assert_uint_eq(t.busy_ns, 990 + 1000 + 5000);
    trlat_gpu_stats_free(g);
}
END_TEST

START_TEST(memory_is_bounded)
{
    struct trlat_gpu_limits l;
    trlat_gpu_limits_default(&l);
    l.api_cap = 64;
    l.pending_cap = 32;
    l.window = 16;
    l.max_kernels = 4;
    l.events = 8;
    struct trlat_gpu_stats *g = trlat_gpu_stats_new(&l);
    char name[16];
    for (uint32_t i = 1; i <= 200000; i++) {
        snprintf(name, sizeof name, "k%u", i % 7);
        if (i % 3)
            driver_launch(g, i, (uint64_t)i * 100);
        kern(g, i, i % 3, i % 5, (uint64_t)i * 100 + 50, (uint64_t)i * 100 + 80, name);
        ck_assert_uint_le(totals(g).pending, 64);
    }
    trlat_gpu_stats_drain(g);
    struct trlat_gpu_totals t = totals(g);
    ck_assert_uint_eq(t.kernels, 200000);
    ck_assert_uint_eq(t.pending, 0);
    ck_assert_uint_le(trlat_gpu_stats_count(g), 5);
    ck_assert_ptr_nonnull(get(g, "(other)"));
    ck_assert_uint_gt(t.other_names, 0);
    uint64_t launches = 0;
    for (size_t i = 0; i < trlat_gpu_stats_count(g); i++)
        launches +=
            trlat_gpu_stats_at(g, i)->driver + trlat_gpu_stats_at(g, i)->other + trlat_gpu_stats_at(g, i)->unjoined;
    ck_assert_uint_eq(launches, 200000);
    trlat_gpu_stats_free(g);
}
END_TEST

struct evcount {
    int kernels, starved_dev, starved_stream;
    uint64_t last_ext;
};

static void count_event(const struct trlat_gpu_event *e, void *arg)
{
    struct evcount *c = arg;
    if (e->kind == TRLAT_GPU_EV_KERNEL) {
        c->kernels++;
        c->last_ext = e->ext;
    } else if (e->kind == TRLAT_GPU_EV_STARVED_DEVICE) {
        c->starved_dev++;
    } else {
        c->starved_stream++;
    }
}

START_TEST(events_keep_the_newest)
{
    struct trlat_gpu_stats *g = mk(4, 3);
    for (uint32_t i = 1; i <= 20; i++) {
        driver_launch(g, i, i * 1000);
        kern(g, i, 0, 7, i * 1000 + 100, i * 1000 + 200, "k");
    }
    trlat_gpu_stats_drain(g);
    struct evcount c = {0};
    trlat_gpu_stats_events(g, count_event, &c);
    ck_assert_int_eq(c.kernels + c.starved_dev + c.starved_stream, 9);
    ck_assert_int_eq(c.kernels, 3);
    ck_assert_uint_eq(c.last_ext, 20000);
    trlat_gpu_stats_free(g);
}
END_TEST

START_TEST(corrmap_against_a_reference)
{
    struct trlat_corrmap m;
    ck_assert_int_eq(trlat_corrmap_init(&m, 64), 0);
    uint32_t ref[64];
    uint8_t live[64] = {0};
    srand(3);
    for (int step = 0; step < 100000; step++) {
        int op = rand() % 3;
        uint32_t key = (uint32_t)rand() % 100;
        if (op < 2) {
            uint32_t s = trlat_corrmap_next(&m);
            if (m.live[s]) {
                trlat_corrmap_remove(&m, s);
                live[s] = 0;
            }
            s = trlat_corrmap_insert(&m, key);
            ref[s] = key;
            live[s] = 1;
        } else {
            uint32_t cur = 0, s = trlat_corrmap_find(&m, key, &cur);
            if (s != TRLAT_CORRMAP_NONE) {
                trlat_corrmap_remove(&m, s);
                live[s] = 0;
            }
        }
        /* every live item is found under its key, and only those */
        uint32_t k = (uint32_t)rand() % 100, n = 0, cur = 0, s;
        while ((s = trlat_corrmap_find(&m, k, &cur)) != TRLAT_CORRMAP_NONE) {
            ck_assert(live[s] && ref[s] == k);
            n++;
        }
        uint32_t want = 0;
        for (int i = 0; i < 64; i++)
            want += live[i] && ref[i] == k;
        ck_assert_uint_eq(n, want);
    }
    trlat_corrmap_free(&m);
}
END_TEST

/* ---- join rings ---- */

/* The rings hold ticks; on the monotonic clock with its epoch at 0 a tick
 * is a ns of trlat's time. */
static void plain_clock(void)
{
    trlat_clk.use_tsc = 0;
    trlat_clk.epoch_mono_ns = 0;
}

static void put(uint32_t corr, uint64_t t, uint32_t kind)
{
    struct trlat_joinring *r = trlat_joinring_self();
    ck_assert_ptr_nonnull(r);
    trlat_joinring_put(r, corr, t, kind);
}

START_TEST(join_ring_feeds_the_fold)
{
    /* As in idle_before_the_launch_call_is_starvation, the launches coming
     * through the ring: trlat's (its driver entry time) and two other
     * driver calls (the callback's time). k2 arrives before its launch was
     * drained. */
    plain_clock();
    struct trlat_gpu_stats *g = mk(64, 8);
    put(1, 500, TRLAT_JOIN_TRLAT);
    trlat_joinring_drain(g);
    kern(g, 1, 0, 7, 1000, 2000, "k");
    kern(g, 2, 0, 7, 3000, 3500, "k");
    put(2, 2500, TRLAT_JOIN_OTHER);
    put(3, 2600, TRLAT_JOIN_TRLAT);
    trlat_joinring_drain(g);
    kern(g, 3, 0, 7, 4000, 4100, "k");
    trlat_gpu_stats_drain(g);
    const struct trlat_gpu_kstat *k = get(g, "k");
    ck_assert_uint_eq(k->driver, 2);
    ck_assert_uint_eq(k->other, 1);
    ck_assert_uint_eq(k->unjoined, 0);
    ck_assert_uint_eq(k->starved_ns, 1000);
    ck_assert_uint_eq(k->starved_launches, 1);
    struct trlat_gpu_totals t = totals(g);
    ck_assert_uint_eq(t.joined_trlat, 2);
    ck_assert_uint_eq(t.lost_join, 0);
    /* trlat's launch id in the events: its driver entry time */
    struct evcount c = {0};
    trlat_gpu_stats_events(g, count_event, &c);
    ck_assert_int_eq(c.kernels, 3);
    ck_assert_uint_eq(c.last_ext, 2600);
    trlat_gpu_stats_free(g);
}
END_TEST

static void *put_and_exit(void *arg)
{
    uint32_t base = (uint32_t)(uintptr_t)arg;
    for (uint32_t i = 0; i < 100; i++)
        put(base + i, 10 * (base + i), TRLAT_JOIN_TRLAT);
    return NULL;
}

START_TEST(join_ring_of_exited_threads)
{
    /* Threads one after the other: each leaves 100 entries undrained and
     * exits; the next adopts its ring. Then several at once. Everything is
     * drained. */
    plain_clock();
    struct trlat_gpu_stats *g = mk(64, 0);
    unsigned before = trlat_joinring_count();
    for (uintptr_t n = 0; n < 4; n++) {
        pthread_t t;
        ck_assert_int_eq(pthread_create(&t, NULL, put_and_exit, (void *)(1 + 100 * n)), 0);
        pthread_join(t, NULL);
    }
    ck_assert_uint_eq(trlat_joinring_count() - before, 1);
    pthread_t ts[4];
    for (uintptr_t n = 0; n < 4; n++)
        ck_assert_int_eq(pthread_create(&ts[n], NULL, put_and_exit, (void *)(401 + 100 * n)), 0);
    for (int n = 0; n < 4; n++)
        pthread_join(ts[n], NULL);
    ck_assert_uint_le(trlat_joinring_count() - before, 4);
    trlat_joinring_drain(g);
    for (uint32_t c = 1; c <= 800; c++)
        kern(g, c, 0, 7, 10 * c + 1, 10 * c + 2, "k");
    trlat_gpu_stats_drain(g);
    ck_assert_uint_eq(get(g, "k")->driver, 800);
    ck_assert_uint_eq(totals(g).unjoined, 0);
    trlat_gpu_stats_free(g);
}
END_TEST

START_TEST(join_ring_full_counts_what_it_loses)
{
    plain_clock();
    struct trlat_gpu_stats *g = mk(64, 0);
    uint32_t n = TRLAT_JOINRING_CAP + 10;
    for (uint32_t c = 1; c <= n; c++)
        put(c, 10 * c, TRLAT_JOIN_TRLAT);
    trlat_joinring_drain(g);
    ck_assert_uint_eq(totals(g).lost_join, 10);
    put(n + 1, 10 * (n + 1), TRLAT_JOIN_TRLAT); /* room again */
    trlat_joinring_drain(g);
    ck_assert_uint_eq(totals(g).lost_join, 10);
    for (uint32_t c = 1; c <= n + 1; c++)
        kern(g, c, 0, 7, 10 * c + 1, 10 * c + 2, "k");
    trlat_gpu_stats_drain(g);
    /* the newest were lost: their kernels found no launch */
    ck_assert_uint_eq(get(g, "k")->driver, TRLAT_JOINRING_CAP + 1);
    ck_assert_uint_eq(get(g, "k")->unjoined, 10);
    trlat_gpu_stats_free(g);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gpu_stats");
    TCase *t = tcase_create("fold");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, idle_before_the_launch_call_is_starvation);
    tcase_add_test(t, two_streams_overlapping);
    tcase_add_test(t, runtime_and_driver_interleaved);
    tcase_add_test(t, out_of_order_across_buffers);
    tcase_add_test(t, too_late_for_the_window);
    tcase_add_test(t, launch_record_after_its_kernel);
    tcase_add_test(t, driver_launch_without_trlat_id);
    tcase_add_test(t, trlat_id_wins_over_another_call_with_the_same_id);
    tcase_add_test(t, graph_launch_shares_one_record);
    tcase_add_test(t, dropped_and_untimed_records);
    tcase_add_test(t, two_devices);
    tcase_add_test(t, memory_is_bounded);
    tcase_add_test(t, events_keep_the_newest);
    tcase_add_test(t, corrmap_against_a_reference);
    tcase_add_test(t, join_ring_feeds_the_fold);
    tcase_add_test(t, join_ring_of_exited_threads);
    tcase_add_test(t, join_ring_full_counts_what_it_loses);
    suite_add_tcase(s, t);
    return s;
}

TRLAT_CHECK_MAIN(suite)
