#include "interpose/real.h"
#include "interpose/log.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

void *_Atomic trlat_real[TRLAT_FN_COUNT][TRLAT_SLOTS];

const char *const trlat_fn_names[TRLAT_FN_COUNT] = {
#define X(n) [TRLAT_FN_##n] = #n,
    TRLAT_WRAPPED(X)
#undef X
};

/* glibc's dlsym, for trlat's own lookups, and the next dlsym after trlat's
 * (dlsym_entry.S jumps there): another preloaded library's that wraps
 * dlsym, else glibc's. */
void *(*trlat_glibc_dlsym)(void *, const char *)__attribute__((visibility("hidden")));
void *(*trlat_next_dlsym)(void *, const char *)__attribute__((visibility("hidden")));
_Atomic int trlat_dlsym_reached;

/* Called by the stub before its first jump, possibly before any constructor
 * of trlat ran (another preloaded library's constructor may call dlsym). */
/* Not instrumented in sanitizer builds: ASan's own start-up calls dlsym
 * before ASan can run instrumented code. */
__attribute__((visibility("hidden"), no_sanitize_address, no_sanitize_undefined)) void trlat_resolve_glibc_dlsym(void)
{
    if (trlat_next_dlsym)
        return;
    /* glibc's: versioned, which another library's unversioned dlsym is not */
    void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!p)
        p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    if (!p)
        p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.17"); /* aarch64 */
    trlat_glibc_dlsym = (void *(*)(void *, const char *))p;
    if (!p)
        return;
    /* asked from here, RTLD_NEXT means after trlat; any version */
    void *next = trlat_glibc_dlsym(RTLD_NEXT, "dlsym");
    trlat_next_dlsym = next ? (void *(*)(void *, const char *))next : trlat_glibc_dlsym;
}

void *trlat_real_dlsym(void *handle, const char *name)
{
    trlat_resolve_glibc_dlsym();
    return trlat_glibc_dlsym ? trlat_glibc_dlsym(handle, name) : NULL;
}

void *trlat_chain_dlsym(void *handle, const char *name)
{
    trlat_resolve_glibc_dlsym();
    return trlat_next_dlsym ? trlat_next_dlsym(handle, name) : NULL;
}

/* The definition after trlat's in the global scope, or NULL without the
 * error a failed lookup leaves for dlerror(): trlat's lookups made inside
 * the program's calls leave its dlerror() as it was (a dl* call that
 * succeeds clears it). */
static void *next_definition(const char *name)
{
    void *p = trlat_real_dlsym(RTLD_NEXT, name);
    if (!p)
        dlerror();
    return p;
}

static void *_Atomic libcuda;

static void *libcuda_handle(void)
{
    void *h = atomic_load_explicit(&libcuda, memory_order_acquire);
    if (h)
        return h;
    /* RTLD_NOLOAD: only a libcuda the program itself loaded (matched by
     * soname, so a libcuda.so symlink counts too). */
    h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        h = dlopen("libcuda.so", RTLD_NOW | RTLD_NOLOAD);
    if (h)
        atomic_store_explicit(&libcuda, h, memory_order_release);
    return h;
}

void *trlat_libcuda_sym(const char *name)
{
    void *h = libcuda_handle();
    return h ? trlat_real_dlsym(h, name) : NULL;
}

void *trlat_real_resolve(enum trlat_fn fn)
{
    /* What the program's own calls by name would reach without trlat: the
     * next definition (a driver shim preloaded after trlat, a libcuda in
     * the global scope), else the libcuda loaded (dlopen'ed locally, as
     * Triton's). */
    void *p = next_definition(trlat_fn_names[fn]);
    if (!p)
        p = trlat_libcuda_sym(trlat_fn_names[fn]);
    if (!p) {
        static atomic_flag once;
        trlat_log_once(&once,
                       "%s called but no libcuda in the process exports it; returning CUDA_ERROR_NOT_INITIALIZED",
                       trlat_fn_names[fn]);
        return NULL;
    }
    void *expected = NULL;
    if (!atomic_compare_exchange_strong(&trlat_real[fn][0], &expected, p))
        return expected;
    return p;
}

/* Whether p is one of trlat's own wrappers (a library that takes the
 * address of its own exported entry point gets trlat's, by interposition). */
static int is_wrapper(void *p)
{
    for (int f = 0; f < TRLAT_FN_COUNT; f++)
        for (int s = 0; s < TRLAT_SLOTS; s++)
            if (trlat_wrappers[f][s] == p)
                return 1;
    return 0;
}

void *trlat_wrap_pointer(enum trlat_fn fn, void *p)
{
    if (is_wrapper(p))
        return p;
    trlat_real_get(fn, 0);
    for (int s = 0; s < TRLAT_SLOTS; s++) {
        void *cur = atomic_load(&trlat_real[fn][s]);
        if (cur == p)
            return trlat_wrappers[fn][s];
        if (!cur && s > 0) {
            void *expected = NULL;
            if (atomic_compare_exchange_strong(&trlat_real[fn][s], &expected, p) || expected == p)
                return trlat_wrappers[fn][s];
        }
    }
    static atomic_flag once;
    trlat_log_once(&once,
                   "cuGetProcAddress returned more than %d versions of %s; calls through the others are not seen",
                   TRLAT_SLOTS, trlat_fn_names[fn]);
    return p;
}

int trlat_fn_by_name(const char *name)
{
    if (!name || name[0] != 'c' || name[1] != 'u')
        return -1;
    for (int i = 0; i < TRLAT_FN_COUNT; i++)
        if (strcmp(name, trlat_fn_names[i]) == 0)
            return i;
    return -1;
}

int trlat_is_libcuda_handle(void *handle)
{
    static void *_Atomic known;
    if (handle == atomic_load_explicit(&known, memory_order_relaxed))
        return 1;
    struct link_map *lm = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name)
        return 0;
    const char *base = strrchr(lm->l_name, '/');
    base = base ? base + 1 : lm->l_name;
    if (strncmp(base, "libcuda.so", 10) != 0)
        return 0;
    atomic_store_explicit(&known, handle, memory_order_relaxed);
    return 1;
}
