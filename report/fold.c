#include "report/fold.h"
#include "interpose/clock.h"
#include "interpose/hash.h"
#include "interpose/names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rebuilds the name index at a size that keeps it at most half full for
 * n + 1 entries: the probe loops below end only on an empty slot. */
static int reindex(struct trlat_fold *f)
{
    size_t cap = 256;
    while (cap < 2 * (f->n + 1))
        cap *= 2;
    size_t *ix = calloc(cap, sizeof *ix);
    if (!ix)
        return -1;
    for (size_t i = 0; i < f->n; i++) {
        size_t h = (size_t)trlat_hash_str(f->k[i]->name) & (cap - 1);
        while (ix[h])
            h = (h + 1) & (cap - 1);
        ix[h] = i + 1;
    }
    free(f->index);
    f->index = ix;
    f->index_cap = cap;
    return 0;
}

struct trlat_kstats *trlat_fold_kernel(struct trlat_fold *f, const char *name)
{
    if (f->index_cap) {
        for (size_t h = (size_t)trlat_hash_str(name) & (f->index_cap - 1); f->index[h];
             h = (h + 1) & (f->index_cap - 1))
            if (strcmp(f->k[f->index[h] - 1]->name, name) == 0)
                return f->k[f->index[h] - 1];
    }
    if (2 * (f->n + 1) > f->index_cap && reindex(f))
        return NULL;
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        struct trlat_kstats **k = realloc(f->k, cap * sizeof *k);
        if (!k)
            return NULL;
        f->k = k;
        f->cap = cap;
    }
    struct trlat_kstats *ks = calloc(1, sizeof *ks);
    if (!ks || !(ks->name = strdup(name))) {
        free(ks);
        return NULL;
    }
    f->k[f->n++] = ks;
    size_t h = (size_t)trlat_hash_str(name) & (f->index_cap - 1);
    while (f->index[h])
        h = (h + 1) & (f->index_cap - 1);
    f->index[h] = f->n;
    return ks;
}

static void site_add(struct trlat_fsite *d, const struct trlat_fsite *s)
{
    d->launches += s->launches;
    d->gap_ns += s->gap_ns;
    d->triton_ns += s->triton_ns;
    d->lib_ns += s->lib_ns;
}

void trlat_kstats_add_site(struct trlat_kstats *k, const struct trlat_fsite *s)
{
    for (int i = 0; i < k->nsites; i++)
        if (k->sites[i].id == s->id && k->sites[i].kind == s->kind) {
            site_add(&k->sites[i], s);
            return;
        }
    if (k->nsites < (int)(sizeof k->sites / sizeof k->sites[0]))
        k->sites[k->nsites++] = *s;
    else
        site_add(&k->other, s);
}

static void add_slot(const struct trlat_tstate *ts, const struct trlat_kslot *s, void *arg)
{
    struct trlat_fold *f = arg;
    char buf[48];
    const char *name = s->name;
    if (s == &ts->overflow)
        name = "(other)";
    if (!name)
        name = trlat_names_get(s->func);
    if (!name) {
        snprintf(buf, sizeof buf, "<unknown %p>", s->func);
        name = buf;
    }
    struct trlat_kstats *k = trlat_fold_kernel(f, name);
    if (!k)
        return;
    struct trlat_stat tmp;
    trlat_stat_snapshot(&tmp, &s->driver);
    /* driver's count is weighted (a sampled hit's launch counts as many) */
    uint64_t weighted = TRLAT_RD(s->weighted); /* read after: a fold since may have added to it */
    uint64_t launches = (tmp.count > weighted ? tmp.count - weighted : 0) + TRLAT_RD(s->untimed);
    if (name == buf)
        f->unnamed_launches += launches;
    k->from_driver += launches;
    trlat_stat_merge(&k->driver, &tmp);
    trlat_stat_snapshot(&tmp, &s->gap);
    trlat_stat_merge(&k->gap, &tmp);
    trlat_stat_snapshot(&tmp, &s->py);
    trlat_stat_merge(&k->py, &tmp);
    trlat_stat_snapshot(&tmp, &s->ret);
    trlat_stat_merge(&k->ret, &tmp);
    k->errors += TRLAT_RD(s->errors);
    k->ph_calls += TRLAT_RD(s->ph_calls);
    k->ph_split += TRLAT_RD(s->ph_split);
    for (int i = 0; i < TRLAT_PH_PARTS; i++)
        k->ph_ns[i] += TRLAT_RD(s->ph_ns[i]);
    k->lib_calls += TRLAT_RD(s->lib_calls);
    k->lib_ns += TRLAT_RD(s->lib_ns);
    int kind = TRLAT_RD(s->site_kind);
    for (int i = 0; i < TRLAT_MAX_SITES; i++) {
        struct trlat_fsite site = {TRLAT_RD(s->sites[i].id),        kind,
                                   TRLAT_RD(s->sites[i].launches),  TRLAT_RD(s->sites[i].gap_ns),
                                   TRLAT_RD(s->sites[i].triton_ns), TRLAT_RD(s->sites[i].lib_ns)};
        if (site.id)
            trlat_kstats_add_site(k, &site);
    }
    site_add(&k->other, &(struct trlat_fsite){0, 0, TRLAT_RD(s->other_sites), TRLAT_RD(s->other_gap_ns),
                                              TRLAT_RD(s->other_triton_ns), TRLAT_RD(s->other_lib_ns)});
}

/* Launches still in a thread's record batch (not yet folded into its slots). */
static void add_pending(const struct trlat_tstate *ts, void *arg)
{
    struct trlat_fold *f = arg;
    static struct trlat_rec recs[TRLAT_REC_BATCH]; /* the fold runs once, at exit */
    struct trlat_rec_last last;
    uint32_t n = trlat_tstate_pending(ts, recs, &last);
    struct trlat_kstats *k = NULL;
    void *kfunc = NULL;
    for (uint32_t i = 0; i < n; i++) {
        if (!k || recs[i].func != kfunc) {
            char buf[48];
            const char *name = trlat_name_of(recs[i].func);
            if (!name) {
                snprintf(buf, sizeof buf, "<unknown %p>", recs[i].func);
                name = buf;
            }
            if (!(k = trlat_fold_kernel(f, name)))
                return;
            kfunc = recs[i].func;
            if (name == buf)
                f->unnamed_launches++;
        } else if (strncmp(k->name, "<unknown", 8) == 0) {
            f->unnamed_launches++;
        }
        k->from_driver++;
        uint64_t site = trlat_rec_site(recs[i].site);
        unsigned region = trlat_rec_region(recs[i].site);
        if (site || region) {
            struct trlat_rec_ns ns = trlat_rec_ns(&recs[i], &last);
            if (site)
                trlat_kstats_add_site(k, &(struct trlat_fsite){site, TRLAT_SITE_PYTHON, 1, ns.gap, ns.py + ns.ret, 0});
            if (region)
                trlat_region_add(&f->regions[region], &ns);
        }
        uint64_t weighted = 0; /* the launch is counted above */
        trlat_rec_times(&recs[i], &last, &k->driver, &k->gap, &k->py, &k->ret, &weighted);
    }
}

/* A thread's region sums, folded so far. */
static void add_regions(const struct trlat_tstate *ts, void *arg)
{
    struct trlat_fold *f = arg;
    const struct trlat_region_state *rs = __atomic_load_n(&ts->rs, __ATOMIC_ACQUIRE);
    if (!rs)
        return;
    for (unsigned i = 1; i < TRLAT_REGIONS_MAX; i++) {
        const struct trlat_rstat *s = &rs->stats[i];
        struct trlat_rstat *d = &f->regions[i];
        d->launches += TRLAT_RD(s->launches);
        d->driver_ns += TRLAT_RD(s->driver_ns);
        d->py_ns += TRLAT_RD(s->py_ns);
        d->ret_ns += TRLAT_RD(s->ret_ns);
        d->gap_ns += TRLAT_RD(s->gap_ns);
    }
}

struct trlat_fold *trlat_fold_build(void)
{
    struct trlat_fold *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    trlat_tstate_foreach(add_slot, f);
    trlat_tstate_foreach_thread(add_regions, f);
    trlat_tstate_foreach_thread(add_pending, f);
    f->threads = trlat_tstate_count();
    return f;
}

static uint64_t host_total(const struct trlat_kstats *k)
{
    return k->driver.sum + k->py.sum;
}

static int by_host_time(const void *a, const void *b)
{
    const struct trlat_kstats *x = *(struct trlat_kstats *const *)a, *y = *(struct trlat_kstats *const *)b;
    uint64_t hx = host_total(x), hy = host_total(y);
    if (hx != hy)
        return hx < hy ? 1 : -1;
    if (x->gpu.sum != y->gpu.sum)
        return x->gpu.sum < y->gpu.sum ? 1 : -1;
    return strcmp(x->name, y->name);
}

void trlat_fold_sort(struct trlat_fold *f)
{
    if (f->n) /* none: f->k is NULL, which qsort may not be given */
        qsort(f->k, f->n, sizeof *f->k, by_host_time);
    if (reindex(f)) { /* positions changed: without memory for a new index, none */
        free(f->index);
        f->index = NULL;
        f->index_cap = 0;
    }
}

void trlat_fold_free(struct trlat_fold *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++) {
        free(f->k[i]->name);
        free(f->k[i]);
    }
    free(f->k);
    free(f->index);
    free(f);
}
