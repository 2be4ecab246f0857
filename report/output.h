/* Where the report goes: TRLAT_OUTPUT's template expanded (%p pid, %r rank,
 * %h host, %% a percent sign) and the file created safely. */
#ifndef TRLAT_OUTPUT_H
#define TRLAT_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

/* Expands tmpl into out; returns 0, or -1 if it does not fit. */
int trlat_output_expand(const char *tmpl, char *out, size_t len);

/* Creates the report file: never follows a symlink planted at the path, never
 * replaces an existing file (another process's report: a ".N" suffix is
 * added before the extension instead), falls back to $TMPDIR (or /tmp) when
 * the directory is not writable. Returns the open file and its final path in
 * `path` (len bytes), or NULL after saying why on stderr. */
FILE *trlat_output_create(const char *tmpl, char *path, size_t len);

#endif
