#include "interpose/cupti/corrmap.h"

#include <stdlib.h>

static inline uint32_t home(const struct trlat_corrmap *m, uint32_t key)
{
    uint32_t h = key * 2654435761u; /* a permutation: consecutive ids spread evenly */
    return (h ^ (h >> 16)) & m->tmask;
}

int trlat_corrmap_init(struct trlat_corrmap *m, uint32_t cap)
{
    uint32_t c = 16;
    while (c < cap && c < (1u << 30))
        c <<= 1;
    *m = (struct trlat_corrmap){.cap = c, .tmask = 2 * c - 1};
    m->table = calloc(2 * (size_t)c, sizeof *m->table);
    m->keys = calloc(c, sizeof *m->keys);
    m->live = calloc(c, sizeof *m->live);
    if (!m->table || !m->keys || !m->live) {
        trlat_corrmap_free(m);
        return -1;
    }
    return 0;
}

void trlat_corrmap_free(struct trlat_corrmap *m)
{
    free(m->table);
    free(m->keys);
    free(m->live);
    *m = (struct trlat_corrmap){0};
}

uint32_t trlat_corrmap_insert(struct trlat_corrmap *m, uint32_t key)
{
    uint32_t slot = trlat_corrmap_next(m);
    m->next++;
    m->keys[slot] = key;
    m->live[slot] = 1;
    m->count++;
    uint32_t p = home(m, key);
    while (m->table[p])
        p = (p + 1) & m->tmask;
    m->table[p] = slot + 1;
    return slot;
}

void trlat_corrmap_remove(struct trlat_corrmap *m, uint32_t slot)
{
    uint32_t p = home(m, m->keys[slot]);
    while (m->table[p] != slot + 1) {
        if (!m->table[p])
            return; /* not present: nothing to do */
        p = (p + 1) & m->tmask;
    }
    m->live[slot] = 0;
    m->count--;
    /* Backward-shift deletion keeps every probe chain unbroken. */
    uint32_t i = p, j = p;
    for (;;) {
        j = (j + 1) & m->tmask;
        if (!m->table[j])
            break;
        uint32_t k = home(m, m->keys[m->table[j] - 1]);
        int between = (i <= j) ? (i < k && k <= j) : (i < k || k <= j);
        if (!between) {
            m->table[i] = m->table[j];
            i = j;
        }
    }
    m->table[i] = 0;
}

uint32_t trlat_corrmap_find(const struct trlat_corrmap *m, uint32_t key, uint32_t *cursor)
{
    uint32_t p = *cursor ? *cursor - 1 : home(m, key);
    while (m->table[p]) {
        uint32_t slot = m->table[p] - 1;
        p = (p + 1) & m->tmask;
        if (m->keys[slot] == key) {
            *cursor = p + 1;
            return slot;
        }
    }
    *cursor = p + 1;
    return TRLAT_CORRMAP_NONE;
}
