/* Python files libtrlat.so runs itself (pyhook.py, gridcheck.py), read by
 * absolute path from trlat's own install directory, never through sys.path
 * or the working directory. */
#ifndef TRLAT_SHAREFILE_H
#define TRLAT_SHAREFILE_H

#include <stddef.h>

/* The whole of <libdir>/share/trlat/NAME (build tree), else
 * <libdir>/../share/trlat/NAME (installed under PREFIX/lib), where <libdir>
 * holds the libtrlat.so that is running: a malloc'd, NUL-terminated copy
 * (at most max - 1 bytes), or NULL. `path` gets the path read, or the first
 * one tried (for a message). */
char *trlat_share_read(const char *name, size_t max, char *path, size_t len);

#endif
