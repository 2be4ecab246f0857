/* The `trlat` subcommands (one file each) and the renderers they share
 * with the fuzz target. Entry points take argv with argv[0] the
 * subcommand's name and return the process exit status. */
#ifndef TRLAT_CLI_H
#define TRLAT_CLI_H

#include "report/cli_load.h"
#include "report/cli_metrics.h"

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

/* `trlat report` forms. */
void cli_render_text(FILE *f, const struct cli_view *v);
void cli_render_csv(FILE *f, const struct cli_view *v);
void cli_render_json(FILE *f, const struct cli_view *v);
void cli_render_html(FILE *f, const struct cli_view *v);

/* Merges n reports into *out, whose strings point into the inputs (keep
 * them until *out is freed with cli_report_free). 0, or -1 with a message
 * naming the input at fault in err. */
int cli_merge(const struct cli_report *const *in, size_t n, struct cli_report *out, char *err, size_t errlen);
/* A report as a trlat-report/1 document (a json_t, caller decrefs). */
void *cli_report_to_json(const struct cli_report *r);

/* Chrome trace JSON of a report's events. */
void cli_render_trace(FILE *f, const struct cli_report *r);

#endif
