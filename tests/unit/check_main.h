/* Each unit test file is its own program: TRLAT_CHECK_MAIN(suite_fn). */
#ifndef TRLAT_CHECK_MAIN_H
#define TRLAT_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

#define TRLAT_CHECK_MAIN(make_suite)                              \
    int main(void)                                                \
    {                                                             \
        SRunner *sr = srunner_create(make_suite());               \
        srunner_run_all(sr, CK_NORMAL);                           \
        int failed = srunner_ntests_failed(sr);                   \
        srunner_free(sr);                                         \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;              \
    }

#endif
