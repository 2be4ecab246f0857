#include "interpose/python/pysites.h"
#include "tests/unit/check_main.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static char codes[TRLAT_PYSITES_KEYS * 2]; /* distinct addresses standing in for code objects */

static void setup(void)
{
    trlat_pysites_reset();
}

START_TEST(unknown_key_misses)
{
    struct trlat_pysite_hit h;
    ck_assert_int_eq(trlat_pysite_lookup(&codes[0], 10, &h), 0);
    char buf[64];
    ck_assert_ptr_null(trlat_pysite_text(12345, buf, sizeof buf));
    ck_assert_ptr_null(trlat_pysite_text(0, buf, sizeof buf));
    ck_assert_str_eq(trlat_pysite_text(TRLAT_PYSITE_OTHER, buf, sizeof buf), "(other python sites)");
}
END_TEST

START_TEST(insert_then_hit_with_text)
{
    struct trlat_pysite_hit h, g;
    ck_assert_int_eq(trlat_pysite_insert(&codes[1], 42, "/src/train.py", 17, 0, &h), 1);
    ck_assert_uint_gt(h.site, TRLAT_PYSITE_OTHER);
    ck_assert_int_eq(h.level, TRLAT_PYSITE_USER);
    ck_assert_int_eq(trlat_pysite_lookup(&codes[1], 42, &g), 1);
    ck_assert_uint_eq(g.site, h.site);
    char buf[64];
    ck_assert_str_eq(trlat_pysite_text(h.site, buf, sizeof buf), "/src/train.py:17");
    /* again: already there, not stored twice */
    ck_assert_int_eq(trlat_pysite_insert(&codes[1], 42, "/src/train.py", 17, 0, &g), 0);
    ck_assert_uint_eq(g.site, h.site);
    ck_assert_uint_eq(trlat_pysite_count(), 1);
}
END_TEST

START_TEST(same_line_one_site)
{
    struct trlat_pysite_hit a, b, c;
    trlat_pysite_insert(&codes[1], 10, "m.py", 5, 0, &a);
    trlat_pysite_insert(&codes[1], 12, "m.py", 5, 0, &b); /* another instruction of line 5 */
    trlat_pysite_insert(&codes[2], 10, "m.py", 6, 0, &c);
    ck_assert_uint_eq(a.site, b.site);
    ck_assert_uint_ne(a.site, c.site);
    ck_assert_uint_eq(trlat_pysite_count(), 2);
}
END_TEST

START_TEST(skipped_frames_have_no_site)
{
    struct trlat_pysite_hit h, g;
    trlat_pysite_insert(&codes[3], 4, "/x/triton/runtime/jit.py", 370, TRLAT_PYSITE_RUNTIME, &h);
    ck_assert_int_eq(h.level, TRLAT_PYSITE_RUNTIME);
    ck_assert_uint_eq(h.site, 0);
    ck_assert_int_eq(trlat_pysite_lookup(&codes[3], 4, &g), 1);
    ck_assert_int_eq(g.level, TRLAT_PYSITE_RUNTIME);
    ck_assert_uint_eq(trlat_pysite_count(), 0);
    /* a library's frame has a site (the kernel's, when nearest the launch) */
    trlat_pysite_insert(&codes[4], 4, "/v/site-packages/lib/ops.py", 12, TRLAT_PYSITE_LIBRARY, &h);
    ck_assert_int_eq(h.level, TRLAT_PYSITE_LIBRARY);
    ck_assert_uint_gt(h.site, TRLAT_PYSITE_OTHER);
}
END_TEST

START_TEST(long_file_names_are_kept)
{
    char name[3000];
    memset(name, 'a', sizeof name - 1);
    name[sizeof name - 1] = 0;
    struct trlat_pysite_hit h;
    trlat_pysite_insert(&codes[4], 0, name, 99, 0, &h);
    char buf[4000];
    const char *t = trlat_pysite_text(h.site, buf, sizeof buf);
    ck_assert_uint_eq(strlen(t), sizeof name - 1 + 3);
    char small[16];
    ck_assert_uint_eq(strlen(trlat_pysite_text(h.site, small, sizeof small)), 15); /* truncated, terminated */
}
END_TEST

START_TEST(key_table_is_bounded)
{
    struct trlat_pysite_hit h;
    unsigned stored = 0;
    for (unsigned i = 0; i < TRLAT_PYSITES_KEYS; i++)
        stored += (unsigned)trlat_pysite_insert(&codes[i], 7, "k.py", 1, 0, &h);
    ck_assert_uint_eq(stored, TRLAT_PYSITES_KEYS / 4 * 3);
    ck_assert_uint_gt(h.site, TRLAT_PYSITE_OTHER); /* past the bound: still answered */
    ck_assert_int_eq(trlat_pysite_lookup(&codes[TRLAT_PYSITES_KEYS - 1], 7, &h), 0);
    ck_assert_int_eq(trlat_pysite_lookup(&codes[0], 7, &h), 1);
}
END_TEST

START_TEST(site_table_is_bounded)
{
    struct trlat_pysite_hit h;
    for (int i = 0; i < TRLAT_PYSITES_MAX + 100; i++)
        trlat_pysite_insert(&codes[i % 8], 1000 + i, "many.py", i, 0, &h);
    ck_assert_uint_eq(h.site, TRLAT_PYSITE_OTHER);
    ck_assert_uint_le(trlat_pysite_count(), TRLAT_PYSITES_MAX);
}
END_TEST

static void *hammer(void *arg)
{
    long t = (long)arg;
    for (int round = 0; round < 50; round++)
        for (int i = 0; i < 200; i++) {
            struct trlat_pysite_hit h;
            char file[32];
            snprintf(file, sizeof file, "f%d.py", i % 20); /* shared by all threads */
            if (!trlat_pysite_lookup(&codes[i], i, &h))
                trlat_pysite_insert(&codes[i], i, file, i, 0, &h);
            char buf[64], want[64];
            snprintf(want, sizeof want, "%s:%d", file, i);
            if (strcmp(trlat_pysite_text(h.site, buf, sizeof buf), want) != 0)
                return (void *)(t + 1);
        }
    return NULL;
}

START_TEST(threads_agree)
{
    pthread_t th[4];
    for (long t = 0; t < 4; t++)
        pthread_create(&th[t], NULL, hammer, (void *)t);
    for (int t = 0; t < 4; t++) {
        void *r;
        pthread_join(th[t], &r);
        ck_assert_ptr_null(r);
    }
    ck_assert_uint_eq(trlat_pysite_count(), 200);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pysites");
    TCase *tc = tcase_create("pysites");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, unknown_key_misses);
    tcase_add_test(tc, insert_then_hit_with_text);
    tcase_add_test(tc, same_line_one_site);
    tcase_add_test(tc, skipped_frames_have_no_site);
    tcase_add_test(tc, long_file_names_are_kept);
    tcase_add_test(tc, key_table_is_bounded);
    tcase_add_test(tc, site_table_is_bounded);
    tcase_add_test(tc, threads_agree);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

TRLAT_CHECK_MAIN(suite)
