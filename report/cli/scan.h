/* Finding a report's top-level "events" array in its text without parsing
 * it: a scanner that follows strings (and their escapes) and brackets only.
 * The loader hands jansson the rest of the document with "[]" in place of
 * the array, and the events one at a time. */
#ifndef TRLAT_CLI_SCAN_H
#define TRLAT_CLI_SCAN_H

#include "report/cli/text.h"

struct cli_layout {
    bool opens;       /* the first byte but white space is '{' or '[' */
    bool split;       /* "events" is an array at [at, end) ('[' to past ']') */
    uint64_t at, end; /* end is the text's end when the text ends inside it */
    int read_err;     /* errno of a failed read */
    uint64_t bad_at;  /* bad[0]: the array is not valid JSON, bad says why, */
    char bad[48];     /* after the first bad_at bytes */
};

enum { CLI_SCAN_OK = 0, CLI_SCAN_END = -1, CLI_SCAN_BAD = -2 };

void cli_scan_layout(const struct cli_text *t, struct cli_layout *lay);

/* cli_scan_value skips the value at the reader: CLI_SCAN_OK; CLI_SCAN_END
 * when the text ends first; CLI_SCAN_BAD with *what saying why (the reader
 * is past the offending byte). A scalar is taken as the bytes up to the
 * next delimiter (jansson checks them). */
void cli_scan_ws(struct cli_rd *r);
int cli_scan_value(struct cli_rd *r, const char **what);

#endif
