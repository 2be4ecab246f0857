/* A call site's text: Python "file.py:42" (from the Python hook), native
 * "libfoo.so!symbol+0x1c" (from dladdr). */
#ifndef TRLAT_SITES_H
#define TRLAT_SITES_H

#include <stddef.h>
#include <stdint.h>

const char *trlat_site_text(uint64_t id, int kind, char *buf, size_t len);
/* A Python site's user part (the program's own frame that led to it):
 * NULL when none was within reach. */
const char *trlat_site_user_text(uint64_t id, char *buf, size_t len);
/* A native site's text, "lib.so!symbol+0xoff" from the object's symbol
 * table (or dladdr), demangled (report/native_site_text.c). */
const char *trlat_native_site_text(uint64_t id, char *buf, size_t len);

#endif
