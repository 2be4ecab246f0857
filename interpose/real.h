/* Where the real driver entry points come from. Each wrapped entry point has
 * TRLAT_SLOTS real pointers: slot 0 is what a call by the exported name would
 * reach without trlat (the next definition after trlat's in the global
 * scope: a driver shim preloaded after trlat, or libcuda), else the symbol
 * of the libcuda already loaded (glibc's own dlsym: trlat never loads
 * libcuda itself); slots 1.. are other pointers the program's dlsym or
 * cuGetProcAddress handed out for the same name (a dlsym-wrapping
 * library's, a driver's alias). Every slot has its own wrapper, so a
 * wrapper always forwards to exactly the function the program would have
 * called. */
#ifndef TRLAT_REAL_H
#define TRLAT_REAL_H

#include "interpose/cuda_api.h"

#include <stdatomic.h>

extern void *_Atomic trlat_real[TRLAT_FN_COUNT][TRLAT_SLOTS];
extern void *const trlat_wrappers[TRLAT_FN_COUNT][TRLAT_SLOTS]; /* launch.c, procaddr.c */
extern const char *const trlat_fn_names[TRLAT_FN_COUNT];

/* Slot 0 of fn, resolved on first use; NULL if libcuda is not loaded or
 * lacks the symbol. */
void *trlat_real_resolve(enum trlat_fn fn);

static inline void *trlat_real_get(enum trlat_fn fn, int slot)
{
    void *p = atomic_load_explicit(&trlat_real[fn][slot], memory_order_relaxed);
    if (__builtin_expect(p == NULL && slot == 0, 0))
        p = trlat_real_resolve(fn);
    return p;
}

/* The wrapper to hand out in place of real pointer p of fn, or p itself when
 * all of fn's slots hold other pointers. */
void *trlat_wrap_pointer(enum trlat_fn fn, void *p);

/* fn for an exported name, or -1. */
int trlat_fn_by_name(const char *name);

/* glibc's dlsym (never trlat's, nor another library's): trlat's own lookups. */
void *trlat_real_dlsym(void *handle, const char *name);
/* The dlsym the program's calls would reach without trlat: the next one
 * after trlat's (another preloaded library's that wraps dlsym, else
 * glibc's). */
void *trlat_chain_dlsym(void *handle, const char *name);
/* Set by every call that reaches trlat's dlsym (but RTLD_NEXT's). */
extern _Atomic int trlat_dlsym_reached;
/* A symbol of the libcuda already in the process, or NULL. */
void *trlat_libcuda_sym(const char *name);
/* Whether a dlopen handle is a libcuda (its file is libcuda.so*). */
int trlat_is_libcuda_handle(void *handle);

#endif
