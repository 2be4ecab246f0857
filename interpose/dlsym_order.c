/* Another library's dlsym ahead of trlat's (earlier in LD_PRELOAD). One that
 * finds "the real dlsym" with dlvsym(RTLD_NEXT, "dlsym", <glibc's version>)
 * gets trlat's (dlsym_entry.S is exported under those versions) and passes
 * the program's lookups through it: nothing is lost. One that takes glibc's
 * from libc's own handle answers the program's lookups without trlat, and
 * every launch found through dlsym or cuGetProcAddress goes unseen: trlat
 * says so, once, naming the library, when it starts (or at exit, if it
 * never started but the program loaded libcuda).
 *
 * Which of the two: at load, when the global dlsym is not trlat's, one
 * lookup of trlat's own trlat_api_active on trlat's own handle through it,
 * to see whether it reaches trlat's dlsym (trlat_dlsym_reached). At load,
 * not later: no code of that library is on the stack then (a lookup from
 * inside its launch wrapper could deadlock on its locks), and a wrapper of
 * dlsym is made to be called from other libraries' constructors. */
#include "interpose/log.h"
#include "interpose/config.h"
#include "interpose/real.h"
#include "interpose/lifecycle.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Weak: the unit tests link trlat's C objects without the entry stub. */
extern void *trlat_dlsym_entry(void *handle, const char *name) __attribute__((weak));

static void *glibc_dlsym(void)
{
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    void *p = libc ? dlvsym(libc, "dlsym", "GLIBC_2.34") : NULL;
    if (libc)
        dlclose(libc);
    return p;
}

static char in_the_way[PATH_MAX]; /* the library, when its dlsym does not pass lookups on */
static atomic_flag said;

static void say(void)
{
    if (in_the_way[0])
        trlat_log_once(&said,
                       "%s wraps dlsym ahead of trlat and answers lookups without trlat's: launches of "
                       "kernels found through dlsym or cuGetProcAddress (Triton's, the CUDA runtime's) are "
                       "not seen; put libtrlat.so before it in LD_PRELOAD",
                       in_the_way);
}

__attribute__((constructor)) static void check_dlsym_order(void)
{
    long off = 0; /* TRLAT_DISABLE=1, pure pass-through: nothing of trlat's, not this either */
    if (trlat_config_peek(TRLAT_OPT_DISABLE, &off) && off)
        return;
    typedef void *(*dlsym_fn)(void *, const char *);
    dlsym_fn global = (dlsym_fn)trlat_real_dlsym(RTLD_DEFAULT, "dlsym");
    /* trlat's, or glibc's (trlat not preloaded): nothing ahead of trlat */
    if (!trlat_dlsym_entry || !global || global == trlat_dlsym_entry || (void *)global == glibc_dlsym())
        return;
    Dl_info self, other;
    if (!atomic_load(&trlat_dlsym_reached) && dladdr((void *)trlat_dlsym_entry, &self) && self.dli_fname) {
        void *h = dlopen(self.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            global(h, "trlat_api_active");
            dlclose(h);
        }
    }
    if (atomic_load(&trlat_dlsym_reached))
        return;
    snprintf(in_the_way, sizeof in_the_way, "%s",
             dladdr((void *)global, &other) && other.dli_fname ? other.dli_fname : "another library");
}

static void start(void)
{
    say();
}

/* A program that found every launch through that library never started
 * trlat: said at exit, if it used CUDA. */
__attribute__((destructor)) static void at_unload(void)
{
    if (!in_the_way[0])
        return;
    void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (cuda) {
        say();
        dlclose(cuda);
    }
}

static const struct trlat_module dlsym_order_module = {.name = "dlsym order", .start = start};

__attribute__((constructor)) static void register_dlsym_order(void)
{
    trlat_module_register(&dlsym_order_module);
}
