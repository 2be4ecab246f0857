/* Where the report goes: TRLAT_OUTPUT's template expanded (%p pid, %r rank,
 * %h host, %% a percent sign) and the file written safely. */
#ifndef TRLAT_OUTPUT_H
#define TRLAT_OUTPUT_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

/* Expands tmpl into out; returns 0, or -1 if it does not fit. */
int trlat_output_expand(const char *tmpl, char *out, size_t len);

/* One process's report file, kept between writes: the first write picks its
 * name, a later one (by the same process) replaces that file atomically. */
struct trlat_output {
    char path[4096];  /* the report's absolute path once written, else "" */
    const char *list; /* TRLAT_REPORT_LIST: a new path is appended there, or NULL */
    /* private */
    pid_t pid;
    dev_t dev;
    ino_t ino;
    struct timespec ctime;
    int fallback;
};

/* Writes the report: fill(f, arg) writes it to a temporary file beside its
 * final name, which is then flushed, synced and checked, and only then moved
 * to that name. The name is tmpl expanded (an existing directory, or a name
 * ending in '/', takes the default trlat-%p.json inside it); a file there,
 * or a dangling symlink, is never replaced (a ".N" suffix is added before
 * ".json" instead); a device, FIFO or socket there is refused. When the
 * directory is not writable or the write fails (full disk...), the report is
 * written again to $TMPDIR (or /tmp), mode 0600. fill may be called twice.
 * Says on stderr, in one line, what went wrong and where the report went.
 * Returns 0 with o->path set, or -1 (no report written). */
int trlat_output_write(struct trlat_output *o, const char *tmpl, void (*fill)(FILE *f, void *arg), void *arg);

#endif
