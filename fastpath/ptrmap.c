/* The layers' records by object: see fp.h's fp_pmap. */
#include "fastpath/fp.h"

#include <stdlib.h>

int fp_pmap_put(struct fp_pmap *m, const void *key, void *val)
{
    if (fp_pmap_full(m) || (!m->slot && !(m->slot = calloc(FP_PMAP_SLOTS, sizeof *m->slot))))
        return -1;
    unsigned i = fp_pmap_hash(key);
    while (m->slot[i].key)
        i = (i + 1) & (FP_PMAP_SLOTS - 1);
    m->slot[i] = (struct fp_pmap_slot){key, val};
    m->n++;
    return 0;
}
