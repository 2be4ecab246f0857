/* The C half of trlat's dlsym (see dlsym_entry.S): answers only lookups of a
 * wrapped entry point on a libcuda handle, with trlat's wrapper of what the
 * next dlsym answered; 0 means "let the next dlsym answer", 1 "it answered
 * NULL". */
#include "interpose/real.h"
#include "interpose/lifecycle.h"

#include <dlfcn.h>

#define NOT_MINE NULL
#define ANSWERED_NULL ((void *)1)

__attribute__((visibility("hidden"), no_sanitize_address, no_sanitize_undefined)) void *
trlat_dlsym_filter(void *handle, const char *name);

void *trlat_dlsym_filter(void *handle, const char *name)
{
    if (!atomic_load_explicit(&trlat_dlsym_reached, memory_order_relaxed))
        atomic_store_explicit(&trlat_dlsym_reached, 1, memory_order_relaxed);
    if (handle == RTLD_DEFAULT || handle == RTLD_NEXT)
        return NOT_MINE; /* the global scope already finds trlat's exported wrappers first */
    int fn = trlat_fn_by_name(name);
    if (fn < 0 || !trlat_is_libcuda_handle(handle) || !trlat_active())
        return NOT_MINE;
    void *real = trlat_chain_dlsym(handle, name);
    if (!real)
        return ANSWERED_NULL;
    /* may look up slot 0 (real.c): no dlerror() left behind, as after the
     * program's lookup that succeeded */
    return trlat_wrap_pointer((enum trlat_fn)fn, real);
}
