/* The memo: a fixed number of entries (TRLAT_FASTPATH_MEMO), found by key
 * hash through chained buckets, pushed out by CLOCK (a hit sets an entry's
 * bit; the hand clears bits until it finds an entry without one). Only ever
 * touched with the GIL held, so nothing here locks. Memory is bounded by
 * cap entries of at most FP_KEY_MAX + FP_MAX_BLOB bytes each. */
#include "fastpath/fp.h"

#include <stdlib.h>

int fp_memo_init(struct fp_memo *m, uint32_t cap)
{
    memset(m, 0, sizeof *m);
    m->cap = cap;
    if (!cap)
        return 0;
    uint32_t nb = 16;
    while (nb < 2 * cap)
        nb *= 2;
    m->ring = calloc(cap, sizeof *m->ring);
    m->buckets = calloc(nb, sizeof *m->buckets);
    if (!m->ring || !m->buckets) {
        free(m->ring);
        free(m->buckets);
        memset(m, 0, sizeof *m);
        return -1;
    }
    m->nbuckets = nb;
    return 0;
}

static inline int same_key(const struct fp_entry *e, const struct fp_key *k)
{
    return e->hash == k->hash && e->key_len == k->len && memcmp(e->key, k->b, k->len) == 0;
}

struct fp_entry *fp_memo_find(struct fp_memo *m, const struct fp_key *k)
{
    if (!m->nbuckets)
        return NULL;
    for (struct fp_entry *e = m->buckets[k->hash & (m->nbuckets - 1)]; e; e = e->next)
        if (same_key(e, k)) {
            e->ref = 1;
            return e;
        }
    return NULL;
}

static void unlink_bucket(struct fp_memo *m, struct fp_entry *e)
{
    struct fp_entry **p = &m->buckets[e->hash & (m->nbuckets - 1)];
    while (*p && *p != e)
        p = &(*p)->next;
    if (*p)
        *p = e->next;
    e->next = NULL;
}

void fp_memo_remove(struct fp_memo *m, struct fp_entry *e)
{
    if (!m->nbuckets || e->clock >= m->cap || m->ring[e->clock] != e)
        return;
    m->gen++;
    unlink_bucket(m, e);
    /* keep the ring dense: the last entry takes the hole */
    uint32_t last = m->n - 1;
    m->ring[e->clock] = m->ring[last];
    m->ring[e->clock]->clock = e->clock;
    m->ring[last] = NULL;
    m->n--;
    if (m->hand >= m->n)
        m->hand = 0;
    e->clock = UINT32_MAX;
}

struct fp_entry *fp_memo_insert(struct fp_memo *m, struct fp_entry *e)
{
    if (!m->cap)
        return e; /* stores nothing: hand it straight back */
    struct fp_entry *out = NULL;
    /* same key: replace */
    for (struct fp_entry *x = m->buckets[e->hash & (m->nbuckets - 1)]; x; x = x->next)
        if (x->hash == e->hash && x->key_len == e->key_len && memcmp(x->key, e->key, e->key_len) == 0) {
            fp_memo_remove(m, x);
            out = x;
            break;
        }
    if (!out && m->n == m->cap) {
        /* at most two sweeps: the first clears every bit */
        for (uint32_t steps = 0; !out; steps++) {
            if (steps > 2 * m->n)
                return e; /* everything pinned */
            struct fp_entry *v = m->ring[m->hand];
            if (!v->ref && !v->pins) {
                fp_memo_remove(m, v);
                out = v;
                break;
            }
            v->ref = 0;
            m->hand = (m->hand + 1) % m->n;
        }
    }
    m->gen++;
    e->clock = m->n;
    e->ref = 0; /* a new entry earns its bit with its first hit */
    m->ring[m->n++] = e;
    struct fp_entry **b = &m->buckets[e->hash & (m->nbuckets - 1)];
    e->next = *b;
    *b = e;
    return out;
}

void fp_memo_clear(struct fp_memo *m, void (*fn)(struct fp_entry *))
{
    while (m->n) {
        struct fp_entry *e = m->ring[m->n - 1];
        fp_memo_remove(m, e);
        if (fn)
            fn(e);
    }
    m->hand = 0;
}

static size_t up8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

struct fp_entry *fp_entry_new(const struct fp_key *k, uint32_t nparams, uint32_t blob_len, uint32_t nslots,
                              uint32_t nwant, uint32_t nrefs)
{
    size_t sz = up8(sizeof(struct fp_entry));
    size_t o_refs = sz;
    sz += up8((size_t)nrefs * sizeof(void *));
    size_t o_ident = sz;
    sz += up8((size_t)nwant * 8);
    size_t o_off = sz;
    sz += up8((size_t)nparams * 4);
    size_t o_size = sz;
    sz += up8((size_t)nparams * 4);
    size_t o_slots = sz;
    sz += up8((size_t)nslots * sizeof(struct fp_slot));
    size_t o_blob = sz;
    sz += up8(blob_len);
    size_t o_key = sz;
    sz += k->len;
    unsigned char *p = calloc(1, sz);
    if (!p)
        return NULL;
    struct fp_entry *e = (struct fp_entry *)p;
    e->refs = (void **)(p + o_refs);
    e->ident = (uint64_t *)(p + o_ident);
    e->off = (uint32_t *)(p + o_off);
    e->size = (uint32_t *)(p + o_size);
    e->slots = (struct fp_slot *)(p + o_slots);
    e->blob = p + o_blob;
    e->key = p + o_key;
    memcpy(e->key, k->b, k->len);
    e->key_len = k->len;
    e->hash = k->hash;
    e->nparams = nparams;
    e->blob_len = blob_len;
    e->nslots = nslots;
    e->nwant = nwant;
    e->clock = UINT32_MAX;
    return e;
}
