/* The report module: at exit, folds the records, writes the JSON report
 * (docs/REPORT.md) and the summary table on stderr. */
#ifndef TRLAT_WRITER_H
#define TRLAT_WRITER_H

#include "report/fold.h"

#include <stdio.h>

/* Writes the whole report document for fold f to out. */
void trlat_report_json(FILE *out, struct trlat_fold *f, uint64_t wall_ns);
/* Writes the top-kernels table (to stderr at exit). */
void trlat_report_summary(FILE *out, const struct trlat_fold *f, const char *path, uint64_t wall_ns);

/* Extra report content from other modules (CUPTI's GPU records, the fast
 * path's counters): called on the fold before it is sorted and written. */
typedef void (*trlat_fold_contributor)(struct trlat_fold *f);
void trlat_report_add_contributor(trlat_fold_contributor fn);
/* Extra events (CUPTI's GPU spans, starved intervals) written after the
 * host launch events. */
struct trlat_json;
typedef void (*trlat_event_writer)(struct trlat_json *j, struct trlat_fold *f, uint64_t first_ns);
void trlat_report_add_event_writer(trlat_event_writer fn);
/* Extra top-level members (the Python hook's "python" object), written
 * after "totals". */
typedef void (*trlat_section_writer)(struct trlat_json *j);
void trlat_report_add_section(trlat_section_writer fn);
/* cupti / fastpath status strings for the config object ("on", "unavailable"). */
extern const char *trlat_report_cupti_state;
extern const char *trlat_report_cupti_reason;

#endif
