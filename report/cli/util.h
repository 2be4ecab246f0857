/* What every `trlat` subcommand shares: one-line errors, allocation that
 * cannot fail silently, option values, output files. */
#ifndef TRLAT_CLI_UTIL_H
#define TRLAT_CLI_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit status for bad input (unreadable or invalid files, bad options). */
#define CLI_EXIT_BAD_INPUT 2

/* Largest value a report may hold where an integer is expected (JSON
 * integers are signed 64-bit in the writer and in jansson). */
#define CLI_INT_MAX ((uint64_t)INT64_MAX)

/* "PATH: message" into err (errlen bytes; no "PATH: " when path is NULL),
 * for a reader's error that its caller reports. */
void cli_format_error(char *err, size_t errlen, const char *path, const char *fmt, va_list ap);

/* "trlat: WHAT: message" on one line (control characters replaced), exit 2. */
_Noreturn void cli_fail(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A report that could not be read (why: the loader's message). With skip,
 * "trlat: PATH: why; skipped" on stderr; else fails with that message and,
 * when other reports could go on without it, the hint of --skip-bad. */
void cli_bad_report(const char *path, const char *why, bool skip, bool others);

/* "trlat CMD: message (see trlat CMD --help)" on one line, exit 2. */
_Noreturn void cli_usage_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reports the option getopt_long just refused (it returned '?' or ':'). */
_Noreturn void cli_bad_option(const char *cmd, int ret, char **argv);

/* Replaces control characters so a message stays on one line. */
void cli_one_line(char *s);

/* Allocation failures exit with "trlat: out of memory", naming the report
 * being read and its size while one is (cli_oom_context; NULL: none). */
void cli_oom_context(const char *path, uint64_t size);
/* "512 bytes", "34.4 MB", "1.73 GB". */
const char *cli_fmt_size(char *buf, size_t len, uint64_t bytes);
_Noreturn void cli_out_of_memory(void);
void *cli_xmalloc(size_t size);
void *cli_xcalloc(size_t n, size_t size);
void *cli_xrealloc(void *p, size_t n, size_t size);
char *cli_xstrdup(const char *s);
/* strcmp of two strings either of which may be NULL (sorting as ""). */
int cli_strcmp_opt(const char *a, const char *b);

/* Decimal number in [0, max] for option OPT, else a usage error. */
uint64_t cli_parse_uint(const char *cmd, const char *opt, const char *s, uint64_t max);
/* Non-negative decimal (fraction allowed) for option OPT, else a usage error. */
double cli_parse_pct(const char *cmd, const char *opt, const char *s);

/* Index of s in the NULL-terminated list words, else a usage error naming
 * the accepted words. */
int cli_parse_word(const char *cmd, const char *opt, const char *s, const char *const *words);

/* Options of a subcommand that takes only -o/--output OUT and --help:
 * returns OUT (NULL if not given) and leaves optind at the first operand;
 * --help prints usage and exits 0. */
const char *cli_parse_output_only(const char *cmd, const char *usage, int argc, char **argv);

/* stdout for NULL or "-", else the file opened for writing (fails on error). */
FILE *cli_open_out(const char *path);
/* Flushes and closes what cli_open_out returned; a write error fails. */
void cli_close_out(FILE *f, const char *path);

/* a + b, or false when the sum passes CLI_INT_MAX. */
static inline bool cli_add(uint64_t *acc, uint64_t v)
{
    if (v > CLI_INT_MAX || *acc > CLI_INT_MAX - v)
        return false;
    *acc += v;
    return true;
}

/* a + b, saturating at CLI_INT_MAX (for figures computed for display). */
static inline uint64_t cli_add_sat(uint64_t a, uint64_t b)
{
    return (a > CLI_INT_MAX || b > CLI_INT_MAX - a) ? CLI_INT_MAX : a + b;
}

#endif
