/* The fast path's counters, per kernel name: hits, misses and fallbacks by
 * reason (report/fastpath_section.c puts them in the report). Records are written with the GIL held (one
 * writer at a time) and read at exit; they are never freed, and their
 * number is bounded (past FP_STATS names everything counts as "(other)"). */
#include "fastpath/fastpath.h"
#include "fastpath/fp.h"
#include "interpose/config.h"
#include "interpose/tstate.h"

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
        stats[i]->hits = stats[i]->misses = stats[i]->library_hits = 0;
        memset(stats[i]->reasons, 0, sizeof stats[i]->reasons);
    }
    other.hits = other.misses = other.library_hits = 0;
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

int trlat_fastpath_counts(unsigned i, struct trlat_fastpath_counts *out)
{
    pthread_mutex_lock(&lock);
    unsigned n = nstats;
    pthread_mutex_unlock(&lock);
    if (i > n)
        return 0;
    const struct fp_stat *s = i < n ? stats[i] : &other;
    *out = (struct trlat_fastpath_counts){.name = s->name,
                                          .hits = TRLAT_RD(s->hits),
                                          .misses = TRLAT_RD(s->misses),
                                          .library_hits = TRLAT_RD(s->library_hits),
                                          .reasons = s->reasons,
                                          .reason_names = fp_reason_names,
                                          .nreasons = FP_R_COUNT};
    return 1;
}
