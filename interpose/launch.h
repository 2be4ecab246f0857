/* The launch path shared by every launch wrapper, and what other parts of
 * trlat plug into it. */
#ifndef TRLAT_LAUNCH_H
#define TRLAT_LAUNCH_H

#include "interpose/tstate.h"

/* Called around the launches that take the slow variant (the fast path's
 * capture and launch log; CUPTI needs none: it reads the thread's cur_t0,
 * tstate.h): every launch when a hook set is `always`, else the launches of
 * a thread that asked for them (trlat_launch_hooks_want) and of a thread
 * that takes the slow variant anyway (native sites, trace events). `before`
 * runs before the driver call is timed (in installation order), `after`
 * once the launch is recorded (in reverse order). Hooks are installed at
 * start, not removed; a hook that has nothing to do returns at once. */
struct trlat_launch_hooks {
    void (*before)(struct trlat_tstate *ts, struct trlat_launch *l);
    void (*after)(struct trlat_tstate *ts, struct trlat_launch *l);
    int always; /* wants every launch of every thread (a launch log) */
};
#define TRLAT_MAX_HOOKS 4
/* Adds a hook set; returns -1 when TRLAT_MAX_HOOKS are installed. */
int trlat_launch_add_hooks(const struct trlat_launch_hooks *h);
/* The calling thread's launches go through the hooks from here (+1) until
 * as many -1 (the fast path's capture of one Python call). */
static inline void trlat_launch_hooks_want(struct trlat_tstate *ts, int d)
{
    ts->hooks_wanted = (uint16_t)(ts->hooks_wanted + d);
}

/* A launch made by trlat itself (the fast path's replay), through slot 0 of
 * cuLaunchKernelEx, recorded like any other. */
CUresult trlat_launch_ex(const CUlaunchConfig *config, CUfunction f, void **params, void **extra);
/* The same through slot 0 of cuLaunchKernel (ptsz: cuLaunchKernel_ptsz),
 * for a replay of a launch the program made there, with its launch
 * block's values. */
CUresult trlat_launch_legacy(int ptsz, const CUlaunchConfig *c, CUfunction f, void **params);

#endif
