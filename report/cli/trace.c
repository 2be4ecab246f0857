/* trlat trace FILE -o OUT.json: a report's per-launch events as Chrome trace
 * event JSON (chrome://tracing, Perfetto). Host launches are spans on their
 * process and thread; GPU kernels and starved intervals go to one process
 * per (process, GPU) with a thread per stream (device-wide starved
 * intervals: one thread per GPU); flow arrows join a launch to its kernel by
 * correlation id. The events are read twice, one at a time: once for the
 * tracks and the launches the arrows need, once to write them. */
#include "report/cli/cli.h"
#include "report/cli/fmt.h"
#include "report/cli/util.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

/* GPU "processes" get ids above any Linux pid (pid_max <= 2^22). */
#define GPU_PID_BASE 0x40000000u

static const char usage_text[] = "usage: trlat trace FILE [-o OUT.json] [--format chrome|kineto]\n"
                                 "\n"
                                 "Writes the per-launch events a run kept (TRLAT_TRACE=N) as Chrome trace event\n"
                                 "JSON for Perfetto (ui.perfetto.dev) or chrome://tracing: host launch spans per\n"
                                 "thread, GPU kernel spans per stream, starved intervals on their own tracks (the\n"
                                 "GPU's device-wide ones on one track per GPU, a stream's on one per stream),\n"
                                 "and arrows from each launch to its GPU kernel. Merged reports put each\n"
                                 "process on the same time axis (by its clock epoch).\n"
                                 "\n"
                                 "  -o, --output OUT  where to write the trace (default: standard output)\n"
                                 "  --format kineto   in the PyTorch profiler's (Kineto's) conventions instead,\n"
                                 "                    which HolisticTraceAnalysis and TensorBoard read: launches\n"
                                 "                    as cuda_runtime cudaLaunchKernel events, kernels as kernel\n"
                                 "                    events on pid = device and tid = stream, ac2g flows, the\n"
                                 "                    correlation in args, distributedInfo.rank; one process's\n"
                                 "                    report (not a merge: one trace file per rank)\n";

struct proc {
    uint64_t pid, offset;
    const struct cli_origin *origin;
};

/* A GPU track: one per (process, device, stream, starved?), and one per
 * (process, device) for the device-wide starved intervals (scope "device";
 * stream 0 in the key). */
struct track {
    uint64_t pid, device;
    bool device_wide;
    uint64_t stream;
    bool starved;
    uint64_t gpid, tid;
};

/* A launch an arrow starts from. */
struct launch_ref {
    uint64_t pid, corr, tid, start, end;
};

struct cli_trace {
    const struct cli_report *r;
    FILE *f;
    bool first, kineto;
    struct cli_origin *origins;
    struct proc *procs;
    size_t n_procs;
    struct track *tracks;
    size_t n_tracks, cap_tracks;
    struct launch_ref *launches;
    size_t n_launches, cap_launches;
    size_t n_events;
    uint64_t flow_id;
};

static uint64_t event_pid(const struct cli_report *r, const struct cli_event *e)
{
    return e->pid.set ? e->pid.v : r->pid;
}

/* ---- process clocks ---- */

static bool same_host(const struct cli_origin *o, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (!o[i].host || !o[0].host || strcmp(o[i].host, o[0].host) != 0)
            return false;
    return true;
}

/* Offsets that put all processes on one axis: CLOCK_MONOTONIC epochs on one
 * host, CLOCK_REALTIME across hosts, none when a clock is missing. */
static void set_offsets(struct cli_trace *t, const struct cli_origin *origins)
{
    bool mono = same_host(origins, t->n_procs);
    uint64_t min = UINT64_MAX;
    for (size_t i = 0; i < t->n_procs; i++) {
        const struct cli_clock *c = &t->procs[i].origin->clock;
        const struct cli_u64 *epoch = mono ? &c->epoch_mono : &c->epoch_real;
        if (!c->source || !epoch->set)
            return;
        t->procs[i].offset = epoch->v;
        min = epoch->v < min ? epoch->v : min;
    }
    for (size_t i = 0; i < t->n_procs; i++)
        t->procs[i].offset -= min;
}

static const struct proc *find_proc(const struct cli_trace *t, uint64_t pid)
{
    for (size_t i = 0; i < t->n_procs; i++)
        if (t->procs[i].pid == pid)
            return &t->procs[i];
    return NULL;
}

static uint64_t offset_of(const struct cli_trace *t, uint64_t pid)
{
    const struct proc *p = find_proc(t, pid);
    return p ? p->offset : 0;
}

/* ---- GPU tracks ---- */

static int cmp_track(const void *a, const void *b)
{
    const struct track *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->device_wide != y->device_wide)
        return x->device_wide ? -1 : 1;
    if (x->stream != y->stream)
        return x->stream < y->stream ? -1 : 1;
    return (int)x->starved - (int)y->starved;
}

/* Starved intervals without a scope (older reports) go on their stream's
 * track, as stream-scoped ones do. */
static struct track key_of(const struct cli_report *r, const struct cli_event *e)
{
    bool starved = e->kind == CLI_EV_STARVED;
    bool device_wide = starved && e->scope && strcmp(e->scope, "device") == 0;
    return (struct track){event_pid(r, e), e->device.v, device_wide, device_wide ? 0 : e->stream.v, starved, 0, 0};
}

/* The tracks kept sorted and unique. */
static void add_track(struct cli_trace *t, const struct track *k)
{
    size_t lo = 0, hi = t->n_tracks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_track(&t->tracks[mid], k);
        if (c == 0)
            return;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (t->n_tracks == t->cap_tracks) {
        t->cap_tracks = t->cap_tracks ? 2 * t->cap_tracks : 16;
        t->tracks = cli_xrealloc(t->tracks, t->cap_tracks, sizeof *t->tracks);
    }
    memmove(t->tracks + lo + 1, t->tracks + lo, (t->n_tracks - lo) * sizeof *t->tracks);
    t->tracks[lo] = *k;
    t->n_tracks++;
}

/* Each (pid, device) a GPU process, its tracks' tids from 1. */
static void number_tracks(struct cli_trace *t)
{
    uint64_t gpid = GPU_PID_BASE, tid = 0;
    for (size_t i = 0; i < t->n_tracks; i++) {
        if (i && (t->tracks[i - 1].pid != t->tracks[i].pid || t->tracks[i - 1].device != t->tracks[i].device)) {
            gpid++;
            tid = 0;
        }
        t->tracks[i].gpid = gpid;
        t->tracks[i].tid = ++tid;
    }
}

static const struct track *find_track(const struct cli_trace *t, const struct cli_report *r, const struct cli_event *e)
{
    struct track key = key_of(r, e);
    return t->n_tracks ? bsearch(&key, t->tracks, t->n_tracks, sizeof key, cmp_track) : NULL;
}

/* ---- launches by correlation id ---- */

static int cmp_launch(const void *a, const void *b)
{
    const struct launch_ref *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->corr > y->corr) - (x->corr < y->corr);
}

static void add_launch(struct cli_trace *t, const struct cli_event *e)
{
    if (t->n_launches == t->cap_launches) {
        t->cap_launches = t->cap_launches ? 2 * t->cap_launches : 64;
        t->launches = cli_xrealloc(t->launches, t->cap_launches, sizeof *t->launches);
    }
    t->launches[t->n_launches++] = (struct launch_ref){event_pid(t->r, e), e->corr.v, e->tid.v, e->start, e->end};
}

/* ---- writing ---- */

static void begin(struct cli_trace *t, const char *ph, const char *cat, uint64_t pid, uint64_t tid)
{
    fputs(t->first ? "\n" : ",\n", t->f);
    t->first = false;
    fprintf(t->f, "{\"ph\":\"%s\",", ph);
    if (cat)
        fprintf(t->f, "\"cat\":\"%s\",", cat);
    fprintf(t->f, "\"pid\":%llu,\"tid\":%llu", (unsigned long long)pid, (unsigned long long)tid);
}

static void meta(struct cli_trace *t, uint64_t pid, uint64_t tid, const char *what, const char *name, uint64_t sort)
{
    begin(t, "M", NULL, pid, tid);
    fprintf(t->f, ",\"name\":\"%s\",\"args\":{\"name\":", what);
    cli_json_str(t->f, name);
    fputs("}}", t->f);
    begin(t, "M", NULL, pid, tid);
    fprintf(t->f, ",\"name\":\"%s_sort_index\",\"args\":{\"sort_index\":%llu}}",
            strcmp(what, "process_name") == 0 ? "process" : "thread", (unsigned long long)sort);
}

/* "X" fields after pid/tid: name, ts and dur in microseconds; args follow. */
static void span(struct cli_trace *t, const char *name, const char *suffix, uint64_t offset, uint64_t start,
                 uint64_t end)
{
    fputs(",\"name\":", t->f);
    if (suffix) {
        size_t len = strlen(name) + strlen(suffix) + 1;
        char *s = cli_xmalloc(len);
        snprintf(s, len, "%s%s", name, suffix);
        cli_json_str(t->f, s);
        free(s);
    } else {
        cli_json_str(t->f, name);
    }
    fputs(",\"ts\":", t->f);
    cli_json_us(t->f, cli_add_sat(start, offset));
    fputs(",\"dur\":", t->f);
    cli_json_us(t->f, end > start ? end - start : 0);
}

static void process_names(struct cli_trace *t)
{
    char name[256];
    for (size_t i = 0; i < t->n_procs; i++) {
        const struct cli_origin *o = t->procs[i].origin;
        int n = snprintf(name, sizeof name, "%.200s", o->argv0 ? o->argv0 : "process");
        if (o->rank.set && n > 0)
            snprintf(name + n, sizeof name - (size_t)n, " rank %llu", (unsigned long long)o->rank.v);
        meta(t, o->pid, 0, "process_name", name, i);
    }
    for (size_t i = 0; i < t->n_tracks; i++) {
        const struct track *k = &t->tracks[i];
        const struct proc *p = find_proc(t, k->pid);
        if (k->tid == 1) {
            if (t->n_procs == 1)
                snprintf(name, sizeof name, "GPU %llu", (unsigned long long)k->device);
            else if (p && p->origin->rank.set)
                snprintf(name, sizeof name, "GPU %llu (rank %llu)", (unsigned long long)k->device,
                         (unsigned long long)p->origin->rank.v);
            else
                snprintf(name, sizeof name, "GPU %llu (pid %llu)", (unsigned long long)k->device,
                         (unsigned long long)k->pid);
            meta(t, k->gpid, 0, "process_name", name, t->n_procs + (k->gpid - GPU_PID_BASE));
        }
        if (k->device_wide)
            snprintf(name, sizeof name, "GPU %llu starved (device-wide)", (unsigned long long)k->device);
        else
            snprintf(name, sizeof name, "GPU %llu stream %llu%s", (unsigned long long)k->device,
                     (unsigned long long)k->stream, k->starved ? " starved" : "");
        meta(t, k->gpid, k->tid, "thread_name", name, k->tid);
    }
}

static void write_launch(struct cli_trace *t, const struct cli_report *r, const struct cli_event *e)
{
    uint64_t pid = event_pid(r, e), tid = e->tid.v, off = offset_of(t, pid);
    if (e->py.set && e->py.v <= e->start) {
        begin(t, "X", "python", pid, tid);
        span(t, e->kernel, " (python)", off, e->py.v, e->end);
        fprintf(t->f, ",\"args\":{\"py_to_driver_ns\":%llu}}", (unsigned long long)(e->start - e->py.v));
    }
    begin(t, "X", "launch", pid, tid);
    span(t, e->kernel, NULL, off, e->start, e->end);
    fputs(",\"args\":{", t->f);
    if (e->corr.set)
        fprintf(t->f, "\"corr\":%llu,", (unsigned long long)e->corr.v);
    if (e->stream_handle) {
        fputs("\"stream\":", t->f);
        cli_json_str(t->f, e->stream_handle);
        fputc(',', t->f);
    }
    if (e->has_dims)
        fprintf(t->f, "\"grid\":[%llu,%llu,%llu],\"block\":[%llu,%llu,%llu],", (unsigned long long)e->grid[0],
                (unsigned long long)e->grid[1], (unsigned long long)e->grid[2], (unsigned long long)e->block[0],
                (unsigned long long)e->block[1], (unsigned long long)e->block[2]);
    fprintf(t->f, "\"host_ns\":%llu}}", (unsigned long long)(e->end > e->start ? e->end - e->start : 0));
}

/* The arrow from a launch to its kernel: "s" inside the launch span, "f"
 * bound to the enclosing GPU span. */
static void write_flow(struct cli_trace *t, const struct cli_report *r, const struct cli_event *gpu,
                       const struct track *k)
{
    if (!t->n_launches)
        return; /* bsearch may not be given NULL, even for none */
    struct launch_ref key = {event_pid(r, gpu), gpu->corr.v, 0, 0, 0};
    const struct launch_ref *l = bsearch(&key, t->launches, t->n_launches, sizeof key, cmp_launch);
    if (!l)
        return;
    uint64_t id = ++t->flow_id, off = offset_of(t, key.pid);
    uint64_t mid = l->start + (l->end > l->start ? (l->end - l->start) / 2 : 0);
    uint64_t gmid = gpu->start + (gpu->end > gpu->start ? (gpu->end - gpu->start) / 2 : 0);
    begin(t, "s", "flow", key.pid, l->tid);
    fprintf(t->f, ",\"name\":\"launch\",\"id\":%llu,\"ts\":", (unsigned long long)id);
    cli_json_us(t->f, cli_add_sat(mid, off));
    fputc('}', t->f);
    begin(t, "f", "flow", k->gpid, k->tid);
    fprintf(t->f, ",\"name\":\"launch\",\"id\":%llu,\"bp\":\"e\",\"ts\":", (unsigned long long)id);
    cli_json_us(t->f, cli_add_sat(gmid, off));
    fputc('}', t->f);
}

static void write_gpu(struct cli_trace *t, const struct cli_report *r, const struct cli_event *e)
{
    const struct track *k = find_track(t, r, e);
    uint64_t off = offset_of(t, k->pid);
    bool starved = e->kind == CLI_EV_STARVED;
    begin(t, "X", starved ? "starved" : "gpu", k->gpid, k->tid);
    span(t, starved ? "starved before " : e->kernel, starved ? e->kernel : NULL, off, e->start, e->end);
    fprintf(t->f, ",\"args\":{\"device\":%llu,\"stream\":%llu", (unsigned long long)e->device.v,
            (unsigned long long)e->stream.v);
    if (starved) {
        fputs(",\"kernel\":", t->f);
        cli_json_str(t->f, e->kernel);
    }
    if (e->scope) {
        fputs(",\"scope\":", t->f);
        cli_json_str(t->f, e->scope);
    }
    if (e->corr.set)
        fprintf(t->f, ",\"corr\":%llu", (unsigned long long)e->corr.v);
    if (e->cupti_corr.set)
        fprintf(t->f, ",\"cupti_corr\":%llu", (unsigned long long)e->cupti_corr.v);
    if (e->source) {
        fputs(",\"source\":", t->f);
        cli_json_str(t->f, e->source);
    }
    fputs("}}", t->f);
    if (!starved && e->corr.set)
        write_flow(t, r, e, k);
}

/* ---- Kineto's conventions (--format kineto) ---- */

static void kineto_names(struct cli_trace *t)
{
    const struct cli_origin *o = t->procs[0].origin;
    meta(t, o->pid, 0, "process_name", o->argv0 ? o->argv0 : "process", 0);
    uint64_t last_dev = UINT64_MAX;
    for (size_t i = 0; i < t->n_tracks; i++) {
        const struct track *k = &t->tracks[i];
        char name[96];
        if (k->device != last_dev) {
            snprintf(name, sizeof name, "GPU %llu", (unsigned long long)k->device);
            meta(t, k->device, 0, "process_name", name, 1 + k->device);
            last_dev = k->device;
        }
        if (!k->device_wide && !k->starved) {
            snprintf(name, sizeof name, "stream %llu", (unsigned long long)k->stream);
            meta(t, k->device, k->stream, "thread_name", name, k->stream);
        }
    }
}

/* A launch: the runtime API event Kineto writes for one (HTA counts
 * cudaLaunchKernel events), whichever driver entry point made it; the
 * kernel in args. No "stream" arg: HTA takes an event with one for a GPU
 * event. */
static void kineto_launch(struct cli_trace *t, const struct cli_event *e)
{
    uint64_t pid = event_pid(t->r, e), tid = e->tid.v, off = offset_of(t, pid);
    if (e->py.set && e->py.v <= e->start) {
        begin(t, "X", "python_function", pid, tid);
        span(t, e->kernel, " (python)", off, e->py.v, e->end);
        fprintf(t->f, ",\"args\":{\"py_to_driver_ns\":%llu}}", (unsigned long long)(e->start - e->py.v));
    }
    begin(t, "X", "cuda_runtime", pid, tid);
    span(t, "cudaLaunchKernel", NULL, off, e->start, e->end);
    fputs(",\"args\":{", t->f);
    if (e->corr.set)
        fprintf(t->f, "\"correlation\":%llu,", (unsigned long long)e->corr.v);
    fputs("\"kernel\":", t->f);
    cli_json_str(t->f, e->kernel);
    if (e->stream_handle) {
        fputs(",\"cuda_stream\":", t->f);
        cli_json_str(t->f, e->stream_handle);
    }
    fputs("}}", t->f);
    if (e->corr.set) { /* the flow's start, inside the launch */
        begin(t, "s", "ac2g", pid, tid);
        fprintf(t->f, ",\"name\":\"ac2g\",\"id\":%llu,\"ts\":", (unsigned long long)e->corr.v);
        cli_json_us(t->f, cli_add_sat(e->start, off));
        fputc('}', t->f);
    }
}

static void kineto_gpu(struct cli_trace *t, const struct cli_event *e)
{
    uint64_t off = offset_of(t, event_pid(t->r, e));
    if (e->kind == CLI_EV_STARVED) { /* trlat's own: no stream or correlation arg (not a kernel to HTA) */
        begin(t, "X", "trlat_starved", e->device.v, e->scope && strcmp(e->scope, "device") == 0 ? 0 : e->stream.v);
        span(t, "starved before ", e->kernel, off, e->start, e->end);
        fprintf(t->f, ",\"args\":{\"device\":%llu,\"kernel\":", (unsigned long long)e->device.v);
        cli_json_str(t->f, e->kernel);
        fputs("}}", t->f);
        return;
    }
    begin(t, "X", "kernel", e->device.v, e->stream.v);
    span(t, e->kernel, NULL, off, e->start, e->end);
    fprintf(t->f, ",\"args\":{\"device\":%llu,\"stream\":%llu", (unsigned long long)e->device.v,
            (unsigned long long)e->stream.v);
    if (e->corr.set)
        fprintf(t->f, ",\"correlation\":%llu", (unsigned long long)e->corr.v);
    fputs("}}", t->f);
    if (e->corr.set) {
        struct launch_ref key = {event_pid(t->r, e), e->corr.v, 0, 0, 0};
        if (t->n_launches && bsearch(&key, t->launches, t->n_launches, sizeof key, cmp_launch)) {
            begin(t, "f", "ac2g", e->device.v, e->stream.v);
            fprintf(t->f, ",\"name\":\"ac2g\",\"id\":%llu,\"bp\":\"e\",\"ts\":", (unsigned long long)e->corr.v);
            cli_json_us(t->f, cli_add_sat(e->start, off));
            fputc('}', t->f);
        }
    }
}

struct cli_trace *cli_trace_index(const struct cli_report *r, char *err, size_t errlen)
{
    struct cli_trace *t = cli_xcalloc(1, sizeof *t);
    t->r = r;
    t->n_procs = cli_origins(r, &t->origins);
    t->procs = cli_xcalloc(t->n_procs, sizeof *t->procs);
    for (size_t i = 0; i < t->n_procs; i++)
        t->procs[i] = (struct proc){t->origins[i].pid, 0, &t->origins[i]};
    set_offsets(t, t->origins);
    struct cli_events it;
    struct cli_event e;
    int got;
    cli_events_open(&it, r);
    while ((got = cli_events_next(&it, &e, err, errlen)) > 0) {
        t->n_events++;
        if (e.kind != CLI_EV_LAUNCH) {
            struct track k = key_of(r, &e);
            add_track(t, &k);
        } else if (e.corr.set) {
            add_launch(t, &e);
        }
    }
    cli_events_close(&it);
    if (got < 0) {
        cli_trace_free(t);
        return NULL;
    }
    number_tracks(t);
    if (t->n_launches)
        qsort(t->launches, t->n_launches, sizeof *t->launches, cmp_launch);
    return t;
}

size_t cli_trace_events(const struct cli_trace *t)
{
    return t->n_events;
}

int cli_trace_write(struct cli_trace *t, FILE *f, char *err, size_t errlen)
{
    t->f = f;
    t->first = true;
    t->flow_id = 0;
    if (t->kineto) {
        const struct cli_origin *o = t->procs[0].origin;
        /* "rank": N with a space: HTA finds a file's rank with that pattern */
        fprintf(
            f,
            "{\"schemaVersion\":1,\"distributedInfo\": {\"rank\": %llu},\"displayTimeUnit\":\"ns\",\"traceEvents\":[",
            (unsigned long long)(o->rank.set ? o->rank.v : 0));
        kineto_names(t);
    } else {
        fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
        process_names(t);
    }
    struct cli_events it;
    struct cli_event e;
    int got;
    cli_events_open(&it, t->r);
    while ((got = cli_events_next(&it, &e, err, errlen)) > 0) {
        if (t->kineto)
            e.kind == CLI_EV_LAUNCH ? kineto_launch(t, &e) : kineto_gpu(t, &e);
        else if (e.kind == CLI_EV_LAUNCH)
            write_launch(t, t->r, &e);
        else
            write_gpu(t, t->r, &e);
    }
    cli_events_close(&it);
    fputs("\n]}\n", f);
    return got;
}

void cli_trace_free(struct cli_trace *t)
{
    if (!t)
        return;
    free(t->launches);
    free(t->tracks);
    free(t->procs);
    free(t->origins);
    free(t);
}

int cli_trace_main(int argc, char **argv)
{
    static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                             {"format", required_argument, NULL, 'f'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    static const char *const formats[] = {"chrome", "kineto", NULL};
    const char *outpath = NULL;
    bool kineto = false;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage_text, stdout);
            exit(0);
        } else if (c == 'o') {
            outpath = optarg;
        } else if (c == 'f') {
            kineto = cli_parse_word("trace", "--format", optarg, formats) == 1;
        } else {
            cli_bad_option("trace", c, argv);
        }
    }
    if (optind != argc - 1)
        cli_usage_fail("trace", optind >= argc ? "no report file given" : "expects one report file");
    struct cli_report r;
    char err[512];
    if (cli_load_path(&r, argv[optind], CLI_LOAD_EVENTS_LATER, err, sizeof err) != 0)
        cli_fail(argv[optind], "%s", err);
    struct cli_trace *t = cli_trace_index(&r, err, sizeof err);
    if (!t)
        cli_fail(r.path, "%s", err);
    if (cli_trace_events(t) == 0)
        cli_fail(r.path, "has no per-launch events; rerun with TRLAT_TRACE=N (e.g. TRLAT_TRACE=10000, or "
                         "trlat run --trace=10000) to keep the last N launches");
    if (kineto && t->n_procs != 1)
        cli_fail(r.path,
                 "merges %zu processes; a Kineto trace is one process's (one file per rank): run trlat "
                 "trace --format kineto on each rank's report",
                 t->n_procs);
    t->kineto = kineto;
    FILE *f = cli_open_out(outpath);
    if (cli_trace_write(t, f, err, sizeof err) != 0)
        cli_fail(r.path, "%s (reading its events again to write the trace)", err);
    cli_close_out(f, outpath);
    cli_trace_free(t);
    cli_report_free(&r);
    return 0;
}
