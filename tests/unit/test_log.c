/* interpose/log.c: a process prints at most 32 lines of what trlat could
 * not do, then one "suppressed" line; TRLAT_FASTPATH_DEBUG's lines count
 * in a budget of their own, so a debugging session's lines never take a
 * warning's place. */
#include "interpose/log.h"
#include "tests/unit/check_main.h"

#include <string.h>
#include <unistd.h>

/* Runs fn with stderr going to a file; returns what was written. */
static char *captured(void (*fn)(void))
{
    static char buf[1 << 20];
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    int saved = dup(2);
    ck_assert_int_ge(saved, 0);
    ck_assert_int_ge(dup2(fileno(f), 2), 0);
    fn();
    ck_assert_int_ge(dup2(saved, 2), 0);
    close(saved);
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

static void forty_warnings(void)
{
    trlat_log_reset();
    for (int i = 0; i < 40; i++)
        trlat_log("warning %d", i);
}

static void debug_then_warning(void)
{
    trlat_log_reset();
    for (int i = 0; i < 100; i++)
        trlat_log_debug("debug %d", i);
    trlat_log("the warning");
}

START_TEST(warnings_are_capped)
{
    char *out = captured(forty_warnings);
    ck_assert_int_eq(count(out, "trlat: warning "), 32);
    ck_assert_ptr_nonnull(strstr(out, "trlat: warning 31\n"));
    ck_assert_ptr_null(strstr(out, "warning 32"));
    ck_assert_int_eq(count(out, "trlat: (further messages suppressed)\n"), 1);
    ck_assert_int_eq(count(out, "\n"), 33);
}
END_TEST

START_TEST(debug_lines_leave_warnings_their_budget)
{
    char *out = captured(debug_then_warning);
    ck_assert_int_eq(count(out, "trlat: debug "), 100);
    ck_assert_ptr_nonnull(strstr(out, "trlat: debug 99\ntrlat: the warning\n"));
    ck_assert_int_eq(count(out, "suppressed"), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("log");
    TCase *tc = tcase_create("budgets");
    tcase_add_test(tc, warnings_are_capped);
    tcase_add_test(tc, debug_lines_leave_warnings_their_budget);
    suite_add_tcase(s, tc);
    return s;
}

TRLAT_CHECK_MAIN(suite)
