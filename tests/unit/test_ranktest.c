/* The exact Mann-Whitney U test of `trlat diff` (report/cli/ranktest.c,
 * compiled in: the CLI is its own program). */
#include "check_main.h"
#include "report/cli/ranktest.c"

START_TEST(separated_samples_give_the_smallest_p)
{
    double a[] = {1, 2, 3}, b[] = {4, 5, 6};
    ck_assert_double_eq_tol(cli_rank_p_greater(a, 3, b, 3), 1.0 / 20, 1e-12);
    ck_assert_double_eq_tol(cli_rank_p_min(3, 3), 1.0 / 20, 1e-12);
    ck_assert_double_eq_tol(cli_rank_p_greater(b, 3, a, 3), 1.0, 1e-12); /* b below a: no evidence */
    double c[] = {10, 11};
    ck_assert_double_eq_tol(cli_rank_p_greater(a, 2, c, 2), 1.0 / 6, 1e-12);
}
END_TEST

START_TEST(interleaved_samples_are_not_significant)
{
    /* U = 6 of 9; U's counts over the 20 orderings are 1 1 2 3 3 3 3 2 1 1,
     * so P(U >= 6) = 7 of 20 */
    double a[] = {1.00, 1.08, 0.95}, b[] = {1.13, 0.98, 1.04};
    ck_assert_double_eq_tol(cli_rank_p_greater(a, 3, b, 3), 7.0 / 20, 1e-12);
}
END_TEST

START_TEST(distribution_sums_to_one)
{
    /* P(U >= 0) is 1 for any sizes; ties count one half */
    double a[40], b[24];
    for (int i = 0; i < 40; i++)
        a[i] = i;
    for (int i = 0; i < 24; i++)
        b[i] = -1 - i;
    ck_assert_double_eq_tol(cli_rank_p_greater(a, 40, b, 24), 1.0, 1e-9);
    double t[] = {5, 5}, u[] = {5, 5};
    double p = cli_rank_p_greater(t, 2, u, 2); /* U = 2 (all ties): P(U >= 2) = 4 of 6 */
    ck_assert_double_eq_tol(p, 4.0 / 6, 1e-12);
}
END_TEST

START_TEST(nan_values_are_left_out)
{
    double a[] = {1, NAN, 2}, b[] = {3, 4};
    ck_assert_double_eq_tol(cli_rank_p_greater(a, 3, b, 2), 1.0 / 6, 1e-12);
    ck_assert_double_eq_tol(cli_rank_p_greater(a, 0, b, 2), 1.0, 1e-12);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ranktest");
    TCase *tc = tcase_create("ranktest");
    tcase_add_test(tc, separated_samples_give_the_smallest_p);
    tcase_add_test(tc, interleaved_samples_are_not_significant);
    tcase_add_test(tc, distribution_sums_to_one);
    tcase_add_test(tc, nan_values_are_left_out);
    suite_add_tcase(s, tc);
    return s;
}

TRLAT_CHECK_MAIN(suite)
