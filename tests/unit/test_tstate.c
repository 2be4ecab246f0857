#include "interpose/clock.h"
#include "interpose/names.h"
#include "interpose/tstate.h"
#include "interpose/python/pyhook.h"
#include "tests/unit/check_main.h"
#include "report/fold.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Drives the per-thread records the way the launch path does. */
static void launches(struct trlat_tstate *ts, void *func, int n, uint64_t *t)
{
    for (int i = 0; i < n; i++) {
        uint64_t t0 = *t + 100, t1 = t0 + 1000;
        trlat_rec_add(ts, func, t0, t1, 0, 0);
        *t = t1;
    }
}

START_TEST(batches_fold_exactly)
{
    trlat_clock_force_monotonic(); /* ticks are ns: exact arithmetic */
    struct trlat_tstate *ts = trlat_tstate_get();
    ck_assert_ptr_nonnull(ts);
    trlat_names_add((void *)0x1001, "alpha");
    trlat_names_add((void *)0x1002, "beta");
    uint64_t t = 1000000;
    launches(ts, (void *)0x1001, 1000, &t); /* 3 folds of 256 + 232 pending */
    launches(ts, (void *)0x1002, 10, &t);
    struct trlat_fold *f = trlat_fold_build();
    ck_assert_ptr_nonnull(f);
    struct trlat_kstats *a = trlat_fold_kernel(f, "alpha"), *b = trlat_fold_kernel(f, "beta");
    ck_assert_uint_eq(a->from_driver, 1000);
    ck_assert_uint_eq(a->driver.count, 1000);
    ck_assert_uint_eq(a->driver.sum, 1000 * 1000);
    ck_assert_uint_eq(a->gap.count, 999);
    ck_assert_uint_eq(a->gap.min, 100);
    ck_assert_uint_eq(b->from_driver, 10);
    ck_assert_uint_eq(b->gap.count, 10);
    trlat_fold_free(f);
}
END_TEST

/* Python calls as the hook (pyhook.h's open and close) and the launch path
 * (launch.c's python_part) record them: every launch carries the call's
 * site, the first its entry; the return time goes into that record while
 * it is in the batch, else (folded while the call was open) to the slot. */
static void python_call(struct trlat_tstate *ts, void *func, int nlaunch, uint64_t *t, int close)
{
    struct trlat_pycall saved;
    trlat_pycall_open(ts, *t, 77, &saved);
    for (int j = 0; j < nlaunch; j++) {
        uint64_t t0 = *t + 100, t1 = t0 + 1000;
        trlat_rec_add(ts, func, t0, t1, j == 0 ? ts->py_t0 : 0, ts->py_site);
        ts->py_launches++;
        *t = t1;
    }
    if (close)
        ck_assert_uint_eq(trlat_pycall_close(ts, &saved), nlaunch);
}

START_TEST(python_calls_fold_exactly)
{
    trlat_clock_force_monotonic();
    struct trlat_tstate *ts = trlat_tstate_get();
    trlat_names_add((void *)0x4001, "delta");
    uint64_t t = trlat_mono_ns() - 1000000000; /* the calls return "now", after their launches */
    unsigned launched = 0;
    for (int i = 0; i < 600; i++) { /* 2, 1, 1, ...: first launches land on every batch position */
        python_call(ts, (void *)0x4001, i % 3 == 0 ? 2 : 1, &t, 1);
        launched += i % 3 == 0 ? 2 : 1;
    }
    ck_assert_uint_eq(launched, 800); /* 3 folds of 256, 32 pending */
    struct trlat_fold *f = trlat_fold_build();
    struct trlat_kstats *k = trlat_fold_kernel(f, "delta");
    ck_assert_uint_eq(k->from_driver, 800);
    ck_assert_uint_eq(k->py.count, 600);
    ck_assert_uint_eq(k->py.sum, 600 * 100);
    ck_assert_uint_eq(k->ret.count, 600);
    ck_assert_uint_ge(k->ret.min, 1);
    ck_assert_uint_eq(k->nsites, 1);
    ck_assert_uint_eq(k->sites[0].id, 77);
    ck_assert_uint_eq(k->sites[0].launches, 800);
    /* every launch is the site's: its host times are the kernel's, less the
     * returns of calls open when their batch folded */
    ck_assert_uint_eq(k->sites[0].gap_ns, k->gap.sum);
    ck_assert_uint_ge(k->sites[0].triton_ns, k->py.sum);
    ck_assert_uint_le(k->sites[0].triton_ns, k->py.sum + k->ret.sum);
    ck_assert_uint_gt(k->sites[0].triton_ns, k->py.sum);
    trlat_fold_free(f);
    /* a call still open when the report folds: its entry counts, its return not yet */
    struct trlat_pycall saved = {.site = ts->py_site, .launches = ts->py_launches};
    python_call(ts, (void *)0x4001, 1, &t, 0);
    f = trlat_fold_build();
    k = trlat_fold_kernel(f, "delta");
    ck_assert_uint_eq(k->py.count, 601);
    ck_assert_uint_eq(k->ret.count, 600);
    trlat_fold_free(f);
    trlat_pycall_close(ts, &saved);
    ck_assert_ptr_null(ts->py_rec);
}
END_TEST

/* TRLAT_TIMING=none's records (t0 == 0): counted exactly, at their site,
 * never timed; a gap is only between two timed launches. */
START_TEST(untimed_records_count_exactly)
{
    trlat_clock_force_monotonic();
    struct trlat_tstate *ts = trlat_tstate_get();
    trlat_names_add((void *)0x5001, "epsilon");
    uint64_t t = 1000000;
    for (int i = 0; i < 700; i++) /* 2 folds, 188 pending */
        trlat_rec_add(ts, (void *)0x5001, 0, 0, i % 2 ? 1 : 0, 88);
    launches(ts, (void *)0x5001, 3, &t); /* timed: 2 gaps, none from the untimed */
    trlat_rec_add(ts, (void *)0x5001, 0, 0, 0, 0);
    launches(ts, (void *)0x5001, 2, &t); /* 1 gap more */
    struct trlat_fold *f = trlat_fold_build();
    struct trlat_kstats *k = trlat_fold_kernel(f, "epsilon");
    ck_assert_uint_eq(k->from_driver, 706);
    ck_assert_uint_eq(k->driver.count, 5);
    ck_assert_uint_eq(k->gap.count, 3);
    ck_assert_uint_eq(k->gap.max, 100);
    ck_assert_uint_eq(k->py.count, 0);
    ck_assert_uint_eq(k->sites[0].id, 88);
    ck_assert_uint_eq(k->sites[0].launches, 700);
    trlat_fold_free(f);
}
END_TEST

/* TRLAT_TIMING=sampled: a sampled hit's launch weighs TRLAT_SAMPLE_EVERY in
 * every statistic (a gap by the product of its two launches' weights), the
 * hits left out are counted only; the launch counts stay exact. */
START_TEST(sampled_records_weigh)
{
    trlat_clock_force_monotonic();
    struct trlat_tstate *ts = trlat_tstate_get();
    trlat_names_add((void *)0x6001, "zeta");
    const uint32_t W = TRLAT_SAMPLE_EVERY;
    uint64_t t = 1000000;
    /* 600 calls (2 folds, the rest pending): every 4th a sampled hit (weight W), the others left out */
    unsigned sampled = 0, pairs = 0;
    int prev_timed = 0;
    for (int i = 0; i < 600; i++) {
        int timed = i % 4 == 0 || i % 4 == 1;
        uint64_t t0 = timed ? t + 100 : 0, t1 = timed ? t0 + 1000 : 0;
        uint64_t site = 99 | (timed ? (uint64_t)W << TRLAT_SITE_WEIGHT_SHIFT : 0);
        trlat_rec_add(ts, (void *)0x6001, t0, t1, timed ? t0 - 50 : TRLAT_PY_UNTIMED, site);
        if (timed)
            ts->py_rec->ret = t1 + 30, sampled++, pairs += prev_timed;
        prev_timed = timed;
        t += 2000;
    }
    launches(ts, (void *)0x6001, 2, &t); /* two timed at weight 1: the second's gap weighs 1 */
    struct trlat_fold *f = trlat_fold_build();
    struct trlat_kstats *k = trlat_fold_kernel(f, "zeta");
    ck_assert_uint_eq(k->from_driver, 602);
    ck_assert_uint_eq(sampled, 300);
    ck_assert_uint_eq(k->driver.count, 300 * W + 2);
    ck_assert_uint_eq(k->driver.sum, (300 * W + 2) * 1000);
    ck_assert_uint_eq(k->driver.min, 1000);
    ck_assert_uint_eq(k->py.count, 300 * W);
    ck_assert_uint_eq(k->py.sum, 300 * W * 50);
    ck_assert_uint_eq(k->ret.count, 300 * W);
    ck_assert_uint_eq(k->ret.sum, 300 * W * 30);
    /* gaps: 150 pairs of sampled hits (W * W each); the last call (i = 599)
     * was left out, so the first weight-1 launch has none; the second one
     * gap of 1 */
    ck_assert_uint_eq(pairs, 150);
    ck_assert_uint_eq(k->gap.count, 150 * W * W + 1);
    uint64_t in_hist = 0;
    for (unsigned i = 0; i < TRLAT_HIST_BUCKETS; i++)
        in_hist += k->driver.hist[i];
    ck_assert_uint_eq(in_hist, k->driver.count);
    ck_assert_uint_eq(k->sites[0].launches, 600);
    trlat_fold_free(f);
}
END_TEST

/* A sampled hit's call whose record was folded before it returned: its
 * return time goes to the slot, weighted as its record was; a call left
 * out of the sample (TRLAT_PY_UNTIMED) reads no clock at its return and
 * adds no time, its launch counted. */
START_TEST(sampled_call_returns_after_fold)
{
    trlat_clock_force_monotonic();
    struct trlat_tstate *ts = trlat_tstate_get();
    void *func = (void *)0x7001;
    trlat_names_add(func, "eta");
    uint64_t t = trlat_mono_ns() - 1000000000;
    struct trlat_pycall saved;
    trlat_pycall_open(ts, t, 55, &saved);
    ts->py_site |= (uint64_t)TRLAT_SAMPLE_EVERY << TRLAT_SITE_WEIGHT_SHIFT; /* as trlat_sample_hit */
    trlat_rec_add(ts, func, t + 100, t + 1100, ts->py_t0, ts->py_site);
    ts->py_launches++;
    trlat_tstate_drain(ts); /* the call still open */
    ck_assert_ptr_nonnull(ts->py_k);
    ck_assert_uint_eq(trlat_pycall_close(ts, &saved), 1);
    trlat_pycall_open(ts, TRLAT_PY_UNTIMED, 55, &saved);
    trlat_rec_add(ts, func, 0, 0, ts->py_t0, ts->py_site);
    ts->py_launches++;
    trlat_tstate_drain(ts);
    ck_assert_uint_eq(trlat_pycall_close(ts, &saved), 1);
    struct trlat_fold *f = trlat_fold_build();
    struct trlat_kstats *k = trlat_fold_kernel(f, "eta");
    ck_assert_uint_eq(k->from_driver, 2);
    ck_assert_uint_eq(k->driver.count, TRLAT_SAMPLE_EVERY);
    ck_assert_uint_eq(k->py.count, TRLAT_SAMPLE_EVERY);
    ck_assert_uint_eq(k->py.sum, TRLAT_SAMPLE_EVERY * 100);
    ck_assert_uint_eq(k->ret.count, TRLAT_SAMPLE_EVERY);
    ck_assert_uint_eq(k->sites[0].id, 55);
    ck_assert_uint_eq(k->sites[0].launches, 2);
    trlat_fold_free(f);
}
END_TEST

/* The draw behind a sampled hit: 1 in TRLAT_SAMPLE_EVERY, the same for
 * every position of a program's repeating launch sequence (a fixed period
 * would time only some of a decode step's kernels), and only for the first
 * launch of a timed Python call. */
START_TEST(sample_hit_one_in_every)
{
    struct trlat_tstate *ts = trlat_tstate_get();
    enum { N = 320000, POS = 10 };
    unsigned hits[POS] = {0}, total = 0;
    int was = trlat_clk.sampled;
    trlat_clk.sampled = 1;
    /* counted, asserted once after: check's assertions cost a write each */
    unsigned bad_site = 0, bad_weight = 0, bad_untimed = 0;
    for (int i = 0; i < N; i++) {
        ts->py_t0 = 12345;
        ts->py_launches = 0;
        ts->py_site = 42;
        trlat_sample_hit(ts);
        bad_site += trlat_rec_site(ts->py_site) != 42;
        if (ts->py_t0 == 12345) {
            bad_weight += trlat_rec_weight(ts->py_site) != TRLAT_SAMPLE_EVERY;
            hits[i % POS]++;
            total++;
        } else {
            bad_untimed += ts->py_t0 != TRLAT_PY_UNTIMED || ts->py_site != 42;
        }
    }
    ck_assert_uint_eq(bad_site, 0);
    ck_assert_uint_eq(bad_weight, 0);
    ck_assert_uint_eq(bad_untimed, 0);
    double want = (double)N / TRLAT_SAMPLE_EVERY; /* 20000, sd ~137 */
    ck_assert_msg(total > want * 0.96 && total < want * 1.04, "%u sampled of %d", total, N);
    for (int p = 0; p < POS; p++) /* 2000 each, sd ~43 */
        ck_assert_msg(hits[p] > want / POS * 0.88 && hits[p] < want / POS * 1.12, "position %d: %u", p, hits[p]);
    /* a call that launched already, an untimed one, none open, sampling off: untouched */
    ts->py_t0 = 777, ts->py_launches = 1, ts->py_site = 42;
    for (int i = 0; i < 64; i++)
        trlat_sample_hit(ts);
    ck_assert_uint_eq(ts->py_t0, 777);
    ck_assert_uint_eq(ts->py_site, 42);
    ts->py_launches = 0;
    ts->py_t0 = TRLAT_PY_UNTIMED;
    for (int i = 0; i < 64; i++)
        trlat_sample_hit(ts);
    ck_assert_uint_eq(ts->py_site, 42);
    ts->py_t0 = 0;
    for (int i = 0; i < 64; i++)
        trlat_sample_hit(ts);
    ck_assert_uint_eq(ts->py_t0, 0);
    ck_assert_uint_eq(ts->py_site, 42);
    trlat_clk.sampled = 0;
    ts->py_t0 = 777;
    for (int i = 0; i < 64; i++)
        trlat_sample_hit(ts);
    ck_assert_uint_eq(ts->py_t0, 777);
    ck_assert_uint_eq(ts->py_site, 42);
    ts->py_t0 = 0;
    ts->py_site = 0;
    trlat_clk.sampled = was;
}
END_TEST

static void *thread_main(void *arg)
{
    struct trlat_tstate *ts = trlat_tstate_get();
    uint64_t t = 1;
    launches(ts, arg, 50000, &t);
    return NULL;
}

START_TEST(threads_are_counted_exactly)
{
    trlat_clock_force_monotonic();
    trlat_names_add((void *)0x2001, "gamma");
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, thread_main, (void *)0x2001);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    struct trlat_fold *f = trlat_fold_build();
    ck_assert_uint_eq(trlat_fold_kernel(f, "gamma")->from_driver, 200000);
    trlat_fold_free(f);
}
END_TEST

static pthread_barrier_t all_alive;
static void *slow_of_new_thread(void *arg)
{
    *(uint32_t *)arg = trlat_tstate_get()->slow;
    pthread_barrier_wait(&all_alive); /* their states at once: none is handed on between them */
    return NULL;
}

/* A launch hook set that wants every launch (launch.c) marks every thread's
 * state, those there and those to come; nothing else does. */
START_TEST(slow_all_marks_every_thread)
{
    struct trlat_tstate *ts = trlat_tstate_get();
    ck_assert_uint_eq(ts->slow, 0);
    uint32_t slow[3];
    pthread_t th[3];
    for (int round = 0; round < 2; round++) {
        /* round 1: two threads adopt round 0's exited states, the third's is new */
        int n = round ? 3 : 2;
        if (round == 1)
            trlat_tstate_slow_all();
        pthread_barrier_init(&all_alive, NULL, (unsigned)n);
        for (int i = 0; i < n; i++)
            pthread_create(&th[i], NULL, slow_of_new_thread, &slow[i]);
        for (int i = 0; i < n; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&all_alive);
        for (int i = 0; i < n; i++)
            ck_assert_uint_eq(slow[i], round ? TRLAT_SLOW_HOOKS : 0);
    }
    ck_assert_uint_eq(ts->slow, TRLAT_SLOW_HOOKS);
    ck_assert_uint_eq(trlat_tstate_count(), 4); /* main's, round 0's two, one more in round 1 */
}
END_TEST

START_TEST(names_registry)
{
    trlat_names_add((void *)0x3001, "first");
    ck_assert_str_eq(trlat_names_get((void *)0x3001), "first");
    trlat_names_add((void *)0x3001, "reloaded"); /* handle reused after an unload */
    ck_assert_str_eq(trlat_names_get((void *)0x3001), "reloaded");
    ck_assert_ptr_null(trlat_names_get((void *)0x3002));
    for (uintptr_t i = 0; i < 5000; i++) {
        char n[32];
        snprintf(n, sizeof n, "k%lu", (unsigned long)i);
        trlat_names_add((void *)(0x100000 + i * 64), n);
    }
    ck_assert_str_eq(trlat_names_get((void *)(0x100000 + 4321 * 64)), "k4321");
}
END_TEST

START_TEST(clock_tracks_monotonic)
{
    trlat_clock_init();
    uint64_t m0 = trlat_mono_ns(), n0 = trlat_now_ns();
    struct timespec d = {0, 20000000};
    nanosleep(&d, NULL);
    uint64_t m1 = trlat_mono_ns(), n1 = trlat_now_ns();
    double ratio = (double)(n1 - n0) / (double)(m1 - m0);
    ck_assert(ratio > 0.99 && ratio < 1.01);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tstate");
    TCase *t = tcase_create("records");
    tcase_add_test(t, batches_fold_exactly);
    tcase_add_test(t, python_calls_fold_exactly);
    tcase_add_test(t, untimed_records_count_exactly);
    tcase_add_test(t, sampled_records_weigh);
    tcase_add_test(t, sample_hit_one_in_every);
    tcase_add_test(t, sampled_call_returns_after_fold);
    tcase_add_test(t, threads_are_counted_exactly);
    tcase_add_test(t, slow_all_marks_every_thread);
    tcase_add_test(t, names_registry);
    tcase_add_test(t, clock_tracks_monotonic);
    suite_add_tcase(s, t);
    return s;
}
TRLAT_CHECK_MAIN(suite)
