/* The fast path's counters, per kernel name, for the report: hits, misses
 * and fallbacks by reason. Records are written with the GIL held (one
 * writer at a time) and read at exit; they are never freed, and their
 * number is bounded (past FP_STATS names everything counts as "(other)"). */
#include "fastpath/fp.h"
#include "interpose/config.h"
#include "report/fold.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

const char *const fp_reason_names[FP_R_COUNT] = {
#define FP_R_NAME(e, s) s,
    FP_REASONS(FP_R_NAME)
#undef FP_R_NAME
};

#define FP_STATS 1024
static struct fp_stat *stats[FP_STATS];
static unsigned nstats;
static struct fp_stat other = {.name = "(other)"};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct fp_stat *fp_stat_get(const char *name)
{
    pthread_mutex_lock(&lock); /* the GIL already orders writers; the report reads */
    struct fp_stat *s = NULL;
    for (unsigned i = 0; i < nstats && !s; i++)
        if (strcmp(stats[i]->name, name) == 0)
            s = stats[i];
    if (!s && nstats < FP_STATS && (s = calloc(1, sizeof *s))) {
        snprintf(s->name, sizeof s->name, "%s", name);
        stats[nstats++] = s;
    }
    pthread_mutex_unlock(&lock);
    return s ? s : &other;
}

void fp_stats_reset(void)
{
    pthread_mutex_init(&lock, NULL);
    for (unsigned i = 0; i < nstats; i++) {
        stats[i]->hits = stats[i]->misses = 0;
        memset(stats[i]->reasons, 0, sizeof stats[i]->reasons);
    }
    other.hits = other.misses = 0;
    memset(other.reasons, 0, sizeof other.reasons);
}

uint64_t fp_stats_hits(void)
{
    pthread_mutex_lock(&lock);
    uint64_t n = TRLAT_RD(other.hits);
    for (unsigned i = 0; i < nstats; i++)
        n += TRLAT_RD(stats[i]->hits);
    pthread_mutex_unlock(&lock);
    return n;
}

static void add(struct trlat_kstats *k, const struct fp_stat *s)
{
    k->has_fastpath = 1;
    k->fastpath.hits += TRLAT_RD(s->hits);
    k->fastpath.misses += TRLAT_RD(s->misses);
    for (int r = 0; r < FP_R_COUNT; r++) {
        uint64_t c = TRLAT_RD(s->reasons[r]);
        if (!c)
            continue;
        int i = 0;
        while (i < k->fastpath.nreasons && strcmp(k->fastpath.reasons[i], fp_reason_names[r]) != 0)
            i++;
        if (i == k->fastpath.nreasons) {
            if (i == (int)(sizeof k->fastpath.counts / sizeof k->fastpath.counts[0]))
                continue; /* more distinct reasons than the report keeps */
            k->fastpath.reasons[i] = fp_reason_names[r];
            k->fastpath.nreasons++;
        }
        k->fastpath.counts[i] += c;
    }
}

void fp_stats_contribute(struct trlat_fold *f)
{
    pthread_mutex_lock(&lock);
    unsigned n = nstats;
    pthread_mutex_unlock(&lock);
    for (unsigned i = 0; i < n; i++) {
        const struct fp_stat *s = stats[i];
        uint64_t any = s->hits | s->misses;
        for (int r = 0; r < FP_R_COUNT; r++)
            any |= s->reasons[r];
        if (!any)
            continue; /* e.g. a JITFunction only ever seen before a fork */
        struct trlat_kstats *k = trlat_fold_kernel(f, s->name);
        if (k)
            add(k, s);
    }
    uint64_t any = other.hits | other.misses;
    for (int r = 0; r < FP_R_COUNT; r++)
        any |= other.reasons[r];
    if (any) {
        struct trlat_kstats *k = trlat_fold_kernel(f, other.name);
        if (k)
            add(k, &other);
    }
    /* With the fast path on every kernel has the object (zeros for kernels
     * Triton did not launch: docs/REPORT.md). */
    for (size_t i = 0; i < f->n; i++)
        f->k[i]->has_fastpath = 1;
}
