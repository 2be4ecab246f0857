/* Files the library writes (the report, TRLAT_FASTPATH_LOG,
 * TRLAT_REPORT_LIST), all opened one careful way: never through a symlink
 * planted at the path, never a device, FIFO or socket (nor anything in /dev,
 * /proc or /sys), never replacing another file, always close-on-exec. */
#ifndef TRLAT_SAFEFILE_H
#define TRLAT_SAFEFILE_H

#include <stddef.h>
#include <sys/types.h>

/* Why no file of trlat's may be at path ("a FIFO", "a character device",
 * "a directory", "a file in /dev", ...), or NULL when one may: nothing there, a
 * regular file or a symlink to one. Opens nothing. */
const char *trlat_file_refused(const char *path);

/* path's directory ("." for a bare name, "/" for "/x") into out; 0 or -1. */
int trlat_file_dir(const char *path, char *out, size_t len);

/* path with ".N" inserted before a trailing ".json" (or appended); n == 0:
 * path itself. Returns 0, or -1 if it does not fit. */
int trlat_file_numbered(const char *path, unsigned n, char *out, size_t len);

/* Opens path for appending, creating it with mode if absent: only a regular
 * file, never through a symlink. Returns the fd, or -1 with *why saying why. */
int trlat_file_append(const char *path, mode_t mode, const char **why);

/* Creates a new temporary file in dir, ".trlat-PID-XXXXXXXX.json.tmp"
 * (mode minus umask); its name goes to tmp. Returns the fd, or -1 (errno). */
int trlat_file_temp(const char *dir, mode_t mode, char *tmp, size_t len);

/* Moves the file tmp to want, or where want is taken (by anything, a
 * dangling symlink too) to its first free ".N" name, without ever replacing
 * a file: renameat2(RENAME_NOREPLACE), else link()+unlink(), else an empty
 * O_EXCL placeholder renamed over, as far as the filesystem allows. The
 * name goes to out. Returns 0, or -1 (errno). */
int trlat_file_publish(const char *tmp, const char *want, char *out, size_t len);

#endif
