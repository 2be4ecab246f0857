#include "interpose/names.h"
#include "interpose/log.h"
#include "interpose/real.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NAMES_CAP (1u << 16) /* handles; past that, names come from the driver at report time */

struct entry {
    void *_Atomic key;
    const char *_Atomic name;
};

static struct entry *_Atomic table;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned used;

static uint32_t slot_of(void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 31;
    x *= 0x9e3779b97f4a7c15ULL;
    return (uint32_t)(x >> 40) & (NAMES_CAP - 1);
}

/* A name's storage. A name replaced by a reload stays allocated (a reader
 * may still hold it) and reachable from its successor. */
struct name_node {
    const struct name_node *older;
    char s[];
};

static const char *intern(const char *name, const char *replaced)
{
    size_t n = strlen(name) + 1;
    struct name_node *node = malloc(sizeof *node + n);
    if (!node)
        return NULL;
    node->older = replaced ? (const struct name_node *)(replaced - offsetof(struct name_node, s)) : NULL;
    memcpy(node->s, name, n);
    return node->s;
}

void trlat_names_add(void *handle, const char *name)
{
    if (!handle || !name)
        return;
    pthread_mutex_lock(&lock);
    struct entry *t = atomic_load(&table);
    if (!t && !(t = calloc(NAMES_CAP, sizeof *t)))
        goto out;
    atomic_store(&table, t);
    for (uint32_t i = slot_of(handle), n = 0; n < NAMES_CAP; i = (i + 1) & (NAMES_CAP - 1), n++) {
        void *k = atomic_load_explicit(&t[i].key, memory_order_relaxed);
        if (k == handle) {
            /* A handle reused after a module unload: same slot, new name. */
            const char *old = atomic_load(&t[i].name);
            if (!old || strcmp(old, name) != 0) {
                const char *copy = intern(name, old);
                if (copy)
                    atomic_store_explicit(&t[i].name, copy, memory_order_release);
            }
            goto out;
        }
        if (!k) {
            if (used + 1 >= NAMES_CAP - NAMES_CAP / 8) { /* keep probes short */
                static atomic_flag once;
                trlat_log_once(&once,
                               "more than %u kernel handles: the names of the others are asked of the driver "
                               "when the report is written",
                               NAMES_CAP - NAMES_CAP / 8);
                goto out;
            }
            const char *copy = intern(name, NULL);
            if (!copy)
                goto out;
            atomic_store_explicit(&t[i].name, copy, memory_order_relaxed);
            atomic_store_explicit(&t[i].key, handle, memory_order_release);
            used++;
            goto out;
        }
    }
out:
    pthread_mutex_unlock(&lock);
}

const char *trlat_names_get(void *handle)
{
    struct entry *t = atomic_load_explicit(&table, memory_order_acquire);
    if (!t || !handle)
        return NULL;
    for (uint32_t i = slot_of(handle), n = 0; n < NAMES_CAP; i = (i + 1) & (NAMES_CAP - 1), n++) {
        void *k = atomic_load_explicit(&t[i].key, memory_order_acquire);
        if (k == handle)
            return atomic_load_explicit(&t[i].name, memory_order_acquire);
        if (!k)
            return NULL;
    }
    return NULL;
}

const char *trlat_name_of(void *handle)
{
    const char *n = trlat_names_get(handle);
    if (n)
        return n;
    const char *drv = NULL;
    pfn_cuFuncGetName fget = (pfn_cuFuncGetName)trlat_libcuda_sym("cuFuncGetName");
    if (fget && fget(&drv, (CUfunction)handle) != CUDA_SUCCESS)
        drv = NULL;
    if (!drv) {
        pfn_cuKernelGetName kget = (pfn_cuKernelGetName)trlat_libcuda_sym("cuKernelGetName");
        if (kget && kget(&drv, (CUkernel)handle) != CUDA_SUCCESS)
            drv = NULL;
    }
    if (!drv)
        return NULL;
    trlat_names_add(handle, drv);
    n = trlat_names_get(handle);
    return n ? n : drv; /* the registry is full: the driver's string lives as long as the module */
}

void trlat_names_reset(void)
{
    pthread_mutex_init(&lock, NULL);
}
