/* The `trlat` subcommands (one file each) and the renderers they share
 * with the fuzz target. Entry points take argv with argv[0] the
 * subcommand's name and return the process exit status. */
#ifndef TRLAT_CLI_H
#define TRLAT_CLI_H

#include "report/cli/load.h"
#include "report/cli/metrics.h"

#include <stdio.h>

#ifndef TRLAT_VERSION
#define TRLAT_VERSION "unknown"
#endif

int cli_run_main(int argc, char **argv);
int cli_report_main(int argc, char **argv);
int cli_diff_main(int argc, char **argv);
int cli_merge_main(int argc, char **argv);
int cli_trace_main(int argc, char **argv);

struct cli_table;
/* The kernel table every report form shows: header, a row per kernel in
 * view, a totals row; per-launch means unless the header says total. */
void cli_kernel_table(struct cli_table *t, const struct cli_view *v);
/* The tables the text and HTML views show under the kernels, in order:
 * where the shown kernels' launches came from (their call sites, most
 * launches first), why the fast path did not serve them (fallbacks by
 * reason), the host time between launches by user site (over every
 * kernel: the Triton calls' part and the rest), the shown kernels' py->drv
 * by Triton's phase (TRLAT_PY_PHASES) and the regions. Each fills *t and
 * returns its rows, 0 when it has none (the table is then not shown). */
size_t cli_sites_table(struct cli_table *t, const struct cli_view *v);
size_t cli_fallbacks_table(struct cli_table *t, const struct cli_view *v);
size_t cli_user_sites_table(struct cli_table *t, const struct cli_view *v);
size_t cli_phases_table(struct cli_table *t, const struct cli_view *v);
size_t cli_regions_table(struct cli_table *t, const struct cli_view *v);
enum { CLI_HEAD = 2, CLI_HEAD_TOTAL = 1 };
struct cli_section {
    const char *title, *html_title, *html_id;
    int header_total; /* CLI_HEAD: its first row is a header; CLI_HEAD_TOTAL: and its last a total */
    size_t (*make)(struct cli_table *t, const struct cli_view *v);
};
extern const struct cli_section cli_sections[];
extern const size_t cli_n_sections;

/* `trlat report` forms. */
void cli_render_text(FILE *f, const struct cli_view *v);
void cli_render_csv(FILE *f, const struct cli_view *v);
void cli_render_json(FILE *f, const struct cli_view *v);
void cli_render_html(FILE *f, const struct cli_view *v);

/* Merging: reports are folded into a merger one at a time (it copies what
 * it keeps: each report may go once added); cli_merger_finish gives their
 * merge, whose strings belong to the merger (free *out with
 * cli_report_free before the merger): 0, or -1 with a message naming the
 * input at fault in err. Events are not kept: cli_merge_events appends a
 * report's, each with its process's pid, to the events array of a merged
 * report being written (cli_json_dump_with; *n counts the events written):
 * 0, or -1 with a message in err. */
struct cli_merger;
struct cli_merger *cli_merger_new(void);
void cli_merger_add(struct cli_merger *m, const struct cli_report *r);
int cli_merger_finish(struct cli_merger *m, struct cli_report *out, char *err, size_t errlen);
void cli_merger_free(struct cli_merger *m);
int cli_merge_events(FILE *f, const struct cli_report *r, size_t *n, char *err, size_t errlen);

/* A report's optional number and string as JSON (null when absent). */
struct json_t *cli_jv_opt(const struct cli_u64 *v);
struct json_t *cli_jv_str(const char *s);

/* A report as a trlat-report/1 document (a json_t, caller decrefs) with
 * "events" empty: a report's events are written by cli_merge_events. */
void *cli_report_to_json(const struct cli_report *r);
void *cli_event_to_json(const struct cli_event *e);

/* Chrome trace JSON of a report's events, in two readings of them:
 * cli_trace_index checks them and notes the tracks and launches the trace
 * needs (NULL with a message in err), cli_trace_write writes the trace
 * (0, or -1 with a message in err). */
struct cli_trace;
struct cli_trace *cli_trace_index(const struct cli_report *r, char *err, size_t errlen);
size_t cli_trace_events(const struct cli_trace *t);
int cli_trace_write(struct cli_trace *t, FILE *f, char *err, size_t errlen);
void cli_trace_free(struct cli_trace *t);

#endif
