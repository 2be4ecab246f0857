/* Messages from trlat to stderr: one write(2) per line from a fixed stack
 * buffer (no allocation, usable inside wrappers and at exit), a recursion
 * guard, and caps on how many lines one process prints. */
#ifndef TRLAT_LOG_H
#define TRLAT_LOG_H

#include <stdatomic.h>

void trlat_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A line asked for by TRLAT_FASTPATH_DEBUG: its own, larger budget, so it
 * never takes a warning's place. */
void trlat_log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints at most once per flag, e.g. `static atomic_flag f; trlat_log_once(&f, ...)`. */
#define trlat_log_once(flag, ...)                                             \
    do {                                                                      \
        if (!atomic_flag_test_and_set_explicit((flag), memory_order_relaxed)) \
            trlat_log(__VA_ARGS__);                                           \
    } while (0)

/* Resets the line budget (after fork, and in tests). */
void trlat_log_reset(void);

#endif
