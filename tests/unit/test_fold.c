#include "report/fold.h"
#include "tests/unit/check_main.h"

#include <stdio.h>
#include <stdlib.h>

/* The fold's name index at every size a job reaches: entries found again
 * before and after the sort rebuilds it (the rebuild once sized it for 256
 * names whatever the count, and its probe loop never ended past that). */
START_TEST(name_index_past_every_size)
{
    static const size_t sizes[] = {1, 255, 256, 257, 4096, 100000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        struct trlat_fold *f = calloc(1, sizeof *f);
        ck_assert_ptr_nonnull(f);
        char name[32];
        for (size_t i = 0; i < sizes[s]; i++) {
            snprintf(name, sizeof name, "k%zu", i);
            struct trlat_kstats *k = trlat_fold_kernel(f, name);
            ck_assert_ptr_nonnull(k);
            k->driver.sum = i; /* the sort reorders them */
        }
        ck_assert_uint_eq(f->n, sizes[s]);
        trlat_fold_sort(f);
        ck_assert_uint_ge(f->index_cap, 2 * f->n);
        for (size_t i = 0; i < sizes[s]; i++) {
            snprintf(name, sizeof name, "k%zu", i);
            struct trlat_kstats *k = trlat_fold_kernel(f, name);
            ck_assert_uint_eq(k->driver.sum, i);
        }
        ck_assert_uint_eq(f->n, sizes[s]); /* found, not added again */
        ck_assert_ptr_nonnull(trlat_fold_kernel(f, "new after the sort"));
        ck_assert_uint_eq(f->n, sizes[s] + 1);
        trlat_fold_free(f);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fold");
    TCase *t = tcase_create("fold");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, name_index_past_every_size);
    suite_add_tcase(s, t);
    return s;
}

TRLAT_CHECK_MAIN(suite)
