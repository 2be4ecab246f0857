/* A trlat-report/1 document (docs/REPORT.md) read into C structs.
 *
 * The loader checks every field it knows: integers must be whole numbers in
 * [0, 2^63-1], strings strings, arrays arrays; it ignores fields it does not
 * know. Stored percentiles are checked, not kept: figures are recomputed from
 * the histograms (interpose/hist.h), exactly as the library computes them. */
#ifndef TRLAT_CLI_LOAD_H
#define TRLAT_CLI_LOAD_H

#include "interpose/hist.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLI_SCHEMA "trlat-report/1"

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
    uint64_t launches;
};

struct cli_count {
    const char *name;
    uint64_t n;
};

struct cli_fastpath {
    bool set;
    uint64_t hits, misses;
    struct cli_count *fallbacks;
    size_t n_fallbacks;
};

struct cli_kernel {
    const char *name, *module; /* module may be NULL */
    uint64_t launches, src_driver, src_runtime;
    struct cli_stat driver, gap, py, gpu;
    struct cli_u64 starved, starved_launches;
    struct cli_fastpath fastpath;
    struct cli_site *sites;
    size_t n_sites;
};

enum cli_ev_kind { CLI_EV_LAUNCH, CLI_EV_GPU, CLI_EV_STARVED };

struct cli_event {
    enum cli_ev_kind kind;
    const char *kernel;
    uint64_t start, end;
    struct cli_u64 pid;          /* events of merged reports name their process */
    struct cli_u64 tid, py, corr; /* launch (corr also gpu) */
    struct cli_u64 device, stream; /* gpu, starved */
    const char *stream_handle;   /* launch: the CUstream, e.g. "0x0"; may be NULL */
    const char *source;          /* gpu: "driver" or "runtime"; may be NULL */
    bool has_dims;
    uint64_t grid[3], block[3];
};

struct cli_clock {
    const char *source; /* NULL when the report has no clock */
    struct cli_u64 epoch_mono, epoch_real;
};

/* One process a merged report was made from. */
struct cli_origin {
    uint64_t pid;
    struct cli_u64 rank;
    const char *host, *argv0;
    struct cli_clock clock;
};

struct cli_report {
    const char *path;
    void *json; /* the parsed document (json_t); owns every string below */
    const char *trlat_version, *host, *argv0;
    uint64_t pid;
    struct cli_u64 rank, local_rank, world_size, wall_ns;
    struct cli_clock clock;
    struct {
        const char *cupti, *cupti_reason, *fastpath;
        int stacks; /* -1: not in the report */
        struct cli_u64 trace;
    } config;
    struct {
        uint64_t launches, kernels, driver_ns;
        struct cli_u64 threads, py_to_driver_ns, gpu_ns, gpu_busy_ns, starved_ns;
        struct cli_u64 dropped_records, unnamed_launches;
    } totals;
    struct cli_kernel *kernels;
    size_t n_kernels;
    struct cli_event *events;
    size_t n_events;
    struct cli_origin *merged_from; /* NULL unless written by `trlat merge` */
    size_t n_merged;
};

/* Parses and checks buf. 0 on success; -1 with a one-line message in err
 * (no file name; e.g. "kernels[2].launches: expected ...") and *r zeroed. */
int cli_load_buffer(struct cli_report *r, const char *path, const char *buf, size_t len, char *err,
                    size_t errlen);

/* Reads path ("-": standard input); on any problem prints
 * "trlat: PATH: problem" and exits 2. */
void cli_load(struct cli_report *r, const char *path);

void cli_report_free(struct cli_report *r);

/* The processes a report covers: merged_from, or the report's own process. */
size_t cli_origins(const struct cli_report *r, struct cli_origin **out);

#endif
