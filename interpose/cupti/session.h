/* trlat's CUPTI session (TRLAT_CUPTI=1/auto): a module that subscribes at
 * trlat's start, records kernel activity, joins kernels with launches
 * through CUPTI's launch callbacks (cupti_callback.c), folds activity
 * buffers into the GPU statistics as they complete, and flushes at exit. What the
 * report needs from it: */
#ifndef TRLAT_CUPTI_SESSION_H
#define TRLAT_CUPTI_SESSION_H

#include "interpose/cupti/gpu_stats.h"

/* "on", "off" or "unavailable"; NULL before trlat started. */
const char *trlat_cupti_state(void);
/* Why it is unavailable (NULL otherwise). */
const char *trlat_cupti_reason(void);
/* The GPU statistics, locked against CUPTI's thread, or NULL (and nothing
 * locked) when CUPTI did not record in this process. */
struct trlat_gpu_stats *trlat_cupti_fold_lock(void);
void trlat_cupti_fold_unlock(void);

#endif
