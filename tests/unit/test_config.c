#include "interpose/config.h"
#include "tests/unit/check_main.h"

#include <stdlib.h>

static void clear(void)
{
    const char *vars[] = {"TRLAT_DISABLE", "TRLAT_SUMMARY", "TRLAT_CUPTI",  "TRLAT_FASTPATH",
                          "TRLAT_STACKS",  "TRLAT_TRACE",   "TRLAT_OUTPUT", NULL};
    for (int i = 0; vars[i]; i++)
        unsetenv(vars[i]);
}

START_TEST(defaults)
{
    clear();
    trlat_config_load();
    ck_assert_int_eq(trlat_config(TRLAT_OPT_DISABLE), 0);
    ck_assert_int_eq(trlat_config(TRLAT_OPT_SUMMARY), 1);
    ck_assert_int_eq(trlat_config(TRLAT_OPT_CUPTI), TRLAT_CUPTI_AUTO);
    ck_assert_int_eq(trlat_config(TRLAT_OPT_FASTPATH), TRLAT_FASTPATH_OFF);
    ck_assert_int_eq(trlat_config(TRLAT_OPT_TRACE), 0);
    ck_assert_str_eq(trlat_config_output(), "trlat-%p.json");
    ck_assert_str_eq(trlat_config_name(TRLAT_OPT_CUPTI), "auto");
}
END_TEST

START_TEST(good_values)
{
    clear();
    setenv("TRLAT_CUPTI", "0", 1);
    setenv("TRLAT_FASTPATH", "verify", 1);
    setenv("TRLAT_TRACE", "1000", 1);
    setenv("TRLAT_OUTPUT", "/tmp/x-%p.json", 1);
    trlat_config_load();
    ck_assert_int_eq(trlat_config(TRLAT_OPT_CUPTI), TRLAT_CUPTI_OFF);
    ck_assert_int_eq(trlat_config(TRLAT_OPT_FASTPATH), TRLAT_FASTPATH_VERIFY);
    ck_assert_str_eq(trlat_config_name(TRLAT_OPT_FASTPATH), "verify");
    ck_assert_int_eq(trlat_config(TRLAT_OPT_TRACE), 1000);
    ck_assert_str_eq(trlat_config_output(), "/tmp/x-%p.json");
}
END_TEST

START_TEST(bad_values_keep_defaults)
{
    const char *bad[][2] = {{"TRLAT_SUMMARY", "yes"}, {"TRLAT_CUPTI", "yes"},   {"TRLAT_FASTPATH", "2"},
                            {"TRLAT_TRACE", "-1"},    {"TRLAT_TRACE", "12x"},   {"TRLAT_TRACE", "10000001"},
                            {"TRLAT_DISABLE", " 1"},  {"TRLAT_STACKS", "truth"}};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        clear();
        setenv(bad[i][0], bad[i][1], 1);
        trlat_config_load();
        ck_assert_int_eq(trlat_config(TRLAT_OPT_SUMMARY), 1);
        ck_assert_int_eq(trlat_config(TRLAT_OPT_CUPTI), TRLAT_CUPTI_AUTO);
        ck_assert_int_eq(trlat_config(TRLAT_OPT_FASTPATH), TRLAT_FASTPATH_OFF);
        ck_assert_int_eq(trlat_config(TRLAT_OPT_TRACE), 0);
        ck_assert_int_eq(trlat_config(TRLAT_OPT_DISABLE), 0);
        ck_assert_int_eq(trlat_config(TRLAT_OPT_STACKS), 0);
    }
}
END_TEST

START_TEST(on_off_words)
{
    const char *on[] = {"1", "on", "ON", "true", "True"}, *off[] = {"0", "off", "Off", "false", "FALSE"};
    for (unsigned i = 0; i < 5; i++) {
        clear();
        setenv("TRLAT_STACKS", on[i], 1);
        setenv("TRLAT_CUPTI", off[i], 1);
        setenv("TRLAT_FASTPATH", on[i], 1);
        trlat_config_load();
        ck_assert_int_eq(trlat_config(TRLAT_OPT_STACKS), 1);
        ck_assert_int_eq(trlat_config(TRLAT_OPT_CUPTI), TRLAT_CUPTI_OFF);
        ck_assert_int_eq(trlat_config(TRLAT_OPT_FASTPATH), TRLAT_FASTPATH_ON);
        setenv("TRLAT_STACKS", off[i], 1);
        setenv("TRLAT_CUPTI", on[i], 1);
        trlat_config_load();
        ck_assert_int_eq(trlat_config(TRLAT_OPT_STACKS), 0);
        ck_assert_int_eq(trlat_config(TRLAT_OPT_CUPTI), TRLAT_CUPTI_ON);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("config");
    TCase *t = tcase_create("env");
    tcase_add_test(t, defaults);
    tcase_add_test(t, good_values);
    tcase_add_test(t, bad_values_keep_defaults);
    tcase_add_test(t, on_off_words);
    suite_add_tcase(s, t);
    return s;
}
TRLAT_CHECK_MAIN(suite)
