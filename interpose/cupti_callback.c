#include "interpose/cupti_callback.h"
#include "interpose/clock.h"
#include "interpose/gpu_joinring.h"

#include <stdatomic.h>

/* The launch trlat is making on this thread, until CUPTI's callback for it
 * (or the launch's end). */
static _Thread_local struct trlat_launch *current __attribute__((tls_model("initial-exec")));
static atomic_int on;

static void before(struct trlat_tstate *ts, struct trlat_launch *l)
{
    current = l;
}

static void after(struct trlat_tstate *ts, struct trlat_launch *l)
{
    current = NULL;
}

const struct trlat_launch_hooks trlat_cupti_callback_hooks = {.before = before, .after = after};

void CUPTIAPI trlat_cupti_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                   const void *data)
{
    const CUpti_CallbackData *d = data;
    if (d->callbackSite != CUPTI_API_ENTER || !atomic_load_explicit(&on, memory_order_relaxed))
        return;
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API)
        return;
    struct trlat_joinring *r = trlat_joinring_self();
    if (!r)
        return;
    struct trlat_launch *l = current;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && l) {
        /* trlat's launch: its id is its driver entry time (l->t0 was read
         * just before the driver was called), as in the records join. */
        current = NULL;
        uint64_t id = trlat_ticks_to_time(l->t0);
        l->corr = id ? id : 1;
        trlat_joinring_put(r, d->correlationId, l->corr, TRLAT_JOIN_TRLAT);
        return;
    }
    trlat_joinring_put(r, d->correlationId, trlat_now_ns(),
                       domain == CUPTI_CB_DOMAIN_RUNTIME_API ? TRLAT_JOIN_RUNTIME : TRLAT_JOIN_DRIVER);
}

static void enable_list(const struct trlat_cupti_api *api, CUpti_SubscriberHandle sub, uint32_t enable,
                        CUpti_CallbackDomain domain, const CUpti_CallbackId *ids, size_t n, size_t *ok,
                        CUptiResult *first)
{
    for (size_t i = 0; i < n; i++) {
        CUptiResult rc = api->enable_callback(enable, sub, domain, ids[i]);
        if (rc == CUPTI_SUCCESS)
            (*ok)++;
        else if (*first == CUPTI_SUCCESS)
            *first = rc; /* e.g. a function this libcupti does not know */
    }
}

CUptiResult trlat_cupti_callback_enable(const struct trlat_cupti_api *api, CUpti_SubscriberHandle sub, int enable,
                                        const CUpti_CallbackId *driver, size_t ndriver,
                                        const CUpti_CallbackId *runtime, size_t nruntime)
{
    CUptiResult first = CUPTI_SUCCESS;
    size_t ok = 0;
    enable_list(api, sub, enable != 0, CUPTI_CB_DOMAIN_DRIVER_API, driver, ndriver, &ok, &first);
    enable_list(api, sub, enable != 0, CUPTI_CB_DOMAIN_RUNTIME_API, runtime, nruntime, &ok, &first);
    return ok ? CUPTI_SUCCESS : first;
}

void trlat_cupti_callback_start(void)
{
    atomic_store(&on, 1);
}

void trlat_cupti_callback_after_fork_child(void)
{
    atomic_store(&on, 0);
    current = NULL;
    trlat_joinring_after_fork_child();
}
