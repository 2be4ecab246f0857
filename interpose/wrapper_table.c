/* Every wrapper by entry point and slot (see real.h). */
#include "interpose/fn_list.h"

/* Declared as data: cuda.h's prototypes are not wanted here. */

#define DECLARE(n) extern char n[], n##_s1[], n##_s2[], n##_s3[];
TRLAT_WRAPPED(DECLARE)
#undef DECLARE

extern void *const trlat_wrappers[TRLAT_FN_COUNT][TRLAT_SLOTS];
void *const trlat_wrappers[TRLAT_FN_COUNT][TRLAT_SLOTS] = {
#define ROW(n) [TRLAT_FN_##n] = {n, n##_s1, n##_s2, n##_s3},
    TRLAT_WRAPPED(ROW)
#undef ROW
};
