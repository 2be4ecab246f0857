/* A trlat-report/1 document (docs/REPORT.md) read into C structs.
 *
 * The loader checks every field it knows: integers must be whole numbers in
 * [0, 2^63-1], strings strings, arrays arrays; it ignores fields it does not
 * know. Stored percentiles are checked, not kept: figures are recomputed from
 * the histograms (interpose/hist.h), exactly as the library computes them. */
#ifndef TRLAT_CLI_LOAD_H
#define TRLAT_CLI_LOAD_H

#include "interpose/format.h"
#include "interpose/hist.h"
#include "report/cli/scan.h"
#include "report/cli/text.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLI_SCHEMA TRLAT_REPORT_SCHEMA

/* An integer that may be null (or absent). */
struct cli_u64 {
    bool set;
    uint64_t v;
};

/* A STATS object; set is false for null. */
struct cli_stat {
    bool set;
    struct trlat_stat s;
};

struct cli_site {
    const char *site, *kind; /* kind may be NULL */
    const char *user;        /* a Python site's user site ("user_site"); NULL: none or not given */
    uint64_t launches;
    /* host time before its launches on their thread, and the Triton calls'
     * own part of it (reports before these have them unset) */
    struct cli_u64 gap_ns, triton_ns;
    struct cli_u64 library_ns; /* of triton_ns, a library's own run (absent: none) */
};

struct cli_count {
    const char *name;
    uint64_t n;
};

struct cli_fastpath {
    bool set, has_library; /* has_library: the report has library_hits */
    uint64_t hits, misses, library_hits;
    struct cli_count *fallbacks;
    size_t n_fallbacks;
};

/* A kernel's py->driver split by Triton's phases (TRLAT_PY_PHASES; docs/
 * REPORT.md "py_phases_ns"): calls split at the launcher, of them split_calls
 * at every mark, and each part's sum in ns. */
#define CLI_PHASES 5
extern const char *const cli_phase_keys[CLI_PHASES];
struct cli_phases {
    bool set;
    uint64_t calls, split_calls, ns[CLI_PHASES];
};

/* A library's own part of its calls' py->driver (docs/REPORT.md
 * "py_library_ns"). */
struct cli_library {
    bool set;
    uint64_t calls, ns;
};

struct cli_kernel {
    const char *name, *module; /* module may be NULL */
    uint64_t launches, src_driver, src_runtime;
    uint64_t errors; /* launches the driver refused; 0 when absent */
    struct cli_stat driver, gap, py, ret, gpu;
    struct cli_u64 starved, starved_launches;
    struct cli_fastpath fastpath;
    struct cli_phases phases;
    struct cli_library library;
    struct cli_site *sites;
    size_t n_sites;
};

enum cli_ev_kind { CLI_EV_LAUNCH, CLI_EV_GPU, CLI_EV_STARVED };

struct cli_event {
    enum cli_ev_kind kind;
    const char *kernel;
    uint64_t start, end;
    struct cli_u64 pid;            /* events of merged reports name their process */
    struct cli_u64 tid, py, corr;  /* launch (corr also gpu) */
    struct cli_u64 device, stream; /* gpu, starved */
    const char *stream_handle;     /* launch: the CUstream, e.g. "0x0"; may be NULL */
    const char *source;            /* gpu: "driver" or "runtime"; may be NULL */
    struct cli_u64 cupti_corr;     /* gpu: CUPTI's correlation id */
    const char *scope;             /* starved: "device" or "stream"; NULL in older reports */
    bool has_dims;
    uint64_t grid[3], block[3];
};

struct cli_clock {
    const char *source; /* NULL when the report has no clock */
    struct cli_u64 epoch_mono, epoch_real;
};

/* The Python hook's counts ("python" object), in the order the report
 * writes them: cli_python_counts[i] names n[i]; those from
 * CLI_PY_NO_LAUNCH_WARMUP on are members of "calls_without_launch". */
enum {
    CLI_PY_CALLS,
    CLI_PY_NESTED_CALLS,
    CLI_PY_ONE_LAUNCH,
    CLI_PY_MULTI_LAUNCH,
    CLI_PY_NO_LAUNCH_WARMUP,
    CLI_PY_NO_LAUNCH_ERROR,
    CLI_PY_NO_LAUNCH_OTHER,
    CLI_PY_COUNTS
};
extern const char *const cli_python_counts[CLI_PY_COUNTS];

struct cli_python {
    bool set;                                   /* false: null or absent */
    const char *hook, *triton_version, *reason; /* triton_version, reason may be NULL */
    uint64_t n[CLI_PY_COUNTS];
};

/* The GPU statistics's counters ("gpu" object), in the order the report writes
 * them: cli_gpu_counters[i] names n[i]. */
enum {
    CLI_GPU_KERNEL_RECORDS,
    CLI_GPU_DEVICES,
    CLI_GPU_BUSY_NS,
    CLI_GPU_STARVED_NS,
    CLI_GPU_STARVED_LAUNCHES,
    CLI_GPU_STREAM_STARVED_NS,
    CLI_GPU_DROPPED_RECORDS,
    CLI_GPU_UNTIMED_RECORDS,
    CLI_GPU_LATE_RECORDS,
    CLI_GPU_UNJOINED_RECORDS,
    CLI_GPU_JOINED_BY_TRLAT_ID,
    CLI_GPU_OTHER_KERNEL_RECORDS,
    CLI_GPU_COUNTERS
};
extern const char *const cli_gpu_counters[CLI_GPU_COUNTERS];

struct cli_gpu {
    bool set; /* false: null or absent (no CUPTI) */
    uint64_t n[CLI_GPU_COUNTERS];
};

/* One process a merged report was made from. */
struct cli_origin {
    uint64_t pid;
    struct cli_u64 rank;
    const char *host, *argv0;
    struct cli_clock clock;
};

/* A region's launches and host times, summed (docs/REPORT.md "regions"). */
struct cli_region {
    const char *name;
    uint64_t launches, driver_ns, py_ns, ret_ns, gap_ns;
};

struct cli_report {
    const char *path;
    void *json;               /* the parsed document but its events (json_t); owns every string below */
    struct cli_text text;     /* the report's bytes, where its events are read from */
    struct cli_layout layout; /* where the events array lies in them */
    const void *events_json;  /* the events array when it is in json instead */
    const char *trlat_version, *host, *argv0;
    uint64_t pid;
    struct cli_u64 rank, local_rank, world_size, wall_ns;
    struct cli_clock clock;
    struct {
        const char *cupti, *cupti_reason, *fastpath, *fastpath_state, *fastpath_reason;
        const char *timing; /* "all", "sampled", "none"; NULL: not in the report (made before TRLAT_TIMING: all) */
        int stacks;         /* -1: not in the report */
        struct cli_u64 trace;
    } config;
    struct {
        uint64_t launches, kernels, driver_ns;
        struct cli_u64 threads, py_to_driver_ns, gpu_ns, gpu_busy_ns, starved_ns;
        struct cli_u64 dropped_records, unnamed_launches, trace_lost;
    } totals;
    struct cli_python python;
    struct cli_gpu gpu;
    struct cli_kernel *kernels;
    size_t n_kernels;
    struct cli_region *regions; /* NULL: the report has no "regions" (no region opened) */
    size_t n_regions;
    size_t n_events;                /* of kinds this version knows; 0 when loaded with CLI_LOAD_EVENTS_LATER */
    struct cli_origin *merged_from; /* NULL unless written by `trlat merge` */
    size_t n_merged;
};

/* Loading leaves the events where they are and reads them once, to check
 * and count them; with CLI_LOAD_EVENTS_LATER not at all (the caller reads
 * them all with cli_events before using the report, and so checks them). */
enum { CLI_LOAD_EVENTS_LATER = 1 };

/* Parses and checks the text *t, which the report takes over. 0 on success;
 * -1 with a one-line message in err (no file name; e.g.
 * "kernels[2].launches: expected ...") and *r zeroed. */
int cli_load_text(struct cli_report *r, const char *path, struct cli_text *t, int flags, char *err, size_t errlen);
/* The same for len bytes at buf (kept: buf must outlive r). */
int cli_load_buffer(struct cli_report *r, const char *path, const char *buf, size_t len, char *err, size_t errlen);
/* The same for the file path ("-": standard input). */
int cli_load_path(struct cli_report *r, const char *path, int flags, char *err, size_t errlen);

/* cli_load_path, but on any problem prints "trlat: PATH: problem" and
 * exits 2. */
void cli_load(struct cli_report *r, const char *path);

/* A report's events, read one at a time from its text. */
struct cli_events {
    const struct cli_report *r;
    struct cli_rd rd;
    size_t index; /* of the next element */
    int state;
    void *doc; /* the current event's json_t: owns its strings */
};

void cli_events_open(struct cli_events *it, const struct cli_report *r);
/* The next event of a kind this version knows into *e (its strings valid
 * until the next call): 1; 0 after the last; -1 with a one-line message in
 * err, e.g. "events[7].start_ns: expected ...". */
int cli_events_next(struct cli_events *it, struct cli_event *e, char *err, size_t errlen);
void cli_events_close(struct cli_events *it);

void cli_report_free(struct cli_report *r);

/* The processes a report covers: merged_from, or the report's own process. */
size_t cli_origins(const struct cli_report *r, struct cli_origin **out);

#endif
