/* Where the reports of `trlat run`'s command went (report/cli/run_reports.c). */
#ifndef TRLAT_CLI_RUN_H
#define TRLAT_CLI_RUN_H

struct cli_run_reports;

/* Before the command starts: a private directory (0700) whose file
 * "reports" each process of the command that writes a report appends the
 * report's absolute path to (TRLAT_REPORT_LIST, set here for the command),
 * and the files matching the output pattern as they are now. */
struct cli_run_reports *cli_run_reports_begin(const char *pattern);

/* After it ended: says on stderr which reports it wrote (those listed that
 * exist; without a list, the files matching the pattern that appeared or
 * changed) and removes the directory. */
void cli_run_reports_end(struct cli_run_reports *w);

#endif
