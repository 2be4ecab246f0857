/* The launch path shared by every launch wrapper, and what other parts of
 * trlat plug into it. */
#ifndef TRLAT_LAUNCH_H
#define TRLAT_LAUNCH_H

#include "interpose/tstate.h"

/* Called around every recorded launch while installed (the fast path's
 * capture; CUPTI needs none: it reads the thread's cur_t0, tstate.h). `before` runs before the driver call is timed
 * (in installation order), `after` once the launch is recorded (in reverse
 * order). Hooks are installed at start, not removed; a hook that has nothing
 * to do returns at once. */
struct trlat_launch_hooks {
    void (*before)(struct trlat_tstate *ts, struct trlat_launch *l);
    void (*after)(struct trlat_tstate *ts, struct trlat_launch *l);
};
#define TRLAT_MAX_HOOKS 4
/* Adds a hook set; returns -1 when TRLAT_MAX_HOOKS are installed. */
int trlat_launch_add_hooks(const struct trlat_launch_hooks *h);

/* A launch made by trlat itself (the fast path's replay), through slot 0 of
 * cuLaunchKernelEx, recorded like any other. */
CUresult trlat_launch_ex(const CUlaunchConfig *config, CUfunction f, void **params, void **extra);
/* The same launch without the hooks, for a caller that knows no installed
 * hook has anything to do with it (the replay, when the fast path's capture
 * hook is idle on the thread): recorded alike, minus the wrapper's
 * dispatch and the hook calls. */
CUresult trlat_launch_direct(const CUlaunchConfig *config, CUfunction f, void **params);

#endif
