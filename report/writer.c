#include "report/writer.h"
#include "interpose/clock.h"
#include "interpose/config.h"
#include "interpose/format.h"
#include "interpose/log.h"
#include "interpose/names.h"
#include "interpose/trace.h"
#include "interpose/lifecycle.h"
#include "report/demangle.h"
#include "report/json.h"
#include "report/output.h"
#include "report/sections.h"
#include "report/sites.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *trlat_report_cupti_state;
const char *trlat_report_cupti_reason;

static void stat_json(struct trlat_json *j, const char *key, const struct trlat_stat *s)
{
    trlat_json_obj(j, key);
    trlat_json_u64(j, "count", s->count);
    trlat_json_u64(j, "sum", s->sum);
    trlat_json_u64(j, "min", s->min);
    trlat_json_u64(j, "max", s->max);
    trlat_json_u64(j, "p50", trlat_stat_quantile(s, 0.50));
    trlat_json_u64(j, "p90", trlat_stat_quantile(s, 0.90));
    trlat_json_u64(j, "p99", trlat_stat_quantile(s, 0.99));
    trlat_json_arr(j, "hist");
    for (unsigned i = 0; i < TRLAT_HIST_BUCKETS; i++) {
        if (!s->hist[i])
            continue;
        trlat_json_arr(j, NULL);
        trlat_json_u64(j, NULL, i);
        trlat_json_u64(j, NULL, s->hist[i]);
        trlat_json_end_arr(j);
    }
    trlat_json_end_arr(j);
    trlat_json_end_obj(j);
}

static void rank_json(struct trlat_json *j, const char *key, enum trlat_rank which)
{
    long n = trlat_config_rank(which);
    if (n >= 0)
        trlat_json_i64(j, key, n);
    else
        trlat_json_null(j, key);
}

static int by_launches(const void *a, const void *b)
{
    const struct trlat_fsite *x = a, *y = b;
    return x->launches < y->launches ? 1 : x->launches > y->launches ? -1 : 0;
}

static void sites_json(struct trlat_json *j, struct trlat_kstats *k)
{
    qsort(k->sites, (size_t)k->nsites, sizeof k->sites[0], by_launches);
    trlat_json_arr(j, "call_sites");
    struct trlat_fsite other = k->other;
    for (int i = 0; i < k->nsites; i++) {
        const struct trlat_fsite *s = &k->sites[i];
        if (i >= TRLAT_REPORT_SITES) {
            other.launches += s->launches;
            other.gap_ns += s->gap_ns;
            other.triton_ns += s->triton_ns;
            other.lib_ns += s->lib_ns;
            continue;
        }
        char buf[512];
        trlat_json_obj(j, NULL);
        trlat_json_str(j, "site", trlat_site_text(s->id, s->kind, buf, sizeof buf));
        trlat_json_str(j, "kind", s->kind == TRLAT_SITE_PYTHON ? "python" : "native");
        if (s->kind == TRLAT_SITE_PYTHON)
            trlat_json_str(j, "user_site", trlat_site_user_text(s->id, buf, sizeof buf));
        trlat_json_u64(j, "launches", s->launches);
        if (s->kind == TRLAT_SITE_PYTHON) {
            trlat_json_u64(j, "gap_ns", s->gap_ns);
            trlat_json_u64(j, "triton_ns", s->triton_ns);
            if (s->lib_ns)
                trlat_json_u64(j, "library_ns", s->lib_ns);
        }
        trlat_json_end_obj(j);
    }
    if (other.launches) {
        trlat_json_obj(j, NULL);
        trlat_json_str(j, "site", "(other)");
        trlat_json_str(j, "kind", "other");
        trlat_json_u64(j, "launches", other.launches);
        trlat_json_u64(j, "gap_ns", other.gap_ns);
        trlat_json_u64(j, "triton_ns", other.triton_ns);
        if (other.lib_ns)
            trlat_json_u64(j, "library_ns", other.lib_ns);
        trlat_json_end_obj(j);
    }
    trlat_json_end_arr(j);
}

static void kernel_json(struct trlat_json *j, struct trlat_kstats *k, int has_gpu)
{
    trlat_json_obj(j, NULL);
    trlat_json_str(j, "name", k->name);
    trlat_json_null(j, "module");
    trlat_json_u64(j, "launches", k->from_driver + k->from_runtime);
    trlat_json_obj(j, "sources");
    trlat_json_u64(j, "driver", k->from_driver);
    trlat_json_u64(j, "runtime", k->from_runtime);
    trlat_json_end_obj(j);
    trlat_json_u64(j, "errors", k->errors);
    stat_json(j, "driver_ns", &k->driver);
    stat_json(j, "gap_ns", &k->gap);
    if (k->py.count)
        stat_json(j, "py_to_driver_ns", &k->py);
    else
        trlat_json_null(j, "py_to_driver_ns");
    if (k->ret.count)
        stat_json(j, "py_return_ns", &k->ret);
    else
        trlat_json_null(j, "py_return_ns");
    if (k->ph_calls) { /* TRLAT_PY_PHASES */
        static const char *const part[TRLAT_PH_PARTS] = {"before_launcher", "launcher", "bind", "cache_grid",
                                                         "launch_metadata"};
        trlat_json_obj(j, "py_phases_ns");
        trlat_json_u64(j, "calls", k->ph_calls);
        trlat_json_u64(j, "split_calls", k->ph_split);
        for (int i = 0; i < TRLAT_PH_PARTS; i++)
            trlat_json_u64(j, part[i], k->ph_ns[i]);
        trlat_json_end_obj(j);
    }
    if (k->lib_calls) { /* a library's KernelInterface.run before Triton's */
        trlat_json_obj(j, "py_library_ns");
        trlat_json_u64(j, "calls", k->lib_calls);
        trlat_json_u64(j, "sum", k->lib_ns);
        trlat_json_end_obj(j);
    }
    if (has_gpu) {
        stat_json(j, "gpu_ns", &k->gpu);
        trlat_json_u64(j, "starved_ns", k->starved_ns);
        trlat_json_u64(j, "starved_launches", k->starved_launches);
    } else {
        trlat_json_null(j, "gpu_ns");
        trlat_json_null(j, "starved_ns");
        trlat_json_null(j, "starved_launches");
    }
    if (k->has_fastpath) {
        trlat_json_obj(j, "fastpath");
        trlat_json_u64(j, "hits", k->fastpath.hits);
        trlat_json_u64(j, "misses", k->fastpath.misses);
        trlat_json_u64(j, "library_hits", k->fastpath.library_hits);
        trlat_json_obj(j, "fallbacks");
        for (int i = 0; i < k->fastpath.nreasons; i++)
            trlat_json_u64(j, k->fastpath.reasons[i], k->fastpath.counts[i]);
        trlat_json_end_obj(j);
        trlat_json_end_obj(j);
    } else {
        trlat_json_null(j, "fastpath");
    }
    sites_json(j, k);
    trlat_json_end_obj(j);
}

/* Launch events, the newest TRLAT_TRACE of the process, by time. Sorted as
 * 16-byte keys (an event's time and sequence word), each event read again
 * from the ring when written: the report adds 16 bytes per event, not a
 * copy of the ring. */
struct ev {
    uint64_t t0, seq;
};
struct ev_list {
    struct ev *v;
    size_t n, cap;
};

static void collect_events(const struct trlat_event *e, void *arg)
{
    struct ev_list *l = arg;
    if (l->n < l->cap) /* the ring holds no more than counted, unless it lapped meanwhile */
        l->v[l->n++] = (struct ev){e->t0, atomic_load_explicit(&e->seq, memory_order_relaxed)};
}

static int by_time(const void *a, const void *b)
{
    const struct ev *x = a, *y = b;
    if (x->t0 != y->t0)
        return x->t0 < y->t0 ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void events_json(struct trlat_json *j, struct trlat_fold *f)
{
    trlat_json_arr(j, "events");
    struct ev_list l = {0};
    l.cap = (size_t)trlat_trace_count();
    l.v = l.cap ? malloc(l.cap * sizeof *l.v) : NULL;
    if (l.cap && !l.v)
        trlat_log("out of memory for the report's %zu trace events; none written", l.cap);
    if (l.v)
        trlat_trace_foreach(collect_events, &l);
    if (l.n)
        qsort(l.v, l.n, sizeof *l.v, by_time);
    size_t keep = (size_t)trlat_config(TRLAT_OPT_TRACE);
    size_t from = l.n > keep ? l.n - keep : 0;
    uint64_t first_ns = from < l.n ? trlat_ticks_to_time(l.v[from].t0) : 0;
    for (size_t i = from; i < l.n; i++) {
        struct trlat_event ev;
        if (!trlat_trace_get(l.v[i].seq, &ev))
            continue; /* overwritten by a newer launch since */
        const struct trlat_event *e = &ev;
        char buf[48];
        const char *name = trlat_names_get(e->func);
        char *readable = trlat_demangle(name);
        if (readable)
            name = readable;
        if (!name) {
            snprintf(buf, sizeof buf, "<unknown %p>", e->func);
            name = buf;
        }
        trlat_json_obj(j, NULL);
        trlat_json_str(j, "kind", "launch");
        trlat_json_u64(j, "tid", e->tid);
        trlat_json_str(j, "kernel", name);
        trlat_json_u64(j, "start_ns", trlat_ticks_to_time(e->t0));
        trlat_json_u64(j, "end_ns", trlat_ticks_to_time(e->t1));
        if (e->py_t0)
            trlat_json_u64(j, "py_ns", trlat_ticks_to_time(e->py_t0));
        else
            trlat_json_null(j, "py_ns");
        snprintf(buf, sizeof buf, "%p", e->stream);
        trlat_json_str(j, "stream", e->stream ? buf : "0x0");
        trlat_json_u64(j, "corr", e->corr);
        trlat_json_arr(j, "grid");
        for (int d = 0; d < 3; d++)
            trlat_json_u64(j, NULL, e->grid[d]);
        trlat_json_end_arr(j);
        trlat_json_arr(j, "block");
        for (int d = 0; d < 3; d++)
            trlat_json_u64(j, NULL, e->block[d]);
        trlat_json_end_arr(j);
        trlat_json_end_obj(j);
        free(readable);
    }
    free(l.v);
    trlat_gpu_section_events(j, f, first_ns);
    trlat_json_end_arr(j);
}

/* The launches and host times of each region with any, in id order (the
 * order of first use); absent when no thread opened a region. */
static void regions_json(struct trlat_json *j, const struct trlat_fold *f)
{
    if (!trlat_region_name(1)) /* no name interned: none opened */
        return;
    trlat_json_arr(j, "regions");
    for (unsigned i = 1; i < TRLAT_REGIONS_MAX; i++) {
        const struct trlat_rstat *s = &f->regions[i];
        const char *name = trlat_region_name(i);
        if (!s->launches || !name)
            continue;
        trlat_json_obj(j, NULL);
        trlat_json_str(j, "name", name);
        trlat_json_u64(j, "launches", s->launches);
        trlat_json_u64(j, "driver_ns", s->driver_ns);
        trlat_json_u64(j, "py_to_driver_ns", s->py_ns);
        trlat_json_u64(j, "py_return_ns", s->ret_ns);
        trlat_json_u64(j, "gap_ns", s->gap_ns);
        trlat_json_end_obj(j);
    }
    trlat_json_end_arr(j);
}

void trlat_report_json(FILE *out, struct trlat_fold *f, uint64_t wall_ns)
{
    struct trlat_json j;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char argv0[512] = "";
    FILE *cmd = fopen("/proc/self/cmdline", "r");
    if (cmd) {
        size_t n = fread(argv0, 1, sizeof argv0 - 1, cmd);
        argv0[n] = 0;
        fclose(cmd);
    }
    const char *a0 = strrchr(argv0, '/') ? strrchr(argv0, '/') + 1 : argv0;

    uint64_t launches = 0, driver = 0, py = 0, gpu = 0, starved = 0;
    int any_py = 0;
    for (size_t i = 0; i < f->n; i++) {
        launches += f->k[i]->from_driver + f->k[i]->from_runtime;
        driver += f->k[i]->driver.sum;
        py += f->k[i]->py.sum;
        any_py |= f->k[i]->py.count > 0;
        gpu += f->k[i]->gpu.sum;
        starved += f->k[i]->starved_ns;
    }

    trlat_json_begin(&j, out);
    trlat_json_obj(&j, NULL);
    trlat_json_str(&j, "schema", TRLAT_REPORT_SCHEMA);
    trlat_json_str(&j, "trlat_version", TRLAT_VERSION);
    trlat_json_str(&j, "hist_scheme", TRLAT_HIST_SCHEME);
    trlat_json_i64(&j, "pid", getpid());
    rank_json(&j, "rank", TRLAT_RANK);
    rank_json(&j, "local_rank", TRLAT_LOCAL_RANK);
    rank_json(&j, "world_size", TRLAT_WORLD_SIZE);
    trlat_json_str(&j, "host", host);
    trlat_json_str(&j, "argv0", a0);
    trlat_json_u64(&j, "wall_ns", wall_ns);

    trlat_json_obj(&j, "clock");
    trlat_json_str(&j, "source", trlat_clk.use_tsc ? "tsc" : "monotonic");
    trlat_json_u64(&j, "epoch_monotonic_ns", trlat_clk.epoch_mono_ns);
    trlat_json_u64(&j, "epoch_realtime_ns", trlat_clk.epoch_real_ns);
    trlat_json_end_obj(&j);

    trlat_json_obj(&j, "config");
    trlat_json_str(&j, "cupti",
                   trlat_report_cupti_state                           ? trlat_report_cupti_state
                   : trlat_config(TRLAT_OPT_CUPTI) == TRLAT_CUPTI_OFF ? "off"
                                                                      : "unavailable");
    trlat_json_str(&j, "cupti_reason", trlat_report_cupti_reason);
    trlat_json_str(&j, "fastpath", trlat_config_name(TRLAT_OPT_FASTPATH));
    trlat_fastpath_section_config(&j);
    trlat_json_bool(&j, "stacks", (int)trlat_config(TRLAT_OPT_STACKS));
    trlat_json_u64(&j, "trace", (uint64_t)trlat_config(TRLAT_OPT_TRACE));
    trlat_json_str(&j, "timing", trlat_config_name(TRLAT_OPT_TIMING));
    trlat_json_end_obj(&j);

    trlat_json_obj(&j, "totals");
    trlat_json_u64(&j, "launches", launches);
    trlat_json_u64(&j, "kernels", f->n);
    trlat_json_u64(&j, "threads", f->threads);
    trlat_json_u64(&j, "driver_ns", driver);
    if (any_py)
        trlat_json_u64(&j, "py_to_driver_ns", py);
    else
        trlat_json_null(&j, "py_to_driver_ns");
    if (f->has_gpu) {
        trlat_json_u64(&j, "gpu_ns", gpu);
        trlat_json_u64(&j, "gpu_busy_ns", f->gpu_busy_ns);
        trlat_json_u64(&j, "starved_ns", starved);
    } else {
        trlat_json_null(&j, "gpu_ns");
        trlat_json_null(&j, "gpu_busy_ns");
        trlat_json_null(&j, "starved_ns");
    }
    trlat_json_u64(&j, "dropped_records", f->dropped_records);
    trlat_json_u64(&j, "unnamed_launches", f->unnamed_launches);
    trlat_json_u64(&j, "trace_lost", trlat_trace_lost());
    trlat_json_end_obj(&j);
    trlat_python_section(&j);
    trlat_gpu_section(&j);
    regions_json(&j, f);

    trlat_json_arr(&j, "kernels");
    for (size_t i = 0; i < f->n; i++)
        kernel_json(&j, f->k[i], f->has_gpu);
    trlat_json_end_arr(&j);
    events_json(&j, f);
    trlat_json_end_obj(&j);
}

/* C++ kernels (PyTorch's) under readable names. Runs after the sections' folds
 * joined CUPTI's records to the host's by the names both saw (mangled). */
static void demangle_names(struct trlat_fold *f)
{
    for (size_t i = 0; i < f->n; i++) {
        char *d = trlat_demangle(f->k[i]->name);
        if (d) {
            free(f->k[i]->name);
            f->k[i]->name = d;
        }
    }
}

struct report_args {
    struct trlat_fold *f;
    uint64_t wall_ns;
};

static void fill_report(FILE *out, void *arg)
{
    struct report_args *a = arg;
    trlat_report_json(out, a->f, a->wall_ns);
}

/* Kept for the process's life: a later write replaces this report. */
static struct trlat_output report_file;

/* The report of what was recorded so far: the exit's (final: with the
 * summary) or a checkpoint's. 0, or -1 when none was written. */
static int write_report(int final)
{
    uint64_t wall_ns = trlat_now_ns() - trlat_start_ns;
    struct trlat_fold *f = trlat_fold_build();
    if (!f) {
        trlat_log("out of memory %s; no report written", final ? "at exit" : "for a checkpoint");
        return -1;
    }
    trlat_gpu_section_fold(f, final);
    trlat_fastpath_section_fold(f);
    demangle_names(f);
    trlat_fold_sort(f);
    uint64_t launches = 0;
    for (size_t i = 0; i < f->n; i++)
        launches += f->k[i]->from_driver + f->k[i]->from_runtime;
    if (launches == 0) { /* a CUDA program that launched nothing, or a child that never launched */
        trlat_fold_free(f);
        return -1;
    }
    /* a failed write (full disk...) says why and is written again in $TMPDIR */
    struct report_args a = {f, wall_ns};
    report_file.list = trlat_config_str(TRLAT_OPT_REPORT_LIST);
    int written = trlat_output_write(&report_file, trlat_config_output(), fill_report, &a) == 0;
    /* one summary per node: local rank 0's (or the process's, without
     * one), every rank's with TRLAT_SUMMARY=all */
    long local = trlat_config_rank(TRLAT_LOCAL_RANK);
    long summary = trlat_config(TRLAT_OPT_SUMMARY);
    if (final && (summary == TRLAT_SUMMARY_ALL || (summary == TRLAT_SUMMARY_ON && local <= 0)))
        trlat_report_summary(stderr, f, written ? report_file.path : NULL, wall_ns);
    trlat_fold_free(f);
    return written ? 0 : -1;
}

static void finish(void)
{
    write_report(1);
}

static int checkpoint(void)
{
    return write_report(0);
}

static const char *report_path(void)
{
    return report_file.path[0] ? report_file.path : NULL;
}

static const struct trlat_module report_module = {
    .name = "report", .finish = finish, .checkpoint = checkpoint, .report_path = report_path};

__attribute__((constructor)) static void register_report(void)
{
    trlat_module_register(&report_module);
}
