/* Regions: named spans of a thread's work (trlat.region("step") from
 * Python, trlat_api_region_push/pop, NVTX ranges through NVTX's tool
 * injection) that the report groups launches by. A thread's innermost
 * region is in its state (ts->region, pre-shifted) and every launch record
 * carries it beside the call site (trlat_rec_region); the thread's fold
 * sums each region's launches and times into its own table, which the
 * report adds up by name. Names are interned once, globally: at most
 * TRLAT_REGIONS_MAX - 1, past which a new name counts as "(other regions)".
 * Push and pop run off the launch path (a mutex on a new name; a
 * thread's first push allocates its table). */
#ifndef TRLAT_REGION_H
#define TRLAT_REGION_H

#include <stdint.h>

#define TRLAT_REGIONS_MAX 256 /* ids 1..255; 0: none */
#define TRLAT_REGION_OTHER (TRLAT_REGIONS_MAX - 1)
#define TRLAT_REGION_DEPTH 32 /* nested deeper: counted, the 32nd stays current */
#define TRLAT_REGION_NAME 96  /* bytes kept of a name */

/* One region's sums on one thread (or, folded, in all): launches, and
 * host times in ns weighted as the kernels' statistics are. */
struct trlat_rstat {
    uint64_t launches, driver_ns, py_ns, ret_ns, gap_ns;
};

struct trlat_region_state {
    uint32_t depth;
    uint16_t stack[TRLAT_REGION_DEPTH];
    struct trlat_rstat stats[TRLAT_REGIONS_MAX];
};

struct trlat_tstate;
struct trlat_rec_ns;

/* The calling thread enters region `name` / leaves its innermost: the
 * depth after, or -1 (trlat disabled, out of memory, nothing to pop). */
int trlat_region_push(const char *name);
int trlat_region_pop(void);
/* The name of an id, NULL for an unused one. */
const char *trlat_region_name(unsigned id);
/* Adds one launch, its times from trlat_rec_ns, to a region's sums. */
void trlat_region_add(struct trlat_rstat *s, const struct trlat_rec_ns *ns);
/* A reused thread state: no region open. */
void trlat_region_reset(struct trlat_tstate *ts);

#endif
