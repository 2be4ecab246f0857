/* Finding and loading libcupti at run time (nothing links it at build time),
 * and the table of the CUPTI functions trlat calls. */
#ifndef TRLAT_CUPTI_LOAD_H
#define TRLAT_CUPTI_LOAD_H

#include <cupti.h>
#include <stddef.h>

struct trlat_cupti_api {
    void *handle;
    char path[512];
    /* required */
    CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
    CUptiResult (*get_result_string)(CUptiResult, const char **);
    CUptiResult (*enable)(CUpti_ActivityKind);
    CUptiResult (*disable)(CUpti_ActivityKind);
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*flush_all)(uint32_t);
    CUptiResult (*get_next_record)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*get_num_dropped)(CUcontext, uint32_t, size_t *);
    CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
    /* optional (NULL when this libcupti lacks them) */
    CUptiResult (*get_version)(uint32_t *);
    CUptiResult (*get_timestamp)(uint64_t *);
    CUptiResult (*register_timestamp_callback)(CUpti_TimestampCallbackFunc);
    CUptiResult (*set_attribute)(CUpti_ActivityAttribute, size_t *, void *);
};

/* Loads libcupti: TRLAT_CUPTI_LIB when set (that file only); otherwise a
 * libcupti already in the process, then $CUDA_HOME (lib64/,
 * targets/x86_64-linux/lib/, extras/CUPTI/lib64/), then beside the CUDA
 * runtime already loaded, then pip's NVIDIA packages (and Triton's copy)
 * in the site-packages of loaded libraries, then the system's search path
 * and /usr/local/cuda. Returns 0, or -1 with why filled in. */
int trlat_cupti_load(struct trlat_cupti_api *api, char *why, size_t len);

#endif
