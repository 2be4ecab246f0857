/* The report's "python" object: the hook's state and what its calls did
 * (docs/PYHOOK.md). null when no Python interpreter was seen. */
#include "interpose/python/pyhook.h"
#include "report/json.h"
#include "report/sections.h"

static void add_thread(const struct trlat_tstate *ts, void *arg)
{
    uint64_t *sum = arg;
    for (int i = 0; i < TRLAT_PYC_KINDS; i++)
        sum[i] += TRLAT_RD(ts->py_calls[i]);
}

void trlat_python_section(struct trlat_json *j)
{
    const char *state = atomic_load(&trlat_pyhook_state);
    if (!state) {
        trlat_json_null(j, "python");
        return;
    }
    uint64_t c[TRLAT_PYC_KINDS] = {0};
    trlat_tstate_foreach_thread(add_thread, c);
    trlat_json_obj(j, "python");
    trlat_json_str(j, "hook", state);
    trlat_json_str(j, "triton_version", trlat_pyhook_triton_version[0] ? trlat_pyhook_triton_version : NULL);
    trlat_json_str(j, "reason", trlat_pyhook_reason[0] ? trlat_pyhook_reason : NULL);
    trlat_json_str(j, "frame_reads", trlat_pyhook_frame_reads());
    uint64_t one = c[TRLAT_PYC_ONE_LAUNCH], multi = c[TRLAT_PYC_MULTI_LAUNCH], warmup = c[TRLAT_PYC_NO_LAUNCH_WARMUP],
             error = c[TRLAT_PYC_NO_LAUNCH_ERROR], other = c[TRLAT_PYC_NO_LAUNCH_OTHER];
    trlat_json_u64(j, "calls", one + multi + warmup + error + other);
    trlat_json_u64(j, "nested_calls", c[TRLAT_PYC_NESTED]);
    trlat_json_u64(j, "calls_one_launch", one);
    trlat_json_u64(j, "calls_multi_launch", multi);
    trlat_json_obj(j, "calls_without_launch");
    trlat_json_u64(j, "warmup", warmup);
    trlat_json_u64(j, "error", error);
    trlat_json_u64(j, "other", other);
    trlat_json_end_obj(j);
    trlat_json_end_obj(j);
}
