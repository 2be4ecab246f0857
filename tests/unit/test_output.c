#include "interpose/config.h"
#include "report/json.h"
#include "report/output.h"
#include "interpose/safefile.h"
#include "tests/unit/check_main.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static char dir[256], tmpdir[300];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/trlat-unit-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(tmpdir, sizeof tmpdir, "%s/tmp", dir);
    ck_assert_int_eq(mkdir(tmpdir, 0755), 0);
    setenv("TMPDIR", tmpdir, 1);
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void fill_text(FILE *f, void *arg)
{
    fputs(arg, f);
}

static const char *slurp(const char *path)
{
    static char buf[4096];
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static int entries(const char *d) /* names in d but "." and ".." */
{
    DIR *dd = opendir(d);
    int n = 0;
    for (struct dirent *e; dd && (e = readdir(dd));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (dd)
        closedir(dd);
    return n;
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
START_TEST(q_names_a_variable)
{
    char out[256];
    setenv("TRLAT_TEST_JOB", "job/7", 1);
    ck_assert_int_eq(trlat_output_expand("r-%q{TRLAT_TEST_JOB}-%q{TRLAT_TEST_UNSET}.json", out, sizeof out), 0);
    ck_assert_str_eq(out, "r-job_7-.json");
    ck_assert_int_eq(trlat_output_expand("r-%q-%q{open", out, sizeof out), 0);
    ck_assert_str_eq(out, "r-%q-%q{open"); /* not %q{VAR}: as written */
    unsetenv("TRLAT_TEST_JOB");
}
END_TEST

START_TEST(rank_parsed_strictly)
{
    const char *bad[] = {"../../etc/x",          " 3",  "3 ", "+3", "-1", "3a", "0x10", "2147483648",
                         "99999999999999999999", "1/2", "٣"};
    char out[256];
    unsetenv("LOCAL_RANK");
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("RANK", bad[i], 1);
        ck_assert_int_eq(trlat_config_rank(TRLAT_RANK), -1);
        ck_assert_int_eq(trlat_output_expand("r-%r", out, sizeof out), 0);
        ck_assert_str_eq(out, "r-norank");
    }
    setenv("LOCAL_RANK", "5", 1); /* an ignored RANK leaves LOCAL_RANK to count */
    ck_assert_int_eq(trlat_output_expand("r-%r", out, sizeof out), 0);
    ck_assert_str_eq(out, "r-5");
    setenv("RANK", "2147483647", 1);
    ck_assert_int_eq(trlat_config_rank(TRLAT_RANK), 2147483647);
    setenv("RANK", "0", 1);
    ck_assert_int_eq(trlat_output_expand("r-%r", out, sizeof out), 0);
    ck_assert_str_eq(out, "r-0");
    unsetenv("RANK");
    unsetenv("LOCAL_RANK");
}
END_TEST

START_TEST(never_follows_symlinks_nor_clobbers)
{
    char link[300], target[300], tmpl[300], want[300];
    snprintf(link, sizeof link, "%s/r.json", dir);
    snprintf(target, sizeof target, "%s/target", dir);
    ck_assert_int_eq(symlink(target, link), 0);
    snprintf(tmpl, sizeof tmpl, "%s/r.json", dir);
    struct trlat_output a = {0}, b = {0};
    ck_assert_int_eq(trlat_output_write(&a, tmpl, fill_text, "first\n"), 0);
    snprintf(want, sizeof want, "%s/r.1.json", dir);
    ck_assert_str_eq(a.path, want);
    ck_assert_str_eq(slurp(want), "first\n");
    ck_assert_int_ne(access(target, F_OK), 0);
    ck_assert_int_eq(trlat_output_write(&b, tmpl, fill_text, "second\n"), 0);
    snprintf(want, sizeof want, "%s/r.2.json", dir);
    ck_assert_str_eq(b.path, want);
    ck_assert_str_eq(slurp(a.path), "first\n");
    ck_assert_int_eq(entries(dir), 4); /* tmp, r.json, r.1.json, r.2.json: no temporary left */
}
END_TEST

/* A later write by the same process replaces its own report, atomically
 * (the name stays); a file put there by someone else is never replaced. */
START_TEST(rewrite_replaces_own_report)
{
    char tmpl[300], other[300];
    snprintf(tmpl, sizeof tmpl, "%s/r.json", dir);
    struct trlat_output o = {0};
    ck_assert_int_eq(trlat_output_write(&o, tmpl, fill_text, "v1\n"), 0);
    ck_assert_str_eq(o.path, tmpl);
    ck_assert_int_eq(trlat_output_write(&o, "ignored", fill_text, "v2\n"), 0);
    ck_assert_str_eq(o.path, tmpl);
    ck_assert_str_eq(slurp(tmpl), "v2\n");
    ck_assert_int_eq(entries(dir), 2);
    /* someone else's file at the name now */
    snprintf(other, sizeof other, "%s/theirs", dir);
    FILE *f = fopen(other, "w");
    fputs("theirs\n", f);
    fclose(f);
    ck_assert_int_eq(rename(other, tmpl), 0);
    ck_assert_int_eq(trlat_output_write(&o, "ignored", fill_text, "v3\n"), 0);
    snprintf(other, sizeof other, "%s/r.1.json", dir);
    ck_assert_str_eq(o.path, other);
    ck_assert_str_eq(slurp(tmpl), "theirs\n");
    ck_assert_str_eq(slurp(other), "v3\n");
}
END_TEST

START_TEST(directory_means_default_name)
{
    char tmpl[300], want[300];
    struct trlat_output a = {0}, b = {0};
    snprintf(want, sizeof want, "%s/trlat-%d.json", dir, (int)getpid());
    ck_assert_int_eq(trlat_output_write(&a, dir, fill_text, "x\n"), 0);
    ck_assert_str_eq(a.path, want);
    snprintf(tmpl, sizeof tmpl, "%s/sub/", dir);
    ck_assert_int_eq(mkdir(tmpl, 0755), 0);
    snprintf(want, sizeof want, "%s/sub/trlat-%d.json", dir, (int)getpid());
    ck_assert_int_eq(trlat_output_write(&b, tmpl, fill_text, "x\n"), 0);
    ck_assert_str_eq(b.path, want);
}
END_TEST

static void expect_refused(const char *tmpl, const char *beside)
{
    char want[PATH_MAX];
    struct trlat_output o = {0};
    ck_assert_int_eq(trlat_output_write(&o, tmpl, fill_text, "r\n"), 0);
    snprintf(want, sizeof want, "%s/trlat-%d.json", tmpdir, (int)getpid());
    ck_assert_str_eq(o.path, want);
    ck_assert_str_eq(slurp(want), "r\n");
    unlink(want);
    if (beside)
        ck_assert_int_ne(access(beside, F_OK), 0);
}

/* Devices, FIFOs, sockets: refused (never opened, nothing written beside
 * them), the report in $TMPDIR. */
START_TEST(special_files_refused)
{
    char fifo[300], sock[300], beside[320];
    expect_refused("/dev/null", "/dev/null.1");
    expect_refused("/dev/stdout", "/dev/stdout.1");
    expect_refused("/dev/fd/1", NULL);
    expect_refused("/proc/self/fd/1", NULL);
    snprintf(fifo, sizeof fifo, "%s/fifo.json", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    snprintf(beside, sizeof beside, "%s/fifo.1.json", dir);
    expect_refused(fifo, beside);
    snprintf(sock, sizeof sock, "%s/sock", dir);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%.100s", sock);
    ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    snprintf(beside, sizeof beside, "%s/sock.1", dir);
    expect_refused(sock, beside);
    close(s);
    char link[300];
    snprintf(link, sizeof link, "%s/null.json", dir); /* a symlink to a device */
    ck_assert_int_eq(symlink("/dev/null", link), 0);
    snprintf(beside, sizeof beside, "%s/null.1.json", dir);
    expect_refused(link, beside);
}
END_TEST

static unsigned mode_of(const char *path)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    return st.st_mode & 07777;
}

/* 0644 minus umask where the user asked; 0600 in the shared fallback. */
START_TEST(fallback_reports_are_private)
{
    char tmpl[300];
    umask(022);
    struct trlat_output a = {0}, b = {0}, c = {0};
    snprintf(tmpl, sizeof tmpl, "%s/r.json", dir);
    ck_assert_int_eq(trlat_output_write(&a, tmpl, fill_text, "x\n"), 0);
    ck_assert_uint_eq(mode_of(a.path), 0644);
    ck_assert_int_eq(trlat_output_write(&b, "/proc/no/such/dir/r.json", fill_text, "x\n"), 0);
    ck_assert_str_eq(b.path, strcat(strcpy(tmpl, tmpdir), "/r.json"));
    ck_assert_uint_eq(mode_of(b.path), 0600);
    umask(077);
    snprintf(tmpl, sizeof tmpl, "%s/u.json", dir);
    ck_assert_int_eq(trlat_output_write(&c, tmpl, fill_text, "x\n"), 0);
    ck_assert_uint_eq(mode_of(c.path), 0600);
    umask(022);
}
END_TEST

/* TRLAT_REPORT_LIST: each new report's absolute path, one line; after a
 * chdir, beside a taken name, in the fallback. A rewrite adds no line. */
START_TEST(report_list_lines)
{
    char list[300], sub[300], want[2048], cwd[PATH_MAX];
    snprintf(list, sizeof list, "%s/list", dir);
    snprintf(sub, sizeof sub, "%s/sub", dir);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    ck_assert_int_eq(chdir(sub), 0);
    struct trlat_output a = {.list = list}, b = {.list = list}, c = {.list = list};
    ck_assert_int_eq(trlat_output_write(&a, "r.json", fill_text, "a\n"), 0);
    ck_assert_int_eq(trlat_output_write(&a, "r.json", fill_text, "a2\n"), 0);
    ck_assert_int_eq(chdir(dir), 0);
    ck_assert_int_eq(trlat_output_write(&b, "sub/r.json", fill_text, "b\n"), 0);
    ck_assert_int_eq(trlat_output_write(&c, "/proc/none/r.json", fill_text, "c\n"), 0);
    ck_assert_int_eq(chdir(cwd), 0);
    snprintf(want, sizeof want, "%s/r.json\n%s/r.1.json\n%s/r.json\n", sub, sub, tmpdir);
    ck_assert_str_eq(slurp(list), want);
    ck_assert_uint_eq(mode_of(list), 0600);
}
END_TEST

/* The helper for appended files: a regular file only, never through a symlink. */
START_TEST(append_only_to_regular_files)
{
    char path[300], target[300], fifo[300];
    const char *why = NULL;
    snprintf(path, sizeof path, "%s/log", dir);
    int fd = trlat_file_append(path, 0644, &why);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "one\n", 4), 4);
    close(fd);
    fd = trlat_file_append(path, 0644, &why);
    ck_assert_int_eq(write(fd, "two\n", 4), 4);
    ck_assert_int_ne(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
    close(fd);
    ck_assert_str_eq(slurp(path), "one\ntwo\n");
    snprintf(target, sizeof target, "%s/target", dir);
    snprintf(path, sizeof path, "%s/link", dir);
    ck_assert_int_eq(symlink(target, path), 0);
    ck_assert_int_eq(trlat_file_append(path, 0644, &why), -1);
    ck_assert_str_eq(why, "a symbolic link, not followed");
    ck_assert_int_ne(access(target, F_OK), 0);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(trlat_file_append(fifo, 0644, &why), -1);
    ck_assert_str_eq(why, "a FIFO");
    ck_assert_int_eq(trlat_file_append("/dev/null", 0644, &why), -1);
    ck_assert_str_eq(why, "a character device");
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
        {"\xe2\x82"
         "A",
         R "A"},
        {"\xf0\x9f"
         "A",
         R "A"},
        {"\xf0\x9f\x98"
         "A",
         R "A"},
        {"\xe2\x82\xe2\x82\xac", R "\xe2\x82\xac"},
        /* lone continuation bytes */
        {"\x80", R},
        {"a\xbf"
         "b\x80\x80",
         "a" R "b" R R},
        /* control characters escaped, DEL kept */
        {"\x01\x1f\x7f\t\r", "\\u0001\\u001f\x7f\\t\\r"},
    };
    char want[128];
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(want, sizeof want, "\"%s\"", cases[i][1]);
        ck_assert_msg(strcmp(json_of(cases[i][0]), want) == 0, "case %u: got %s, expected %s", i, json_of(cases[i][0]),
                      want);
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
    tcase_add_test(t, q_names_a_variable);
    tcase_add_test(t, never_follows_symlinks_nor_clobbers);
    tcase_add_test(t, rewrite_replaces_own_report);
    tcase_add_test(t, directory_means_default_name);
    tcase_add_test(t, special_files_refused);
    tcase_add_test(t, fallback_reports_are_private);
    tcase_add_test(t, report_list_lines);
    tcase_add_test(t, append_only_to_regular_files);
    tcase_add_test(t, json_escapes_and_repairs_utf8);
    tcase_add_test(t, json_strict_utf8);
    suite_add_tcase(s, t);
    return s;
}
TRLAT_CHECK_MAIN(suite)
