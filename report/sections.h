/* The report's parts that come from the parts below it (CUPTI, the Python
 * hook, the fast path), called by the writer (report/writer.c) in this
 * order: the folds before the fold is sorted, the sections after
 * "totals", the events after the host launch events. */
#ifndef TRLAT_SECTIONS_H
#define TRLAT_SECTIONS_H

#include "report/fold.h"

#include <stdint.h>

struct trlat_json;

/* CUPTI's per-kernel GPU records joined into the fold (report/gpu_report.c). */
void trlat_gpu_section_fold(struct trlat_fold *f, int final); /* final: the exit's, which says what was lost */
/* The fast path's counters (report/fastpath_section.c). */
void trlat_fastpath_section_fold(struct trlat_fold *f);

/* config's fastpath_state and fastpath_reason (report/fastpath_section.c). */
void trlat_fastpath_section_config(struct trlat_json *j);

/* The "python" object (report/python_section.c). */
void trlat_python_section(struct trlat_json *j);
/* The "gpu" object. */
void trlat_gpu_section(struct trlat_json *j);

/* CUPTI's GPU spans and starved intervals. */
void trlat_gpu_section_events(struct trlat_json *j, struct trlat_fold *f, uint64_t first_ns);

#endif
