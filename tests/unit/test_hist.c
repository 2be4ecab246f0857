#include "interpose/hist.h"
#include "tests/unit/check_main.h"

#include <string.h>

START_TEST(every_value_lies_in_its_bucket)
{
    /* the first value outside its bucket, asserted once: check's
     * assertions cost a write each */
    uint64_t bad = UINT64_MAX;
    for (uint64_t v = 0; v < 100000 && bad == UINT64_MAX; v++) {
        unsigned i = trlat_hist_index(v);
        if (i >= TRLAT_HIST_BUCKETS || trlat_hist_lower(i) > v ||
            (i + 1 < TRLAT_HIST_BUCKETS && trlat_hist_lower(i + 1) <= v))
            bad = v;
    }
    ck_assert_msg(bad == UINT64_MAX, "value %llu is outside its bucket", (unsigned long long)bad);
    for (unsigned s = 17; s < 40; s++) {
        uint64_t v = ((uint64_t)1 << s) + 12345;
        unsigned i = trlat_hist_index(v);
        ck_assert_uint_le(trlat_hist_lower(i), v);
        ck_assert_uint_gt(trlat_hist_lower(i + 1), v);
    }
}
END_TEST

START_TEST(index_is_monotonic_and_bounded)
{
    unsigned prev = 0;
    for (uint64_t v = 1; v < ((uint64_t)1 << 60); v = v + v / 4 + 1) {
        unsigned i = trlat_hist_index(v);
        ck_assert_uint_ge(i, prev);
        prev = i;
    }
    ck_assert_uint_eq(trlat_hist_index(UINT64_MAX), TRLAT_HIST_BUCKETS - 1);
    ck_assert_uint_eq(TRLAT_HIST_BUCKETS, 304);
}
END_TEST

START_TEST(midpoint_error_is_small)
{
    for (unsigned i = 16; i < TRLAT_HIST_BUCKETS - 1; i++) {
        uint64_t lo = trlat_hist_lower(i), hi = trlat_hist_lower(i + 1) - 1, mid = trlat_hist_mid(i);
        ck_assert(mid >= lo && mid <= hi);
        ck_assert((double)(mid - lo) / (double)lo <= 0.0625);
    }
}
END_TEST

START_TEST(stats_and_quantiles)
{
    static struct trlat_stat s;
    memset(&s, 0, sizeof s);
    for (uint64_t v = 1; v <= 1000; v++)
        trlat_stat_add(&s, v * 1000);
    ck_assert_uint_eq(s.count, 1000);
    ck_assert_uint_eq(s.min, 1000);
    ck_assert_uint_eq(s.max, 1000000);
    ck_assert_uint_eq(s.sum, 500500000);
    uint64_t p50 = trlat_stat_quantile(&s, 0.5), p99 = trlat_stat_quantile(&s, 0.99);
    ck_assert(p50 > 500000 * 0.93 && p50 < 500000 * 1.07);
    ck_assert(p99 > 990000 * 0.93 && p99 <= 1000000);
    ck_assert_uint_eq(trlat_stat_quantile(&s, 1.0), 1000000); /* clamped to max */
}
END_TEST

START_TEST(single_value_quantiles_are_exact)
{
    static struct trlat_stat s;
    memset(&s, 0, sizeof s);
    trlat_stat_add(&s, 3333);
    ck_assert_uint_eq(trlat_stat_quantile(&s, 0.5), 3333);
    ck_assert_uint_eq(trlat_stat_quantile(&s, 0.99), 3333);
    memset(&s, 0, sizeof s);
    ck_assert_uint_eq(trlat_stat_quantile(&s, 0.5), 0);
}
END_TEST

START_TEST(merge_equals_combined)
{
    static struct trlat_stat a, b, all;
    memset(&a, 0, sizeof a), memset(&b, 0, sizeof b), memset(&all, 0, sizeof all);
    for (uint64_t v = 1; v < 5000; v += 7) {
        trlat_stat_add(v % 2 ? &a : &b, v * 13);
        trlat_stat_add(&all, v * 13);
    }
    trlat_stat_merge(&a, &b);
    ck_assert_int_eq(memcmp(&a, &all, sizeof a), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("hist");
    TCase *t = tcase_create("core");
    tcase_add_test(t, every_value_lies_in_its_bucket);
    tcase_add_test(t, index_is_monotonic_and_bounded);
    tcase_add_test(t, midpoint_error_is_small);
    tcase_add_test(t, stats_and_quantiles);
    tcase_add_test(t, single_value_quantiles_are_exact);
    tcase_add_test(t, merge_equals_combined);
    suite_add_tcase(s, t);
    return s;
}
TRLAT_CHECK_MAIN(suite)
