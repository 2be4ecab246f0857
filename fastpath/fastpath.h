/* The contract between the Python hook (fastpath/pyhook*.c: wraps Triton's
 * JITFunction.run) and the launch memo (the rest of fastpath/: key, capture,
 * replay). Both run with the GIL held. */
#ifndef TRLAT_FASTPATH_H
#define TRLAT_FASTPATH_H

#include <stdint.h>

typedef struct _object PyObject; /* opaque: Python's C API is reached via interpose/python/pyapi.h */

/* For each JITFunction.run(self, *args, grid=..., warmup=..., **kwargs) call
 * the hook sees, before Triton runs. Returns a new reference to the result
 * Triton would have returned (the CompiledKernel) when the call was served by
 * a replay: the kernel has been launched and the hook returns this at once.
 * Returns NULL (no Python error set) when Triton must run; *state is then
 * handed to trlat_fastpath_after once Triton's run returned (result NULL if
 * it raised). Called only when TRLAT_FASTPATH is not 0. */
PyObject *trlat_fastpath_before(PyObject *jitfn, PyObject *args, PyObject *kwargs, void **state);
void trlat_fastpath_after(void *state, PyObject *result);

/* When this run() call comes from the memo's own kernel[grid] launcher
 * (fastpath/getitem.c), which already keyed it, and the launcher was the
 * thread's outermost call: its entry tick and caller site (the call's
 * py->driver time starts where the launcher started, keying included) and
 * 1; else 0. With the GIL held. */
int trlat_fastpath_prekey_entry(PyObject *jitfn, uint64_t *t0, uint64_t *site);

/* Whether this run() call comes from that launcher, which keyed it: then
 * trlat_fastpath_before needs neither args nor kwargs (NULL, NULL). */
int trlat_fastpath_prekeyed(PyObject *jitfn);

#endif
