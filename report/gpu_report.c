/* CUPTI's part of the report: moves the GPU statistics into the report's fold
 * (per-kernel GPU time, launches seen only through CUPTI, starvation, GPU
 * busy time), adds a "gpu" object with the fold's own counters, and writes
 * the "gpu" and "starved" events for TRLAT_TRACE. */
#include "interpose/cupti/session.h"
#include "interpose/log.h"
#include "interpose/real.h"
#include "report/demangle.h"
#include "report/json.h"
#include "report/writer.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* Report entry of each GPU statistics kernel, for the events (valid until the
 * report fold is freed). */
static struct trlat_kstats **entry_of;
static size_t nentries;
static struct trlat_gpu_totals totals;
static int have_totals;

static struct trlat_kstats *find(struct trlat_fold *f, const char *name)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->k[i]->name, name) == 0)
            return f->k[i];
    return NULL;
}

/* The entry for a CUPTI name: the host's entry when trlat's launches used
 * the same (possibly mangled) name, else one under the demangled name. */
static struct trlat_kstats *entry_for(struct trlat_fold *f, const char *name)
{
    struct trlat_kstats *k = find(f, name);
    if (k)
        return k;
    char *d = trlat_demangle(name);
    k = trlat_fold_kernel(f, d ? d : name);
    free(d);
    return k;
}

/* Kernel records arrived, not one of them met its launch call's callback,
 * and trlat itself launched some of those kernels: the join did not work in
 * this process. Said once. */
static void self_check(uint64_t records, uint64_t joined, int launched_by_trlat)
{
    static atomic_flag once;
    if (!records || joined || !launched_by_trlat)
        return;
    trlat_log_once(&once,
                   "CUPTI delivered %llu kernel records but no launch callback joined them; GPU times are "
                   "kept, starvation is not computed",
                   (unsigned long long)records);
}

void trlat_gpu_section_fold(struct trlat_fold *f, int final)
{
    trlat_report_cupti_state = trlat_cupti_state();
    trlat_report_cupti_reason = trlat_cupti_reason();
    struct trlat_gpu_stats *g = trlat_cupti_fold_lock();
    if (!g)
        return;
    trlat_gpu_stats_drain(g);
    trlat_gpu_stats_totals(g, &totals);
    have_totals = 1;
    nentries = trlat_gpu_stats_count(g);
    free(entry_of); /* a checkpoint's, before */
    entry_of = calloc(nentries ? nentries : 1, sizeof *entry_of);
    uint64_t records = 0, joined = 0;
    int launched_by_trlat = 0;
    for (size_t i = 0; i < nentries; i++) {
        const struct trlat_gpu_kstat *gk = trlat_gpu_stats_at(g, i);
        joined += gk->driver + gk->other;
        records += gk->driver + gk->other + gk->unjoined;
        struct trlat_kstats *k = entry_for(f, gk->name);
        if (!k)
            continue;
        launched_by_trlat |= k->from_driver > 0;
        if (entry_of)
            entry_of[i] = k;
        k->has_gpu = 1;
        trlat_stat_merge(&k->gpu, &gk->gpu);
        /* Launched by a call trlat did not make: seen only through CUPTI.
         * Its launch callback lost: trlat's own launch when trlat launched
         * that kernel (already counted), else one seen only through CUPTI. */
        k->from_runtime += gk->other + (k->from_driver ? 0 : gk->unjoined);
        k->starved_ns += gk->starved_ns;
        k->starved_launches += gk->starved_launches;
    }
    f->has_gpu = 1;
    f->gpu_busy_ns = totals.busy_ns;
    f->dropped_records = totals.dropped;
    trlat_cupti_fold_unlock();
    self_check(records, joined, launched_by_trlat);
    if (final && (totals.dropped || totals.untimed))
        trlat_log("CUPTI: %llu activity records dropped, %llu kernels without GPU timestamps (still running at "
                  "exit?); GPU totals leave them out",
                  (unsigned long long)totals.dropped, (unsigned long long)totals.untimed);
}

void trlat_gpu_section(struct trlat_json *j)
{
    if (!have_totals)
        return;
    trlat_json_obj(j, "gpu");
    trlat_json_u64(j, "kernel_records", totals.kernels);
    trlat_json_u64(j, "devices", totals.devices);
    trlat_json_u64(j, "busy_ns", totals.busy_ns);
    trlat_json_u64(j, "starved_ns", totals.starved_ns);
    trlat_json_u64(j, "starved_launches", totals.starved_launches);
    trlat_json_u64(j, "stream_starved_ns", totals.stream_starved_ns);
    trlat_json_u64(j, "dropped_records", totals.dropped);
    trlat_json_u64(j, "untimed_records", totals.untimed);
    trlat_json_u64(j, "late_records", totals.late);
    trlat_json_u64(j, "unjoined_records", totals.unjoined);
    trlat_json_u64(j, "joined_by_trlat_id", totals.joined_trlat);
    trlat_json_u64(j, "other_kernel_records", totals.other_names);
    trlat_json_u64(j, "lost_join_records", totals.lost_join);
    trlat_json_end_obj(j);
}

struct evs {
    struct trlat_gpu_event *v;
    size_t n, cap;
};

static void collect(const struct trlat_gpu_event *e, void *arg)
{
    struct evs *l = arg;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 1024;
        struct trlat_gpu_event *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *e;
}

static int by_start(const void *a, const void *b)
{
    const struct trlat_gpu_event *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->kind < y->kind ? 1 : x->kind > y->kind ? -1 : 0; /* a starved interval before its kernel */
}

void trlat_gpu_section_events(struct trlat_json *j, struct trlat_fold *f, uint64_t first_ns)
{
    struct trlat_gpu_stats *g = trlat_cupti_fold_lock();
    if (!g)
        return;
    struct evs l = {0};
    trlat_gpu_stats_events(g, collect, &l);
    trlat_cupti_fold_unlock();
    if (l.n)
        qsort(l.v, l.n, sizeof *l.v, by_start);
    for (size_t i = 0; i < l.n; i++) {
        const struct trlat_gpu_event *e = &l.v[i];
        if (e->end < first_ns || !entry_of || e->kernel >= nentries || !entry_of[e->kernel])
            continue;
        trlat_json_obj(j, NULL);
        trlat_json_str(j, "kind", e->kind == TRLAT_GPU_EV_KERNEL ? "gpu" : "starved");
        if (e->kind != TRLAT_GPU_EV_KERNEL)
            trlat_json_str(j, "scope", e->kind == TRLAT_GPU_EV_STARVED_DEVICE ? "device" : "stream");
        trlat_json_str(j, "kernel", entry_of[e->kernel]->name);
        trlat_json_u64(j, "device", e->device);
        trlat_json_u64(j, "stream", e->stream);
        trlat_json_u64(j, "start_ns", e->start);
        trlat_json_u64(j, "end_ns", e->end);
        if (e->kind == TRLAT_GPU_EV_KERNEL) {
            if (e->driver)
                trlat_json_u64(j, "corr", e->ext);
            else
                trlat_json_null(j, "corr");
            trlat_json_u64(j, "cupti_corr", e->corr);
            trlat_json_str(j, "source", e->driver ? "driver" : "runtime");
        }
        trlat_json_end_obj(j);
    }
    free(l.v);
}
