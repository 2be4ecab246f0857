/* Fixed-size log-linear histogram of nanosecond durations.
 *
 * Values below 16 ns get one bucket each; above, every power of two is split
 * into 8 equal sub-buckets (relative error of a bucket's midpoint <= 6.25%).
 * Everything at or above 2^40 ns (~18 min) lands in the last bucket. The
 * scheme is part of the report format ("hist_scheme": "log2x8-v1"), so the
 * `trlat` CLI merges histograms from many processes exactly; see
 * docs/REPORT.md. Header-only: the launch path inlines trlat_hist_add. */
#ifndef TRLAT_HIST_H
#define TRLAT_HIST_H

#include <stdint.h>

#define TRLAT_HIST_LINEAR 16u
#define TRLAT_HIST_SUB 8u
#define TRLAT_HIST_MAX_MSB 39u
#define TRLAT_HIST_BUCKETS (TRLAT_HIST_LINEAR + (TRLAT_HIST_MAX_MSB - 3u) * TRLAT_HIST_SUB)
#define TRLAT_HIST_SCHEME "log2x8-v1"

/* A value's bucket. Branch-light: one clz and a few shifts. */
static inline unsigned trlat_hist_index(uint64_t v)
{
    if (v < TRLAT_HIST_LINEAR)
        return (unsigned)v;
    unsigned msb = 63u - (unsigned)__builtin_clzll(v);
    if (msb > TRLAT_HIST_MAX_MSB)
        return TRLAT_HIST_BUCKETS - 1u;
    return TRLAT_HIST_LINEAR + (msb - 4u) * TRLAT_HIST_SUB + (unsigned)((v >> (msb - 3u)) & (TRLAT_HIST_SUB - 1u));
}

/* Smallest value that falls in bucket i. */
static inline uint64_t trlat_hist_lower(unsigned i)
{
    if (i < TRLAT_HIST_LINEAR)
        return i;
    unsigned k = i - TRLAT_HIST_LINEAR;
    unsigned msb = 4u + k / TRLAT_HIST_SUB, sub = k % TRLAT_HIST_SUB;
    return (uint64_t)(TRLAT_HIST_SUB + sub) << (msb - 3u);
}

/* Value reported for a bucket: its midpoint (the value itself below 16 ns). */
static inline uint64_t trlat_hist_mid(unsigned i)
{
    if (i < TRLAT_HIST_LINEAR)
        return i;
    unsigned msb = 4u + (i - TRLAT_HIST_LINEAR) / TRLAT_HIST_SUB;
    return trlat_hist_lower(i) + ((uint64_t)1 << (msb - 3u)) / 2u;
}

/* Summary statistics of one metric. Plain counters: each instance has one
 * writer; readers folding other threads' instances tolerate torn counts
 * between fields (see interpose/tstate.c). */
struct trlat_stat {
    uint64_t count, sum, min, max;
    uint64_t hist[TRLAT_HIST_BUCKETS];
};

static inline void trlat_stat_add(struct trlat_stat *s, uint64_t v)
{
    if (s->count == 0 || v < s->min)
        s->min = v;
    if (v > s->max)
        s->max = v;
    s->count++;
    s->sum += v;
    s->hist[trlat_hist_index(v)]++;
}

static inline void trlat_stat_merge(struct trlat_stat *dst, const struct trlat_stat *src)
{
    if (src->count == 0)
        return;
    if (dst->count == 0 || src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
    dst->count += src->count;
    dst->sum += src->sum;
    for (unsigned i = 0; i < TRLAT_HIST_BUCKETS; i++)
        dst->hist[i] += src->hist[i];
}

/* q-quantile (0 < q <= 1): midpoint of the first bucket whose cumulative
 * count reaches ceil(q * count), clamped to [min, max]. */
static inline uint64_t trlat_stat_quantile(const struct trlat_stat *s, double q)
{
    if (s->count == 0)
        return 0;
    uint64_t rank = (uint64_t)(q * (double)s->count);
    if ((double)rank < q * (double)s->count)
        rank++;
    if (rank == 0)
        rank = 1;
    uint64_t cum = 0;
    for (unsigned i = 0; i < TRLAT_HIST_BUCKETS; i++) {
        cum += s->hist[i];
        if (cum >= rank) {
            uint64_t v = trlat_hist_mid(i);
            return v < s->min ? s->min : v > s->max ? s->max : v;
        }
    }
    return s->max;
}

#endif
