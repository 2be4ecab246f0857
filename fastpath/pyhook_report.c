/* The report's "python" object: the hook's state and what its calls did
 * (docs/PYHOOK.md). null when no Python interpreter was seen. */
#include "fastpath/pyhook.h"
#include "report/json.h"
#include "report/writer.h"

static uint64_t rd(_Atomic uint64_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

static void python_json(struct trlat_json *j)
{
    const char *state = atomic_load(&trlat_pyhook_state);
    if (!state) {
        trlat_json_null(j, "python");
        return;
    }
    struct trlat_pyhook_counts *c = &trlat_pyhook_counts;
    trlat_json_obj(j, "python");
    trlat_json_str(j, "hook", state);
    trlat_json_str(j, "triton_version", trlat_pyhook_triton_version[0] ? trlat_pyhook_triton_version : NULL);
    trlat_json_str(j, "reason", trlat_pyhook_reason[0] ? trlat_pyhook_reason : NULL);
    uint64_t one = rd(&c->one_launch), multi = rd(&c->multi_launch), warmup = rd(&c->no_launch_warmup),
             error = rd(&c->no_launch_error), other = rd(&c->no_launch_other);
    trlat_json_u64(j, "calls", one + multi + warmup + error + other);
    trlat_json_u64(j, "nested_calls", rd(&c->nested));
    trlat_json_u64(j, "calls_one_launch", one);
    trlat_json_u64(j, "calls_multi_launch", multi);
    trlat_json_obj(j, "calls_without_launch");
    trlat_json_u64(j, "warmup", warmup);
    trlat_json_u64(j, "error", error);
    trlat_json_u64(j, "other", other);
    trlat_json_end_obj(j);
    trlat_json_end_obj(j);
}

__attribute__((constructor)) static void register_python_json(void)
{
    trlat_report_add_section(python_json);
}
