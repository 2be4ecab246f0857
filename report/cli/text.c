#include "report/cli/text.h"
#include "report/cli/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes read at a time (the fuzz target builds with a tiny one, to cross
 * window boundaries everywhere). */
#ifndef CLI_TEXT_WINDOW
#define CLI_TEXT_WINDOW (1u << 20)
#endif

static int read_error(char *err, size_t errlen, int e)
{
    snprintf(err, errlen, "cannot read: %s", strerror(e));
    return -1;
}

/* A pipe or terminal: all of it into memory. */
static int read_all(struct cli_text *t, int fd)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = cli_xmalloc(cap);
    for (;;) {
        if (n == cap) {
            buf = cli_xrealloc(buf, cap, 2);
            cap *= 2;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            free(buf);
            return e;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    t->owned = buf;
    t->mem = buf;
    t->size = n;
    return 0;
}

int cli_text_open(struct cli_text *t, const char *path, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->fd = -1;
    bool is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    int e = fstat(fd, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
    if (!e && S_ISREG(st.st_mode)) {
        off_t at = is_stdin ? lseek(fd, 0, SEEK_CUR) : 0;
        t->fd = fd;
        t->close_fd = !is_stdin;
        t->base = at > 0 ? (uint64_t)at : 0;
        t->size = (uint64_t)st.st_size > t->base ? (uint64_t)st.st_size - t->base : 0;
        return 0;
    }
    if (!e)
        e = read_all(t, fd);
    if (!is_stdin)
        close(fd);
    return e ? read_error(err, errlen, e) : 0;
}

void cli_text_memory(struct cli_text *t, const char *buf, size_t len)
{
    memset(t, 0, sizeof *t);
    t->fd = -1;
    t->mem = buf;
    t->size = len;
}

void cli_text_close(struct cli_text *t)
{
    if (t->close_fd)
        close(t->fd);
    free(t->owned);
    memset(t, 0, sizeof *t);
    t->fd = -1;
}

void cli_rd_open(struct cli_rd *r, const struct cli_text *t, uint64_t at)
{
    memset(r, 0, sizeof *r);
    r->t = t;
    if (t->fd < 0) {
        r->b = t->mem;
        r->lim = (size_t)t->size;
        r->pos = at < t->size ? (size_t)at : (size_t)t->size;
        return;
    }
    r->cap = CLI_TEXT_WINDOW;
    r->buf = cli_xmalloc(r->cap);
    r->b = r->buf;
    r->off = at;
}

void cli_rd_seek(struct cli_rd *r, uint64_t at)
{
    r->marked = false;
    if (at >= r->off && at <= r->off + r->lim) {
        r->pos = (size_t)(at - r->off);
        return;
    }
    r->off = at;
    r->pos = r->lim = 0;
}

void cli_rd_close(struct cli_rd *r)
{
    free(r->buf);
    memset(r, 0, sizeof *r);
}

bool cli_rd_fill(struct cli_rd *r)
{
    const struct cli_text *t = r->t;
    if (t->fd < 0 || r->err || r->off + r->lim >= t->size)
        return false;
    /* Drop what was read (but the marked value), then read on. */
    size_t keep = r->marked ? r->mark : r->pos;
    memmove(r->buf, r->buf + keep, r->lim - keep);
    r->off += keep;
    r->lim -= keep;
    r->pos -= keep;
    r->mark -= r->marked ? keep : 0;
    if (r->lim == r->cap) {
        r->buf = cli_xrealloc(r->buf, r->cap, 2);
        r->cap *= 2;
        r->b = r->buf;
    }
    uint64_t left = t->size - (r->off + r->lim);
    size_t want = r->cap - r->lim < left ? r->cap - r->lim : (size_t)left;
    ssize_t got;
    do
        got = pread(t->fd, r->buf + r->lim, want, (off_t)(t->base + r->off + r->lim));
    while (got < 0 && errno == EINTR);
    if (got <= 0) {
        r->err = got < 0 ? errno : 0;
        return false;
    }
    r->lim += (size_t)got;
    return true;
}

void cli_text_linecol(const struct cli_text *t, uint64_t pos, int *line, int *col)
{
    struct cli_rd r;
    cli_rd_open(&r, t, 0);
    uint64_t l = 1, c = 0;
    while (cli_rd_tell(&r) < pos && cli_rd_peek(&r) >= 0) {
        size_t end = r.lim;
        if (pos - r.off < end)
            end = (size_t)(pos - r.off);
        for (const char *p = r.b + r.pos, *e = r.b + end; p < e; p++) {
            if (*p == '\n') {
                l++;
                c = 0;
            } else if (((unsigned char)*p & 0xc0) != 0x80) {
                c++; /* a character's first byte */
            }
        }
        r.pos = end;
    }
    cli_rd_close(&r);
    *line = l > INT32_MAX ? INT32_MAX : (int)l;
    *col = c > INT32_MAX ? INT32_MAX : (int)c;
}
