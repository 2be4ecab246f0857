#include "interpose/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#define TRLAT_LOG_MAX_LINES 32

static atomic_int lines_printed;
static _Thread_local int in_log;

void trlat_log_reset(void)
{
    atomic_store(&lines_printed, 0);
}

void trlat_log(const char *fmt, ...)
{
    if (in_log)
        return;
    int n = atomic_fetch_add_explicit(&lines_printed, 1, memory_order_relaxed);
    if (n > TRLAT_LOG_MAX_LINES)
        return;
    in_log = 1;
    char buf[512];
    int len = snprintf(buf, sizeof buf, "trlat: ");
    if (n == TRLAT_LOG_MAX_LINES) {
        len += snprintf(buf + len, sizeof buf - (size_t)len, "(further messages suppressed)");
    } else {
        va_list ap;
        va_start(ap, fmt);
        int m = vsnprintf(buf + len, sizeof buf - (size_t)len, fmt, ap);
        va_end(ap);
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
