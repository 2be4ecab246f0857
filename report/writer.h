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

/* cupti / fastpath status strings for the config object ("on", "unavailable"). */
extern const char *trlat_report_cupti_state;
extern const char *trlat_report_cupti_reason;

#endif
