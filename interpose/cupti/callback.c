#include "interpose/cupti/callback.h"
#include "interpose/clock.h"
#include "interpose/cupti/joinring.h"
#include "interpose/tstate.h"

/* Per launch call: a TLS load or two, a few loads and stores, and for a
 * launch trlat did not make one TSC read. The exit call returns at once. */
void CUPTIAPI trlat_cupti_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    const CUpti_CallbackData *d = data;
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API || d->callbackSite != CUPTI_API_ENTER)
        return;
    struct trlat_joinring *r = trlat_joinring_self();
    if (__builtin_expect(!r, 0))
        return;
    struct trlat_tstate *ts = trlat_tls; /* NULL on a thread trlat never saw launch */
    uint64_t t0 = ts ? ts->cur_t0 : 0;
    if (t0) {
        ts->cur_t0 = 0; /* taken: the launch path knows it has an id */
        trlat_joinring_put(r, d->correlationId, t0, TRLAT_JOIN_TRLAT);
    } else {
        trlat_joinring_put(r, d->correlationId, trlat_ticks(), TRLAT_JOIN_OTHER);
    }
}

CUptiResult trlat_cupti_callback_enable(const struct trlat_cupti_api *api, CUpti_SubscriberHandle sub, int enable,
                                        const CUpti_CallbackId *driver, size_t ndriver)
{
    CUptiResult first = CUPTI_SUCCESS;
    size_t ok = 0;
    for (size_t i = 0; i < ndriver; i++) {
        CUptiResult rc = api->enable_callback(enable != 0, sub, CUPTI_CB_DOMAIN_DRIVER_API, driver[i]);
        if (rc == CUPTI_SUCCESS)
            ok++;
        else if (first == CUPTI_SUCCESS)
            first = rc; /* e.g. a function this libcupti does not know */
    }
    return ok ? CUPTI_SUCCESS : first;
}

void trlat_cupti_callback_after_fork_child(void)
{
    trlat_joinring_after_fork_child();
}
