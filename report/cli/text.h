/* A report's bytes and a sequential reader over them. A regular file is
 * read as needed, a window at a time (pread), so a report of gigabytes
 * costs no memory for its size; anything else (a pipe, a terminal) is read
 * into memory first. */
#ifndef TRLAT_CLI_TEXT_H
#define TRLAT_CLI_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cli_text {
    int fd;        /* -1: the bytes are at mem */
    bool close_fd; /* fd is ours (not standard input) */
    const char *mem;
    char *owned;   /* mem when read into memory here */
    uint64_t base; /* file offset of byte 0 (standard input may start past 0) */
    uint64_t size;
};

/* Opens path ("-": standard input). 0, or -1 with "cannot open: ..." or
 * "cannot read: ..." in err. */
int cli_text_open(struct cli_text *t, const char *path, char *err, size_t errlen);
/* A text over len bytes at buf (not copied: buf must outlive t). */
void cli_text_memory(struct cli_text *t, const char *buf, size_t len);
void cli_text_close(struct cli_text *t);

/* Line and column, as jansson counts them (lines from 1, characters from
 * 1), of the last of the first pos bytes. */
void cli_text_linecol(const struct cli_text *t, uint64_t pos, int *line, int *col);

/* The reader: b[0..lim) holds the text's bytes from offset off; the next
 * byte is b[pos]. While marked, the bytes from b[mark] on stay in the
 * window (it grows), so a value can be handed on in one piece. */
struct cli_rd {
    const struct cli_text *t;
    const char *b;
    size_t pos, lim, mark;
    bool marked;
    uint64_t off;
    char *buf;
    size_t cap;
    int err; /* errno of a failed read; the reader then stops as at the end */
};

void cli_rd_open(struct cli_rd *r, const struct cli_text *t, uint64_t at);
void cli_rd_seek(struct cli_rd *r, uint64_t at);
void cli_rd_close(struct cli_rd *r);
/* Reads more; false at the end of the text or on a read error. */
bool cli_rd_fill(struct cli_rd *r);

static inline int cli_rd_peek(struct cli_rd *r)
{
    if (r->pos == r->lim && !cli_rd_fill(r))
        return -1;
    return (unsigned char)r->b[r->pos];
}

static inline int cli_rd_get(struct cli_rd *r)
{
    int c = cli_rd_peek(r);
    if (c >= 0)
        r->pos++;
    return c;
}

static inline uint64_t cli_rd_tell(const struct cli_rd *r)
{
    return r->off + r->pos;
}

#endif
