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

static Suite *suite(void)
{
    Suite *s = suite_create("output");
    TCase *t = tcase_create("files");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, expand_template);
    tcase_add_test(t, never_follows_symlinks_nor_clobbers);
    tcase_add_test(t, json_escapes_and_repairs_utf8);
    suite_add_tcase(s, t);
    return s;
}
TRLAT_CHECK_MAIN(suite)
