#include "interpose/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

/* Two budgets: what trlat could not do (the lines a user must see) and
 * what TRLAT_FASTPATH_DEBUG asked for, so that a debugging session's lines
 * never push a warning out. */
#define TRLAT_LOG_MAX_LINES 32
#define TRLAT_LOG_MAX_DEBUG_LINES 4096

static atomic_int lines_printed, debug_lines_printed;
static _Thread_local int in_log;

void trlat_log_reset(void)
{
    atomic_store(&lines_printed, 0);
    atomic_store(&debug_lines_printed, 0);
}

static void vlog(atomic_int *printed, int max, const char *what, const char *fmt, va_list ap)
{
    if (in_log)
        return;
    int n = atomic_fetch_add_explicit(printed, 1, memory_order_relaxed);
    if (n > max)
        return;
    in_log = 1;
    char buf[512];
    int len = snprintf(buf, sizeof buf, "trlat: ");
    if (n == max) {
        len += snprintf(buf + len, sizeof buf - (size_t)len, "(further %smessages suppressed)", what);
    } else {
        int m = vsnprintf(buf + len, sizeof buf - (size_t)len, fmt, ap);
        len = (m < 0) ? len : (len + m >= (int)sizeof buf - 1 ? (int)sizeof buf - 2 : len + m);
    }
    buf[len++] = '\n';
    ssize_t off = 0;
    while (off < len) {
        ssize_t w = write(2, buf + off, (size_t)(len - off));
        if (w <= 0)
            break;
        off += w;
    }
    in_log = 0;
}

void trlat_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(&lines_printed, TRLAT_LOG_MAX_LINES, "", fmt, ap);
    va_end(ap);
}

void trlat_log_debug(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(&debug_lines_printed, TRLAT_LOG_MAX_DEBUG_LINES, "debug ", fmt, ap);
    va_end(ap);
}
