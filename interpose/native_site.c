/* Native call sites (TRLAT_STACKS=1): for a launch made outside any hooked
 * Python call, the first frame above the launch wrapper that is neither
 * libtrlat's nor libcuda's, as an address (lib.so!symbol+0xoff at report
 * time, report/native_site_text.c).
 *
 * Usually that is the wrapper's return address itself; when the caller is
 * inside libtrlat or libcuda (trlat's own replays, a driver-internal relay)
 * libunwind walks the stack past them. Either way the answer is cached per
 * return address in a fixed-size lock-free table: a known address costs one
 * hash probe, no allocation, no lock. Only the first launch from an address
 * unwinds (libunwind may then take the loader's lock and allocate). Past
 * the table's size, new addresses are used as they are. libunwind is linked
 * statically with its symbols hidden (Makefile), so the process's own C++
 * unwinder is untouched. */
#include "interpose/native_site.h"
#include "interpose/log.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#if TRLAT_HAVE_UNWIND
#include <libunwind.h> /* LLVM's (Makefile: -isystem next to its libunwind.a) */

/* Tells the tests this build unwinds. */
const int trlat_stacks_unwind = 1;

#define CACHE_SIZE 4096 /* power of 2 */
#define MAX_PROBE 16
#define MAX_FRAMES 64

struct entry {
    _Atomic uintptr_t ret;  /* 0: free */
    _Atomic uintptr_t site; /* 0: being filled */
};
static struct entry cache[CACHE_SIZE];
static _Atomic unsigned used;

/* libtrlat's own frames and libcuda's are not call sites. */
static int skipped(uintptr_t ip)
{
    static const void *_Atomic own_base;
    Dl_info mine, info;
    const void *base = atomic_load_explicit(&own_base, memory_order_relaxed);
    if (!base && dladdr((void *)skipped, &mine))
        atomic_store_explicit(&own_base, base = mine.dli_fbase, memory_order_relaxed);
    if (!dladdr((void *)ip, &info) || !info.dli_fname)
        return 0;
    if (info.dli_fbase == base)
        return 1;
    const char *name = strrchr(info.dli_fname, '/');
    name = name ? name + 1 : info.dli_fname;
    return strncmp(name, "libcuda.so", 10) == 0;
}

/* From here, up past the frame that returns to `ret`, to the first frame
 * outside libtrlat and libcuda; ret when there is none. */
static __attribute__((noinline)) uintptr_t unwind_past(uintptr_t ret)
{
    unw_context_t ctx;
    unw_cursor_t cur;
    if (unw_getcontext(&ctx) != 0 || unw_init_local(&cur, &ctx) != 0)
        return ret;
    int above = 0;
    for (int depth = 0; depth < MAX_FRAMES && unw_step(&cur) > 0; depth++) {
        unw_word_t ip;
        if (unw_get_reg(&cur, UNW_REG_IP, &ip) != 0)
            break;
        above |= ip == ret;
        if (above && !skipped(ip))
            return ip;
    }
    return ret;
}

static uint32_t hash(uintptr_t p)
{
    uint64_t x = p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (uint32_t)x;
}

uint64_t trlat_native_site(void *ret_addr)
{
    uintptr_t ret = (uintptr_t)ret_addr;
    if (!ret)
        return 0;
    uint32_t i = hash(ret) & (CACHE_SIZE - 1);
    for (int probe = 0; probe < MAX_PROBE; probe++, i = (i + 1) & (CACHE_SIZE - 1)) {
        uintptr_t k = atomic_load_explicit(&cache[i].ret, memory_order_acquire);
        if (k == ret) {
            uintptr_t site = atomic_load_explicit(&cache[i].site, memory_order_acquire);
            return site ? site : ret; /* another thread is filling it */
        }
        if (k)
            continue;
        if (atomic_load_explicit(&used, memory_order_relaxed) >= CACHE_SIZE / 4 * 3)
            break;
        uintptr_t expected = 0;
        if (!atomic_compare_exchange_strong(&cache[i].ret, &expected, ret)) {
            if (expected == ret)
                return ret;
            continue; /* taken by another address meanwhile */
        }
        atomic_fetch_add_explicit(&used, 1, memory_order_relaxed);
        uintptr_t site = skipped(ret) ? unwind_past(ret) : ret;
        atomic_store_explicit(&cache[i].site, site, memory_order_release);
        return site;
    }
    static atomic_flag once;
    trlat_log_once(&once, "more than %d native launch call sites; further ones are not unwound", CACHE_SIZE / 4 * 3);
    return ret;
}
#else
/* Without libunwind the wrapper's return address is the site. */
uint64_t trlat_native_site(void *ret_addr)
{
    return (uint64_t)(uintptr_t)ret_addr;
}
#endif
