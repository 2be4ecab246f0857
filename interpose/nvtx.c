/* NVTX ranges as regions. NVTX's loader (in every program that pushes
 * ranges: torch.cuda.nvtx, the C API) dlopens the library named by
 * NVTX_INJECTION64_PATH on its first call and calls its
 * InitializeInjectionNvtx2; `trlat run` points that variable at
 * libtrlat.so when it is unset (a tool that set it keeps it). The core
 * module's RangePush and RangePop then come here, on the pushing thread:
 * a push opens a region named by its message, a pop closes the innermost,
 * as NVTX's own per-thread stack nests them. Start/end ranges, which need
 * not nest or stay on one thread, are left to NVTX (not regions).
 *
 * The ABI below is NVTX v3's (nvtx3/nvtxDetail/nvtxTypes.h), declared here
 * because only its layout is needed: the export table id, the callback
 * module and function ids, and nvtxEventAttributes_t's message fields. */
#include "interpose/lifecycle.h"
#include "interpose/log.h"
#include "interpose/region.h"

#include <stddef.h>
#include <stdint.h>

typedef void (*nvtx_fn)(void);
typedef const void *(*nvtx_get_export_table)(uint32_t id);
struct nvtx_callbacks {
    size_t size;
    int (*get_module_function_table)(int module, nvtx_fn ***table, unsigned *size);
};
enum { NVTX_ETID_CALLBACKS = 1, NVTX_CB_MODULE_CORE = 1 };
enum { CBID_RANGE_PUSH_EX = 8, CBID_RANGE_PUSH_A = 9, CBID_RANGE_POP = 11 };
enum { NVTX_MESSAGE_TYPE_ASCII = 1 };
struct nvtx_event_attributes { /* nvtxEventAttributes_v2 */
    uint16_t version, size;
    uint32_t category;
    int32_t color_type;
    uint32_t color;
    int32_t payload_type, reserved0;
    uint64_t payload;
    int32_t message_type;
    const void *message;
};
_Static_assert(offsetof(struct nvtx_event_attributes, message_type) == 32 &&
                   offsetof(struct nvtx_event_attributes, message) == 40,
               "nvtxEventAttributes_t's layout");

static int push_a(const char *message)
{
    return trlat_region_push(message ? message : "(nvtx)");
}

static int push_ex(const struct nvtx_event_attributes *a)
{
    /* a wide or registered message is not read: the region is "(nvtx)" */
    int ascii = a && a->size >= offsetof(struct nvtx_event_attributes, message) + sizeof a->message &&
                a->message_type == NVTX_MESSAGE_TYPE_ASCII;
    return push_a(ascii ? a->message : NULL);
}

static int pop(void)
{
    return trlat_region_pop();
}

TRLAT_EXPORT int InitializeInjectionNvtx2(nvtx_get_export_table get)
{
    const struct nvtx_callbacks *cb = get ? get(NVTX_ETID_CALLBACKS) : NULL;
    nvtx_fn **table = NULL;
    unsigned n = 0;
    if (!cb || cb->size < sizeof *cb || !cb->get_module_function_table ||
        !cb->get_module_function_table(NVTX_CB_MODULE_CORE, &table, &n) || !table || n <= CBID_RANGE_POP) {
        trlat_log("NVTX's loader gave no core function table; NVTX ranges are not regions");
        return 0;
    }
    *table[CBID_RANGE_PUSH_A] = (nvtx_fn)push_a;
    *table[CBID_RANGE_PUSH_EX] = (nvtx_fn)push_ex;
    *table[CBID_RANGE_POP] = (nvtx_fn)pop;
    return 1;
}
