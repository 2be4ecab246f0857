/* Figures derived from a report, defined once for every output form and
 * for `trlat diff`. Percentiles come only from histograms. */
#ifndef TRLAT_CLI_METRICS_H
#define TRLAT_CLI_METRICS_H

#include "report/cli/load.h"

#include <stdbool.h>
#include <stddef.h>

/* Mean of a STATS (NAN when null or empty). */
double cli_mean(const struct cli_stat *s);
/* Quantile q of a STATS from its histogram (NAN when null or empty). */
double cli_pct(const struct cli_stat *s, double q);

/* Host time of a kernel's launches: driver_ns plus py_to_driver_ns. */
uint64_t cli_host_sum(const struct cli_kernel *k);
/* Host time per launch: host sum over the driver_ns samples. */
double cli_host_mean(const struct cli_kernel *k);
/* The report keeps no joint histogram of host time: p50 of driver_ns plus
 * p50 of py_to_driver_ns. */
double cli_host_p50(const struct cli_kernel *k);
/* Fast-path hits over hits + misses (NAN without fast-path counts). */
double cli_hit_rate(uint64_t hits, uint64_t misses);

/* Figures over all kernels of a report. */
struct cli_agg {
    uint64_t launches, host_sum;
    uint64_t errors;                 /* launches the driver refused; the report forms show them only when > 0 */
    struct cli_stat driver, py, gpu; /* merged histograms */
    struct cli_u64 starved;
    bool fastpath;
    uint64_t hits, misses;
};

void cli_aggregate(const struct cli_report *r, struct cli_agg *a);
/* Host time per driver launch over all kernels (NAN without launches). */
double cli_agg_host_mean(const struct cli_agg *a);
/* As cli_host_p50, over all kernels' merged histograms. */
double cli_agg_host_p50(const struct cli_agg *a);

/* A kernel whose mean per launch is one launch's doing (a Triton kernel's
 * first call compiles or loads it: hundreds of ms in py->drv): "K: one
 * launch took 436 ms of its 438 ms py→drv (...); the columns show the
 * median, 400 ns" in buf, true; false (buf empty) when no launch holds half
 * of the kernel's py->drv or driver sum and 1 ms. */
bool cli_outlier_note(const struct cli_kernel *k, char *buf, size_t len);
/* Where launches came through a library's own KernelInterface.run (its
 * py_library_ns, over the whole report): how much of their py->driver was
 * the library's before Triton's; false when none did. */
bool cli_library_note(const struct cli_report *r, char *buf, size_t len);

/* Sum and count without the largest value (trlat diff's means): a
 * kernel's first call compiles it, its first launch may load its module;
 * one such launch can be most of a short run's mean. Both 0 with fewer
 * than 2 values. */
void cli_trimmed(const struct cli_stat *s, uint64_t *sum, uint64_t *count);
/* A kernel's host time so: without its slowest driver call and its slowest
 * Python call, over its driver launches but one. */
void cli_host_trimmed(const struct cli_kernel *k, uint64_t *sum, uint64_t *count);

/* The GPU's busy time: the union of kernel intervals (gpu_busy_ns), else
 * their sum (gpu_ns); NAN without CUPTI figures. */
double cli_gpu_busy(const struct cli_report *r);
/* Share of the GPU's active time (busy + starved) it spent waiting for the
 * host; NAN without CUPTI figures. */
double cli_starved_share(const struct cli_report *r);

/* dst += src, all counts and buckets; false (dst untouched) when a count
 * would pass 2^63-1. */
bool cli_stat_merge(struct cli_stat *dst, const struct cli_stat *src);

/* Orders for `trlat report --sort`. */
enum cli_sort { CLI_SORT_HOST, CLI_SORT_LAUNCHES, CLI_SORT_PY, CLI_SORT_DRIVER, CLI_SORT_GPU, CLI_SORT_STARVED };
extern const char *const cli_sort_names[];

/* What a report form shows: kernels in order, the first n of n_all. */
struct cli_view {
    const struct cli_report *r;
    const struct cli_kernel **kernels;
    size_t n, n_all;
    struct cli_agg all;
    char diagnosis[512];
};

/* top == 0 shows every kernel. */
void cli_view_init(struct cli_view *v, const struct cli_report *r, enum cli_sort sort, size_t top);
void cli_view_free(struct cli_view *v);

/* "GPU starved 41.0% of the time ...; 3 kernels account for 90% of it." */
void cli_diagnose(const struct cli_report *r, const struct cli_agg *a, char *buf, size_t len);

/* "python3, pid 1234, rank 0 of 8, host gpu-node-1" or, for a merged
 * report, "3 processes (ranks 0-2), host gpu-node-1". */
void cli_describe_process(const struct cli_report *r, char *buf, size_t len);
/* "cupti on, fastpath off, stacks off, trace 0". */
void cli_describe_config(const struct cli_report *r, char *buf, size_t len);
/* "hook installed (Triton 3.6.0); 20 calls, 2 without a launch (1 warmup,
 * 1 error)"; false (buf empty) when the report has no "python" object. */
bool cli_describe_python(const struct cli_report *r, char *buf, size_t len);

#endif
