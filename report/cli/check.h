/* The loader's checked access to parsed JSON (report/cli/load.c and
 * report/cli/events.c): the JSON path of the value being read, for
 * messages, and where a failure jumps to. */
#ifndef TRLAT_CLI_CHECK_H
#define TRLAT_CLI_CHECK_H

#include "report/cli/load.h"

#include <jansson.h>
#include <setjmp.h>

struct ld {
    jmp_buf jmp;
    char *err;
    size_t errlen;
    char path[192];
    size_t plen;
};

/* The message, after "PATH: " when a path is pushed; jumps to ld->jmp. */
_Noreturn void ld_fail(struct ld *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Path bookkeeping: push returns the mark that pop restores. */
size_t ld_push_key(struct ld *ld, const char *key);
size_t ld_push_index(struct ld *ld, size_t i);
void ld_pop(struct ld *ld, size_t mark);

/* "an object", "a negative number", ... */
const char *ld_describe(const json_t *v);

/* Type checks of the value at the current path. */
uint64_t ld_as_u64(struct ld *ld, const json_t *v);
const char *ld_as_str(struct ld *ld, const json_t *v);
void ld_need(struct ld *ld, const json_t *v, json_type type, const char *what);

/* Field access. A missing required field fails; an optional one and null
 * read as NULL. */
enum { LD_REQ = 1, LD_OPT = 0 };
const json_t *ld_field(struct ld *ld, const json_t *obj, const char *key, int req);
uint64_t ld_get_u64(struct ld *ld, const json_t *obj, const char *key);
struct cli_u64 ld_get_opt_u64(struct ld *ld, const json_t *obj, const char *key);
const char *ld_get_str(struct ld *ld, const json_t *obj, const char *key, int req);

/* jansson allocates through a malloc that notes a failure: jansson's
 * parser fails without a message when memory runs out. cli_json_parsing
 * installs it (once) and forgets earlier failures. */
void cli_json_parsing(void);

/* Fails with what jansson's parse error je means: out of memory, the
 * text truncated (whole: je is of the whole document, which opens like
 * one), invalid UTF-8 at byte pos, a number out of range or invalid JSON
 * at line and col. */
_Noreturn void ld_json_error(struct ld *ld, const struct cli_text *t, const json_error_t *je, uint64_t pos, int line,
                             int col, bool whole);

#endif
