/* The fold: every thread's per-CUfunction records (and, where present,
 * CUPTI's per-kernel GPU records and the fast path's counters) gathered into
 * one entry per kernel name. Built once, at exit, off the launch path. */
#ifndef TRLAT_FOLD_H
#define TRLAT_FOLD_H

#include "interpose/hist.h"
#include "interpose/region.h"
#include "interpose/tstate.h"

#include <stddef.h>
#include <stdint.h>

#define TRLAT_REPORT_SITES 8

struct trlat_fsite {
    uint64_t id;
    int kind;
    uint64_t launches, gap_ns, triton_ns, lib_ns; /* see struct trlat_site */
};

struct trlat_fpath {
    uint64_t hits, misses, library_hits;
    const char *reasons[16];
    uint64_t counts[16];
    int nreasons;
};

struct trlat_kstats {
    char *name;
    uint64_t from_driver, from_runtime, errors;
    struct trlat_stat driver, gap, py, ret, gpu;
    int has_gpu, has_fastpath;
    uint64_t starved_ns, starved_launches;
    struct trlat_fpath fastpath;
    struct trlat_fsite sites[64]; /* merged from all threads; top 8 reported */
    int nsites;
    struct trlat_fsite other;                           /* launches (and times) of sites beyond those */
    uint64_t ph_calls, ph_split, ph_ns[TRLAT_PH_PARTS]; /* TRLAT_PY_PHASES (struct trlat_kslot) */
    uint64_t lib_calls, lib_ns;                         /* a library's own part (struct trlat_kslot) */
};

struct trlat_fold {
    struct trlat_kstats **k;
    size_t n, cap;
    size_t *index; /* open addressing by name, entries are k-index + 1 */
    size_t index_cap;
    unsigned threads;
    uint64_t unnamed_launches;
    struct trlat_rstat regions[TRLAT_REGIONS_MAX]; /* by region id, all threads */
    /* filled by CUPTI when it ran */
    int has_gpu;
    uint64_t gpu_busy_ns, dropped_records;
};

/* Builds the fold of all threads' records; NULL without memory. */
struct trlat_fold *trlat_fold_build(void);
/* The entry for name, created empty if new. */
struct trlat_kstats *trlat_fold_kernel(struct trlat_fold *f, const char *name);
/* Sorts kernels by total host time (driver + py->driver), descending. */
void trlat_fold_sort(struct trlat_fold *f);
void trlat_fold_free(struct trlat_fold *f);
/* Adds one site's launches and host times (s->id, s->kind: which) to a kernel. */
void trlat_kstats_add_site(struct trlat_kstats *k, const struct trlat_fsite *s);

#endif
