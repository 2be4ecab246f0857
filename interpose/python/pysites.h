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

/* Whose code a frame runs, by its file (interpose/python/pyhook_site.c
 * decides): the program's own, a library's (the interpreter's, an installed
 * package's, generated code), or the launch runtime's (Triton's, Inductor's
 * runtime), whose frames are never call sites. */
enum trlat_pysite_level { TRLAT_PYSITE_USER = 0, TRLAT_PYSITE_LIBRARY = 1, TRLAT_PYSITE_RUNTIME = 2 };

/* What a key maps to: site is 0 for a runtime frame. */
struct trlat_pysite_hit {
    uint64_t site;
    int level;
};

/* A Python launch's site as its record carries it: the kernel's site (the
 * first frame outside the launch runtime) in the low bits, the user's (the
 * first frame of the program's own code; 0: none within reach) above them.
 * Site ids stay below TRLAT_PYSITES_MAX + 2, under either half. */
#define TRLAT_PYSITE_USER_SHIFT 16 /* the pair fits a record's 32 bits (tstate.h) */
_Static_assert(TRLAT_PYSITES_MAX + 2 < (1 << TRLAT_PYSITE_USER_SHIFT), "a site id fits its half of the pair");
static inline uint64_t trlat_pysite_pair(uint64_t kernel, uint64_t user)
{
    return kernel | user << TRLAT_PYSITE_USER_SHIFT;
}
static inline uint64_t trlat_pysite_kernel(uint64_t pair)
{
    return pair & ((1ull << TRLAT_PYSITE_USER_SHIFT) - 1);
}
static inline uint64_t trlat_pysite_user(uint64_t pair)
{
    return pair >> TRLAT_PYSITE_USER_SHIFT;
}

/* 1 and *hit filled when (code, offset) is known, else 0. */
int trlat_pysite_lookup(const void *code, int64_t offset, struct trlat_pysite_hit *hit);

/* Records (code, offset) at file:line. Returns 1 when the key was stored:
 * the caller must then keep `code` alive for as long as the process runs
 * (a freed code object's address could come back as another's), 0 when it
 * was already there or the key table is full (*hit is valid either way). */
int trlat_pysite_insert(const void *code, int64_t offset, const char *file, int line, int level,
                        struct trlat_pysite_hit *hit);

/* "file.py:42" for a site id, NULL for an unknown id. */
const char *trlat_pysite_text(uint64_t id, char *buf, unsigned long len);

/* Number of distinct sites so far (tests). */
unsigned trlat_pysite_count(void);
/* Forget everything (tests only: leaks the copies). */
void trlat_pysites_reset(void);

#endif
