/* The join of CUPTI's kernel records with trlat's launches. CUPTI calls
 * trlat at the entry of every driver launch call (the launch functions
 * only, cuptiEnableCallback), on the launching thread, inside the call. The
 * callback's correlation id is the one the kernel's record will carry; it
 * goes into the thread's join ring (gpu_joinring.h), which the buffer
 * callback drains into the GPU statistics:
 *   - trlat's own launch: the launch path stored its driver entry time in
 *     the thread's state just before calling the driver (tstate.h,
 *     cur_t0); the callback takes it (and clears it);
 *   - any other launch call (a CUDA runtime launch whose driver call did not
 *     pass through trlat, another library's): the callback's time.
 * A CUDA runtime launch calls the driver inside it with the same
 * correlation id: through trlat's wrapper (cuGetProcAddress) it is trlat's
 * launch, counted once; otherwise the other kind. */
#ifndef TRLAT_CUPTI_CALLBACK_H
#define TRLAT_CUPTI_CALLBACK_H

#include "interpose/cupti/load.h"

#include <stddef.h>

/* Turns CUPTI's callbacks on the given driver functions on or off (a
 * function this libcupti does not know is skipped); returns CUPTI_SUCCESS
 * when at least one succeeded, else the first failure. */
CUptiResult trlat_cupti_callback_enable(const struct trlat_cupti_api *api, CUpti_SubscriberHandle sub, int on,
                                        const CUpti_CallbackId *driver, size_t ndriver);

/* The subscriber callback to give cuptiSubscribe. */
void CUPTIAPI trlat_cupti_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                   const void *data);

/* In a forked child. */
void trlat_cupti_callback_after_fork_child(void);

#endif
