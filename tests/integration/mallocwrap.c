/* A second preloaded library that wraps malloc through
 * dlsym(RTLD_NEXT, "malloc"), as allocator profilers do. Preloaded after
 * trlat, its lookup passes through trlat's dlsym: glibc must still see this
 * library as the caller, or RTLD_NEXT finds this malloc again and recursion
 * ends the process. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *(*next_malloc)(size_t);
static void (*next_free)(void *);
static atomic_ulong count;
static char boot[1 << 16]; /* for allocations made while dlsym runs */
static size_t boot_used;
static int resolving;

__attribute__((visibility("default"))) void *malloc(size_t n)
{
    if (!next_malloc) {
        if (resolving) {
            void *p = boot + boot_used;
            boot_used += (n + 15) & ~(size_t)15;
            return boot_used <= sizeof boot ? p : NULL;
        }
        resolving = 1;
        next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
        next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
        resolving = 0;
        if (next_malloc == malloc) {
            static const char msg[] = "mallocwrap: RTLD_NEXT found this malloc again\n";
            write(2, msg, sizeof msg - 1);
            _exit(99);
        }
    }
    atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
    return next_malloc(n);
}

__attribute__((visibility("default"))) void free(void *p)
{
    if (!p || ((char *)p >= boot && (char *)p < boot + sizeof boot))
        return;
    if (next_free) /* else: freed before the first malloc resolved it; leak */
        next_free(p);
}

__attribute__((destructor)) static void report(void)
{
    char buf[64];
    int n = snprintf(buf, sizeof buf, "mallocwrap: %lu mallocs\n", (unsigned long)atomic_load(&count));
    write(2, buf, (size_t)n);
}
