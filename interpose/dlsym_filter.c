/* The C half of trlat's dlsym (see dlsym_entry.S): answers only lookups of a
 * wrapped entry point on a libcuda handle; NULL means "let glibc answer". */
#include "interpose/real.h"
#include "interpose/trlat.h"

#include <dlfcn.h>

__attribute__((visibility("hidden"), no_sanitize_address, no_sanitize_undefined)) void *trlat_dlsym_filter(void *handle, const char *name);

void *trlat_dlsym_filter(void *handle, const char *name)
{
    if (handle == RTLD_DEFAULT || handle == RTLD_NEXT)
        return NULL; /* the global scope already finds trlat's exported wrappers first */
    int fn = trlat_fn_by_name(name);
    if (fn < 0 || !trlat_is_libcuda_handle(handle) || !trlat_active())
        return NULL;
    void *real = trlat_real_dlsym(handle, name);
    if (!real)
        return NULL; /* glibc answers again, with its dlerror() */
    return trlat_wrap_pointer((enum trlat_fn)fn, real);
}
