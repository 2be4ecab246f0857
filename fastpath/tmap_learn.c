/* Where a host TMA descriptor keeps its global address. A CUtensorMap is
 * opaque, and its format may change with the driver, so the fast path
 * never assumes one: when a captured call's launcher encoded tensor maps
 * (Triton's fill_tma_descriptor), each encoding is made again with every
 * address bit a replay may change flipped, one at a time, then all at
 * once. Only when each flip changes exactly its own bit of one uint64, the
 * same one for all, which holds the address itself, does a replay write a
 * new address there (the rest of the map as captured); else the entry
 * replays only for the address it was captured with, and the process's
 * descriptors are keyed by address from then on. On the H200's driver (580)
 * the address is the map's first eight bytes. */
#include "fastpath/fp.h"
#include "interpose/log.h"

static int one_bit_changed(const unsigned char *a, const unsigned char *b, int *bit)
{
    int n = 0;
    for (int j = 0; j < 128; j++) {
        unsigned d = a[j] ^ b[j];
        if (!d)
            continue;
        if (n++ || (d & (d - 1)))
            return 0;
        *bit = j * 8 + __builtin_ctz(d);
    }
    return n == 1;
}

int fp_tmap_addr_offset(const struct trlat_tmap_call *c)
{
    _Alignas(64) unsigned char base[128], m[128];
    if (!c->encode || trlat_tmap_encode_at(c, base, c->addr) != CUDA_SUCCESS)
        return -1;
    int off = -1;
    for (int i = 4; i < 64; i++) {
        if (!(FP_TMAP_ADDR_MASK >> i & 1))
            continue;
        int bit = -1;
        if (trlat_tmap_encode_at(c, m, c->addr ^ 1ull << i) != CUDA_SUCCESS || !one_bit_changed(base, m, &bit) ||
            bit < i || (bit - i) % 8 || bit - i > 120 * 8 || (off >= 0 && off != (bit - i) / 8))
            return -1;
        off = (bit - i) / 8;
    }
    uint64_t v;
    memcpy(&v, base + off, 8);
    if (v != c->addr)
        return -1; /* the address itself, not a function of it */
    /* every bit at once: nothing but those eight bytes, and they say it */
    uint64_t all = c->addr ^ FP_TMAP_ADDR_MASK;
    if (trlat_tmap_encode_at(c, m, all) != CUDA_SUCCESS)
        return -1;
    memcpy(&v, m + off, 8);
    memcpy(m + off, base + off, 8);
    return v == all && !memcmp(base, m, 128) ? off : -1;
}

int fp_tmap_keyed;

void fp_tmap_learn(const struct fp_capture *cap, struct fp_want *w, unsigned nwant)
{
    unsigned k = 0;
    for (unsigned i = 0; i < nwant; i++)
        k += w[i].spec == FP_S_TMADDR;
    int ok = k && k == cap->ntmap && k <= FP_TMAP_CALLS;
    for (unsigned i = 0, j = 0; ok && i < nwant; i++) {
        if (w[i].spec != FP_S_TMADDR)
            continue;
        const struct trlat_tmap_call *t = &cap->tmap[j++];
        int off = t->addr == w[i].val ? fp_tmap_addr_offset(t) : -1;
        w[i].sub = off >= 0 ? (uint8_t)off : FP_TMAP_UNKNOWN;
        ok = off >= 0;
    }
    if (k && !ok && !fp_tmap_keyed) {
        /* this entry replays for its captured addresses only, and the
         * process's next keys hold the whole address, one entry each */
        fp_tmap_keyed = 1;
        if (fp_conf.debug)
            trlat_log_debug("fast path: no place found for a tensor map's address (%u maps encoded, %u wanted): "
                            "host tensor descriptors are keyed by address from here",
                            cap->ntmap, k);
    }
}
