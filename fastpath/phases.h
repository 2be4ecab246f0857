/* TRLAT_FASTPATH_PHASES=1, a measuring aid: where a fast-path hit's host
 * time goes, summed over hits and printed once at exit. Marks are TSC reads
 * into a per-thread array; with the option off each mark is one predictable
 * branch. */
#ifndef TRLAT_FP_PHASES_H
#define TRLAT_FP_PHASES_H

#include "interpose/clock.h"

#include <stdint.h>

enum {
    FP_PH_ENTRY,  /* the launcher is called */
    FP_PH_ARGS,   /* tstate, call site, the call's arguments taken */
    FP_PH_GUARDS, /* knobs, hooks, globals, the kernel's layout checked */
    FP_PH_DEVICE, /* arguments bound, current device and stream read */
    FP_PH_KEY,    /* tensors, ints, options keyed and hashed */
    FP_PH_MEMO,   /* the entry found and checked against Triton's cache */
    FP_PH_SERVE,  /* grid evaluated, block replayed (the driver call in it) */
    FP_PH_EXIT,   /* about to return */
    FP_PH_MARKS
};

/* Parts of the device and key phases, summed per call (ticks). */
enum { FP_SUB_DEVICE, FP_SUB_STREAM, FP_SUB_TENSOR, FP_SUB_INT, FP_SUB_OTHER, FP_SUB_OPTIONS, FP_SUB_N };

extern int fp_phases_on;
extern _Thread_local uint64_t fp_phase_t[FP_PH_MARKS];
extern _Thread_local uint64_t fp_sub_t[FP_SUB_N];

/* Starts a part: returns the tick to hand to fp_sub_end (0 with phases off). */
static inline uint64_t fp_sub_begin(void)
{
    return __builtin_expect(fp_phases_on, 0) ? trlat_ticks() : 0;
}
static inline void fp_sub_end(int part, uint64_t t0)
{
    if (__builtin_expect(fp_phases_on, 0))
        fp_sub_t[part] += trlat_ticks() - t0;
}

static inline void fp_phase(int mark)
{
    if (__builtin_expect(fp_phases_on, 0))
        fp_phase_t[mark] = trlat_ticks();
}

/* The LibEntry layer's marks (libentry.c): a served call from its Python
 * entry (kernel[grid] evaluated) to the return of its compiled[grid] launch,
 * summed per LibEntry and printed at exit, the costliest first. */
enum {
    FP_LE_ENTRY,   /* the call's Python entry: kernel[grid] evaluated */
    FP_LE_RUN,     /* LibEntry.run entered the model (the lambda, the hooks) */
    FP_LE_GUARDS,  /* class, globals and instance checked */
    FP_LE_KEY,     /* the arguments split and keyed */
    FP_LE_LOOKUP,  /* the current device read, the entry found, the launch arguments taken */
    FP_LE_GRID,    /* the grid computed */
    FP_LE_HOOKS,   /* the launch pre-hooks called */
    FP_LE_GETITEM, /* compiled[grid] evaluated */
    FP_LE_LAUNCH,  /* the launch returned (the hit below, the driver call in it) */
    FP_LE_MARKS
};
struct fp_le_phases {
    const char *name;
    uint64_t sum[FP_LE_MARKS - 1], n;
    int listed;
};
extern _Thread_local uint64_t fp_le_t[FP_LE_MARKS];
static inline void fp_le_phase(int mark)
{
    if (__builtin_expect(fp_phases_on, 0))
        fp_le_t[mark] = trlat_ticks();
}
/* The marks of this thread's served call, all set: adds them to p (GIL held). */
void fp_le_phases_commit(struct fp_le_phases *p);

/* Reads TRLAT_FASTPATH_PHASES once (at the launcher's install). */
void fp_phases_init(void);
/* The marks of this thread's current call, all set: adds them as one hit. */
void fp_phases_commit(void);

#endif
