/* The callback join (TRLAT_CUPTI_JOIN=callback): instead of API and
 * external-correlation activity records, CUPTI calls trlat at the entry of
 * every launch call (driver and runtime launch functions only). The
 * callback's correlation id is the one the kernel's record will carry; it
 * goes, with the launch's time, into the thread's join ring
 * (gpu_joinring.h), which the buffer callback drains into the GPU fold.
 *   - trlat's own launch (trlat_cupti_callback_begin was called on this
 *     thread and the launch has not reached CUPTI yet): its driver entry
 *     time, which also becomes the launch's `corr`;
 *   - any other driver launch: the callback's time;
 *   - a runtime launch: the callback's time, marked runtime. */
#ifndef TRLAT_CUPTI_CALLBACK_H
#define TRLAT_CUPTI_CALLBACK_H

#include "interpose/cupti_load.h"
#include "interpose/launch.h"

#include <stddef.h>

/* Turns CUPTI's callbacks on the given launch functions on or off (a
 * function this libcupti does not know is skipped); returns CUPTI_SUCCESS
 * when at least one succeeded, else the first failure. */
CUptiResult trlat_cupti_callback_enable(const struct trlat_cupti_api *api, CUpti_SubscriberHandle sub, int on,
                                        const CUpti_CallbackId *driver, size_t ndriver,
                                        const CUpti_CallbackId *runtime, size_t nruntime);

/* The subscriber callback to give cuptiSubscribe. */
void CUPTIAPI trlat_cupti_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                   const void *data);

/* Launch hooks: `before` marks the launch trlat is about to make on this
 * thread, `after` clears the mark. */
extern const struct trlat_launch_hooks trlat_cupti_callback_hooks;

/* Callbacks record from now on (after enabling them). */
void trlat_cupti_callback_start(void);

/* In a forked child: callbacks record nothing. */
void trlat_cupti_callback_after_fork_child(void);

#endif
