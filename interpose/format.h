/* The report format's facts that the library (which writes reports) and
 * the CLI (which reads them, report/cli/) share; docs/REPORT.md. The
 * histogram's are in interpose/hist.h. */
#ifndef TRLAT_FORMAT_H
#define TRLAT_FORMAT_H

#define TRLAT_REPORT_SCHEMA "trlat-report/1"
/* config.trace's bound: the largest TRLAT_TRACE */
#define TRLAT_TRACE_MAX 10000000

#endif
