/* A second preloaded library that wraps dlsym, as GPU-sharing shims and
 * other profilers do: it counts the lookups it sees and hands out its own
 * wrappers for cuLaunchKernel, cuLaunchKernelEx and cuGetProcAddress_v2
 * (whose answers for those launch entry points, and for cuGetProcAddress,
 * it wraps in turn), each forwarding to what its real dlsym answered.
 * DLSYMWRAP_REAL says how it finds that real dlsym:
 *   v34 (default)  dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34")
 *   v225           dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5")  (x86-64's first)
 *   libc           dlvsym on libc.so.6's own handle (dlopen'ed): glibc's,
 *                  whatever else is preloaded; a lookup made while that
 *                  dlopen runs (a malloc wrapper's) goes through
 *                  dlvsym(RTLD_NEXT, ...)'s answer instead
 * DLSYMWRAP_HIDE=NAME: it answers NULL for NAME (as a shim hiding an entry
 * point does). RTLD_NEXT lookups go to the real dlsym as a tail call (built
 * with -O2), so glibc still sees the caller. At exit it prints what it saw. */
#include <cuda.h>
#undef cuLaunchKernel
#undef cuLaunchKernelEx
#undef cuGetProcAddress

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void *(*dlsym_t)(void *, const char *);
typedef CUresult (*lk_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                         void **, void **);
typedef CUresult (*lkex_t)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static _Atomic(dlsym_t) real;
static atomic_ulong lookups, cu_lookups, launches;
static atomic_ulong seen_lk, seen_lkex, seen_gpa2;
static _Atomic(lk_t) next_lk;
static _Atomic(lkex_t) next_lkex;
static _Atomic(gpa2_t) next_gpa2;

static void die(const char *msg)
{
    if (write(2, msg, strlen(msg)) < 0)
        _exit(98);
    _exit(98);
}

static _Thread_local int resolving;

static dlsym_t resolve(void)
{
    dlsym_t r = atomic_load(&real);
    if (r)
        return r;
    const char *how = getenv("DLSYMWRAP_REAL");
    void *next = dlvsym(RTLD_NEXT, "dlsym", how && !strcmp(how, "v225") ? "GLIBC_2.2.5" : "GLIBC_2.34");
    void *p = next;
    if (how && !strcmp(how, "libc")) {
        if (resolving)
            return (dlsym_t)next;
        resolving = 1;
        p = dlvsym(dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD), "dlsym", "GLIBC_2.34");
        resolving = 0;
    }
    if (!p || p == (void *)dlsym)
        die("dlsymwrap: no real dlsym\n");
    atomic_store(&real, (dlsym_t)p);
    return (dlsym_t)p;
}

static CUresult my_lk(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                      unsigned sh, CUstream s, void **p, void **e)
{
    atomic_fetch_add(&launches, 1);
    return atomic_load(&next_lk)(f, gx, gy, gz, bx, by, bz, sh, s, p, e);
}

static CUresult my_lkex(const CUlaunchConfig *c, CUfunction f, void **p, void **e)
{
    atomic_fetch_add(&launches, 1);
    return atomic_load(&next_lkex)(c, f, p, e);
}

static CUresult my_gpa2(const char *sym, void **pfn, int ver, cuuint64_t flags, CUdriverProcAddressQueryResult *st)
{
    CUresult rc = atomic_load(&next_gpa2)(sym, pfn, ver, flags, st);
    if (rc != CUDA_SUCCESS || !pfn || !*pfn || (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return rc;
    if (!strcmp(sym, "cuLaunchKernel")) {
        atomic_store(&next_lk, (lk_t)*pfn);
        *pfn = (void *)my_lk;
    } else if (!strcmp(sym, "cuLaunchKernelEx")) {
        atomic_store(&next_lkex, (lkex_t)*pfn);
        *pfn = (void *)my_lkex;
    } else if (!strcmp(sym, "cuGetProcAddress") && ver >= 12000) {
        atomic_store(&next_gpa2, (gpa2_t)*pfn);
        *pfn = (void *)my_gpa2;
    }
    return rc;
}

__attribute__((visibility("default"))) void *dlsym(void *handle, const char *name)
{
    dlsym_t r = resolve();
    atomic_fetch_add(&lookups, 1);
    if (handle == RTLD_NEXT)
        return r(handle, name); /* a tail call: the caller's return address stays */
    if (name[0] == 'c' && name[1] == 'u')
        atomic_fetch_add(&cu_lookups, 1);
    void *p = r(handle, name);
    const char *hide = getenv("DLSYMWRAP_HIDE");
    if (!p || (hide && !strcmp(name, hide)))
        return NULL;
    if (!strcmp(name, "cuLaunchKernel")) {
        atomic_fetch_add(&seen_lk, 1);
        atomic_store(&next_lk, (lk_t)p);
        return (void *)my_lk;
    }
    if (!strcmp(name, "cuLaunchKernelEx")) {
        atomic_fetch_add(&seen_lkex, 1);
        atomic_store(&next_lkex, (lkex_t)p);
        return (void *)my_lkex;
    }
    if (!strcmp(name, "cuGetProcAddress_v2")) {
        atomic_fetch_add(&seen_gpa2, 1);
        atomic_store(&next_gpa2, (gpa2_t)p);
        return (void *)my_gpa2;
    }
    return p;
}

__attribute__((destructor)) static void report(void)
{
    char buf[200];
    int n = snprintf(buf, sizeof buf,
                     "dlsymwrap: cu lookups %lu (cuLaunchKernel %lu, cuLaunchKernelEx %lu, cuGetProcAddress_v2 %lu), "
                     "launches %lu; all lookups %lu\n",
                     atomic_load(&cu_lookups), atomic_load(&seen_lk), atomic_load(&seen_lkex), atomic_load(&seen_gpa2),
                     atomic_load(&launches), atomic_load(&lookups));
    if (write(2, buf, (size_t)n) < 0)
        return;
}
