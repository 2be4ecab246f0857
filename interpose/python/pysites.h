/* Python call sites: (code object, instruction offset) -> site id, and
 * site id -> "file.py:42" at report time. Pure C (no Python API): the hook
 * (interpose/python/pyhook_site.c) walks the frames and feeds it.
 *
 * The lookup is lock-free and allocation-free; inserts (the first time an
 * instruction calls Triton) take a mutex and copy the text. Ids are never
 * reused; the tables are fixed-size, so memory is bounded: past the limits a
 * new site gets TRLAT_PYSITE_OTHER. */
#ifndef TRLAT_PYSITES_H
#define TRLAT_PYSITES_H

#include <stdint.h>

#define TRLAT_PYSITES_MAX 4096   /* distinct file:line sites */
#define TRLAT_PYSITES_KEYS 16384 /* distinct (code, offset) keys, power of 2 */
#define TRLAT_PYSITE_OTHER 1     /* "(other python sites)" */

/* What a key maps to. skip: the frame is inside the package whose frames
 * are not call sites (Triton's own); site is 0 then. */
struct trlat_pysite_hit {
    uint64_t site;
    int skip;
};

/* 1 and *hit filled when (code, offset) is known, else 0. */
int trlat_pysite_lookup(const void *code, int64_t offset, struct trlat_pysite_hit *hit);

/* Records (code, offset) at file:line. Returns 1 when the key was stored:
 * the caller must then keep `code` alive for as long as the process runs
 * (a freed code object's address could come back as another's), 0 when it
 * was already there or the key table is full (*hit is valid either way). */
int trlat_pysite_insert(const void *code, int64_t offset, const char *file, int line, int skip,
                        struct trlat_pysite_hit *hit);

/* "file.py:42" for a site id, NULL for an unknown id. */
const char *trlat_pysite_text(uint64_t id, char *buf, unsigned long len);

/* Number of distinct sites so far (tests). */
unsigned trlat_pysite_count(void);
/* Forget everything (tests only: leaks the copies). */
void trlat_pysites_reset(void);

#endif
