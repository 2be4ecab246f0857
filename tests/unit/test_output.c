#include "interpose/config.h"
#include "report/json.h"
#include "report/output.h"
#include "tests/unit/check_main.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/trlat-unit-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(expand_template)
{
    char out[256], want[256];
    setenv("RANK", "7", 1);
    ck_assert_int_eq(trlat_output_expand("a-%p-%r-%%-%x.json", out, sizeof out), 0);
    snprintf(want, sizeof want, "a-%d-7-%%-%%x.json", (int)getpid());
    ck_assert_str_eq(out, want);
    unsetenv("RANK");
    unsetenv("LOCAL_RANK");
    ck_assert_int_eq(trlat_output_expand("r%r", out, sizeof out), 0);
    ck_assert_str_eq(out, "rnorank");
    ck_assert_int_eq(trlat_output_expand("0123456789", out, 5), -1);
}
END_TEST

/* RANK and LOCAL_RANK: a plain decimal 0..INT_MAX, else absent. */
START_TEST(rank_parsed_strictly)
{
    const char *bad[] = {"../../etc/x", " 3", "3 ", "+3", "-1", "3a", "0x10", "2147483648",
                         "99999999999999999999", "1/2", "٣"};
    char out[256];
    unsetenv("LOCAL_RANK");
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("RANK", bad[i], 1);
        ck_assert_int_eq(trlat_config_rank("RANK"), -1);
        ck_assert_int_eq(trlat_output_expand("r-%r", out, sizeof out), 0);
        ck_assert_str_eq(out, "r-norank");
    }
    setenv("LOCAL_RANK", "5", 1); /* an ignored RANK leaves LOCAL_RANK to count */
    ck_assert_int_eq(trlat_output_expand("r-%r", out, sizeof out), 0);
    ck_assert_str_eq(out, "r-5");
    setenv("RANK", "2147483647", 1);
    ck_assert_int_eq(trlat_config_rank("RANK"), 2147483647);
    setenv("RANK", "0", 1);
    ck_assert_int_eq(trlat_output_expand("r-%r", out, sizeof out), 0);
    ck_assert_str_eq(out, "r-0");
    unsetenv("RANK");
    unsetenv("LOCAL_RANK");
}
END_TEST

START_TEST(never_follows_symlinks_nor_clobbers)
{
    char link[300], target[300], path[512], tmpl[300];
    snprintf(link, sizeof link, "%s/r.json", dir);
    snprintf(target, sizeof target, "%s/target", dir);
    ck_assert_int_eq(symlink(target, link), 0);
    snprintf(tmpl, sizeof tmpl, "%s/r.json", dir);
    FILE *f = trlat_output_create(tmpl, path, sizeof path);
    ck_assert_ptr_nonnull(f);
    fclose(f);
    char want[300];
    snprintf(want, sizeof want, "%s/r.1.json", dir);
    ck_assert_str_eq(path, want);
    ck_assert_int_ne(access(target, F_OK), 0);
    f = trlat_output_create(tmpl, path, sizeof path);
    ck_assert_ptr_nonnull(f);
    fclose(f);
    snprintf(want, sizeof want, "%s/r.2.json", dir);
    ck_assert_str_eq(path, want);
}
END_TEST

static const char *json_of(const char *s)
{
    static char buf[512];
    memset(buf, 0, sizeof buf);
    FILE *m = fmemopen(buf, sizeof buf, "w");
    struct trlat_json j;
    trlat_json_begin(&j, m);
    trlat_json_str(&j, NULL, s);
    fclose(m);
    return buf;
}

START_TEST(json_escapes_and_repairs_utf8)
{
    char buf[512] = "";
    FILE *m = fmemopen(buf, sizeof buf, "w");
    struct trlat_json j;
    trlat_json_begin(&j, m);
    trlat_json_obj(&j, NULL);
    trlat_json_str(&j, "s", "a\"b\\c\n\x01 \xc3\xa9 \xff end");
    trlat_json_u64(&j, "n", 18446744073709551615ULL);
    trlat_json_arr(&j, "a");
    trlat_json_null(&j, NULL);
    trlat_json_bool(&j, NULL, 1);
    trlat_json_end_arr(&j);
    trlat_json_end_obj(&j);
    fclose(m);
    ck_assert_str_eq(buf, "{\"s\":\"a\\\"b\\\\c\\n\\u0001 \xc3\xa9 \\ufffd end\",\"n\":18446744073709551615,"
                          "\"a\":[null,true]}\n");
}
END_TEST

#define R "\\ufffd"
/* Every class of invalid UTF-8, one U+FFFD per maximal invalid subpart. */
START_TEST(json_strict_utf8)
{
    const char *cases[][2] = {
        /* valid: unchanged, the edges of each range included */
        {"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},
        {"\xc2\x80\xdf\xbf", "\xc2\x80\xdf\xbf"},
        {"\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf", "\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf"},
        {"\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf"},
        /* overlong forms */
        {"\xc0\x80", R R},
        {"\xc1\xbf", R R},
        {"\xe0\x80\x80", R R R},
        {"\xe0\x9f\xbf", R R R},
        {"\xf0\x80\x80\x80", R R R R},
        {"\xf0\x8f\xbf\xbf", R R R R},
        /* surrogates */
        {"\xed\xa0\x80", R R R},
        {"\xed\xbf\xbf", R R R},
        /* above U+10FFFF */
        {"\xf4\x90\x80\x80", R R R R},
        {"\xf5\x80\x80\x80", R R R R},
        {"\xf8\x88\x80\x80\x80", R R R R R},
        {"\xfe\xff", R R},
        /* truncated, at the end and before ASCII */
        {"a\xc3", "a" R},
        {"a\xe2\x82", "a" R},
        {"a\xf0\x9f\x98", "a" R},
        {"\xe2\x82" "A", R "A"},
        {"\xf0\x9f" "A", R "A"},
        {"\xf0\x9f\x98" "A", R "A"},
        {"\xe2\x82\xe2\x82\xac", R "\xe2\x82\xac"},
        /* lone continuation bytes */
        {"\x80", R},
        {"a\xbf" "b\x80\x80", "a" R "b" R R},
        /* control characters escaped, DEL kept */
        {"\x01\x1f\x7f\t\r", "\\u0001\\u001f\x7f\\t\\r"},
    };
    char want[128];
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(want, sizeof want, "\"%s\"", cases[i][1]);
        ck_assert_msg(strcmp(json_of(cases[i][0]), want) == 0, "case %u: got %s, expected %s", i,
                      json_of(cases[i][0]), want);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("output");
    TCase *t = tcase_create("files");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, expand_template);
    tcase_add_test(t, rank_parsed_strictly);
    tcase_add_test(t, never_follows_symlinks_nor_clobbers);
    tcase_add_test(t, json_escapes_and_repairs_utf8);
    tcase_add_test(t, json_strict_utf8);
    suite_add_tcase(s, t);
    return s;
}
TRLAT_CHECK_MAIN(suite)
