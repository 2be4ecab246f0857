#include "interpose/python/pysites.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct key {
    const void *_Atomic code; /* published last */
    int64_t offset;
    uint64_t site;
    int level;
};

static struct key keys[TRLAT_PYSITES_KEYS];
static _Atomic unsigned nkeys;
static char *_Atomic texts[TRLAT_PYSITES_MAX + 1]; /* by id; 1 is "(other)" */
static _Atomic unsigned nsites = TRLAT_PYSITE_OTHER;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t hash_key(const void *code, int64_t offset)
{
    uint64_t x = (uint64_t)(uintptr_t)code ^ ((uint64_t)offset * 0x9e3779b97f4a7c15ULL);
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 29;
    return (uint32_t)x;
}

int trlat_pysite_lookup(const void *code, int64_t offset, struct trlat_pysite_hit *hit)
{
    uint32_t mask = TRLAT_PYSITES_KEYS - 1;
    for (uint32_t i = hash_key(code, offset) & mask, n = 0; n < TRLAT_PYSITES_KEYS; i = (i + 1) & mask, n++) {
        const void *c = atomic_load_explicit(&keys[i].code, memory_order_acquire);
        if (!c)
            return 0;
        if (c == code && keys[i].offset == offset) {
            hit->site = keys[i].site;
            hit->level = keys[i].level;
            return 1;
        }
    }
    return 0;
}

/* The id of file:line, made if new; under the lock. */
static uint64_t site_of(const char *file, int line)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s:%d", file ? file : "?", line);
    unsigned n = atomic_load_explicit(&nsites, memory_order_relaxed);
    for (unsigned id = TRLAT_PYSITE_OTHER + 1; id <= n; id++) /* rare: once per new key */
        if (strcmp(atomic_load_explicit(&texts[id], memory_order_relaxed), buf) == 0)
            return id;
    if (n >= TRLAT_PYSITES_MAX)
        return TRLAT_PYSITE_OTHER;
    char *t = strdup(buf);
    if (!t)
        return TRLAT_PYSITE_OTHER;
    atomic_store_explicit(&texts[n + 1], t, memory_order_release);
    atomic_store_explicit(&nsites, n + 1, memory_order_release);
    return n + 1;
}

int trlat_pysite_insert(const void *code, int64_t offset, const char *file, int line, int level,
                        struct trlat_pysite_hit *hit)
{
    pthread_mutex_lock(&lock);
    int stored = 0;
    if (trlat_pysite_lookup(code, offset, hit))
        goto out;
    hit->level = level;
    hit->site = level == TRLAT_PYSITE_RUNTIME ? 0 : site_of(file, line);
    /* Keep the table at most 3/4 full so lookups stay short. */
    if (atomic_load_explicit(&nkeys, memory_order_relaxed) >= TRLAT_PYSITES_KEYS / 4 * 3)
        goto out;
    uint32_t mask = TRLAT_PYSITES_KEYS - 1;
    uint32_t i = hash_key(code, offset) & mask;
    while (atomic_load_explicit(&keys[i].code, memory_order_relaxed))
        i = (i + 1) & mask;
    keys[i].offset = offset;
    keys[i].site = hit->site;
    keys[i].level = level;
    atomic_store_explicit(&keys[i].code, code, memory_order_release);
    atomic_fetch_add_explicit(&nkeys, 1, memory_order_relaxed);
    stored = 1;
out:
    pthread_mutex_unlock(&lock);
    return stored;
}

const char *trlat_pysite_text(uint64_t id, char *buf, unsigned long len)
{
    if (id == TRLAT_PYSITE_OTHER) {
        snprintf(buf, len, "(other python sites)");
        return buf;
    }
    if (id <= TRLAT_PYSITE_OTHER || id > atomic_load_explicit(&nsites, memory_order_acquire))
        return NULL;
    snprintf(buf, len, "%s", atomic_load_explicit(&texts[id], memory_order_acquire));
    return buf;
}

unsigned trlat_pysite_count(void)
{
    return atomic_load(&nsites) - TRLAT_PYSITE_OTHER;
}

void trlat_pysites_reset(void)
{
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < TRLAT_PYSITES_KEYS; i++)
        atomic_store(&keys[i].code, NULL);
    atomic_store(&nkeys, 0);
    atomic_store(&nsites, TRLAT_PYSITE_OTHER);
    pthread_mutex_unlock(&lock);
}
