/* Each unit test file is its own program: TRLAT_CHECK_MAIN(suite_fn).
 * Tests that record launches start trlat in the test process, which then
 * writes a report at exit: those go to a temporary directory removed at the
 * end, and the summary is off. */
#ifndef TRLAT_CHECK_MAIN_H
#define TRLAT_CHECK_MAIN_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#define TRLAT_CHECK_MAIN(make_suite)                               \
    int main(void)                                                 \
    {                                                              \
        char dir_[] = "/tmp/trlat-unit-XXXXXX", out_[64], rm_[64]; \
        if (!mkdtemp(dir_))                                        \
            return EXIT_FAILURE;                                   \
        snprintf(out_, sizeof out_, "%s/r-%%p.json", dir_);        \
        setenv("TRLAT_OUTPUT", out_, 1);                           \
        setenv("TRLAT_SUMMARY", "0", 1);                           \
        setenv("TRLAT_CUPTI", "0", 1);                             \
        SRunner *sr = srunner_create(make_suite());                \
        srunner_run_all(sr, CK_NORMAL);                            \
        int failed = srunner_ntests_failed(sr);                    \
        srunner_free(sr);                                          \
        snprintf(rm_, sizeof rm_, "rm -rf %s", dir_);              \
        if (system(rm_) != 0)                                      \
            return EXIT_FAILURE;                                   \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;               \
    }

#endif
