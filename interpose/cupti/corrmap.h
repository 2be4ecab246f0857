/* A bounded multimap from CUPTI correlation id to item slots, for joining
 * activity records that arrive in any order. Items are reused first in,
 * first out: inserting into a full map reuses the oldest item's slot (the
 * caller looks at it first with trlat_corrmap_next and retires it). Several
 * items may share a key (all kernels of one graph launch share its id).
 * Values live in the caller's arrays, indexed by slot. Not thread-safe. */
#ifndef TRLAT_GPU_CORRMAP_H
#define TRLAT_GPU_CORRMAP_H

#include <stdint.h>

#define TRLAT_CORRMAP_NONE UINT32_MAX

struct trlat_corrmap {
    uint32_t cap;    /* items, a power of two */
    uint32_t tmask;  /* table slots - 1 (twice the items) */
    uint32_t *table; /* item slot + 1; 0 empty */
    uint32_t *keys;  /* per item */
    uint8_t *live;   /* per item */
    uint64_t next;   /* items inserted so far; the next slot is next % cap */
    uint32_t count;  /* live items */
};

/* cap is rounded up to a power of two; returns -1 without memory. */
int trlat_corrmap_init(struct trlat_corrmap *m, uint32_t cap);
void trlat_corrmap_free(struct trlat_corrmap *m);

/* The slot the next insert takes; if it is live, the caller retires it
 * (trlat_corrmap_remove) before inserting. */
static inline uint32_t trlat_corrmap_next(const struct trlat_corrmap *m)
{
    return (uint32_t)(m->next & (m->cap - 1));
}
/* Inserts key at the next slot (which must not be live) and returns it. */
uint32_t trlat_corrmap_insert(struct trlat_corrmap *m, uint32_t key);
/* Removes a live item. */
void trlat_corrmap_remove(struct trlat_corrmap *m, uint32_t slot);
/* First live item with key (*cursor = 0 to begin; keep calling with the
 * same cursor for the others), or TRLAT_CORRMAP_NONE. Removing an item
 * invalidates the cursor: start again from 0. */
uint32_t trlat_corrmap_find(const struct trlat_corrmap *m, uint32_t key, uint32_t *cursor);

#endif
