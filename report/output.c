#include "report/output.h"
#include "interpose/config.h"
#include "interpose/log.h"
#include "interpose/safefile.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_NAME "trlat-%p.json"

static const char *rank_text(char *buf, size_t len)
{
    long r = trlat_config_rank(TRLAT_RANK);
    if (r < 0)
        r = trlat_config_rank(TRLAT_LOCAL_RANK);
    if (r < 0)
        return "norank";
    snprintf(buf, len, "%ld", r);
    return buf;
}

int trlat_output_expand(const char *tmpl, char *out, size_t len)
{
    size_t n = 0;
    char tmp[256];
    for (const char *p = tmpl; *p; p++) {
        const char *piece = NULL;
        char one[2] = {*p, 0};
        if (*p == '%' && p[1]) {
            p++;
            switch (*p) {
            case 'p':
                snprintf(tmp, sizeof tmp, "%d", (int)getpid());
                piece = tmp;
                break;
            case 'r':
                piece = rank_text(tmp, sizeof tmp);
                break;
            case 'h':
                if (gethostname(tmp, sizeof tmp) != 0)
                    strcpy(tmp, "host");
                tmp[sizeof tmp - 1] = 0;
                for (char *c = tmp; *c; c++)
                    if (*c == '/')
                        *c = '_'; /* a piece never adds a directory */
                piece = tmp;
                break;
            case 'q': { /* %q{VAR}: the variable's value ("" unset), never a directory */
                const char *end = p[1] == '{' ? strchr(p + 2, '}') : NULL;
                if (!end || end - (p + 2) >= (long)sizeof tmp) {
                    one[0] = '%';
                    p--; /* not %q{...}: kept as written */
                    piece = one;
                    break;
                }
                memcpy(tmp, p + 2, (size_t)(end - (p + 2)));
                tmp[end - (p + 2)] = 0;
                const char *v = getenv(tmp);
                snprintf(tmp, sizeof tmp, "%s", v ? v : "");
                for (char *c = tmp; *c; c++)
                    if (*c == '/')
                        *c = '_';
                piece = tmp;
                p = end;
                break;
            }
            case '%':
                piece = "%";
                break;
            default:
                one[0] = '%';
                p--; /* keep unknown %x as written */
                piece = one;
            }
        } else {
            piece = one;
        }
        size_t m = strlen(piece);
        if (n + m + 1 > len)
            return -1;
        memcpy(out + n, piece, m);
        n += m;
    }
    out[n] = 0;
    return 0;
}

/* path made absolute, its directory resolved where it exists: the name
 * stays right after the program changes directory. */
static void absolute(const char *path, char *out, size_t len)
{
    char dir[PATH_MAX], real[PATH_MAX];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    int w = -1;
    if (trlat_file_dir(path, dir, sizeof dir) == 0 && realpath(dir, real))
        w = snprintf(out, len, "%s/%s", strcmp(real, "/") ? real : "", base);
    else if (path[0] != '/' && getcwd(real, sizeof real))
        w = snprintf(out, len, "%s/%s", real, path);
    if (w < 0 || (size_t)w >= len)
        snprintf(out, len, "%s", path);
}

/* The wanted path for tmpl; returns 0, or -1 with why it cannot take the
 * report in why (wlen bytes). */
static int target(const char *tmpl, char *want, size_t len, char *why, size_t wlen)
{
    char e[PATH_MAX], dflt[64];
    trlat_output_expand(DEFAULT_NAME, dflt, sizeof dflt);
    if (trlat_output_expand(tmpl, e, sizeof e - sizeof dflt)) {
        snprintf(want, len, "%.200s...", tmpl);
        snprintf(why, wlen, "the name is too long");
        return -1;
    }
    size_t n = strlen(e);
    struct stat st;
    if (n && (e[n - 1] == '/' || (stat(e, &st) == 0 && S_ISDIR(st.st_mode))))
        snprintf(e + n, sizeof e - n, "%s%s", e[n - 1] == '/' ? "" : "/", dflt);
    absolute(e, want, len);
    const char *refused = trlat_file_refused(want);
    if (refused)
        snprintf(why, wlen, "%s: refused", refused);
    return refused ? -1 : 0;
}

/* $TMPDIR (or /tmp) and want's name, or the default one. */
static void fallback(const char *want, int default_name, char *alt, size_t len)
{
    char base[PATH_MAX], buf[2 * PATH_MAX + 2];
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !*tmpdir)
        tmpdir = "/tmp";
    const char *slash = strrchr(want, '/');
    snprintf(base, sizeof base, "%s", slash ? slash + 1 : want);
    if (default_name || !*base)
        trlat_output_expand(DEFAULT_NAME, base, sizeof base);
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, base);
    absolute(buf, alt, len);
}

/* The report's stdio stream writes through write(2) itself: the first
 * error's errno is kept for the message. */
struct sink {
    int fd, err;
};

static ssize_t sink_write(void *cookie, const char *buf, size_t n)
{
    struct sink *s = cookie;
    size_t off = 0;
    while (off < n && !s->err) {
        ssize_t w = write(s->fd, buf + off, n - off);
        if (w > 0)
            off += (size_t)w;
        else if (w < 0 && errno != EINTR)
            s->err = errno;
        else if (w == 0)
            s->err = EIO;
    }
    return (ssize_t)off; /* short: stdio marks the stream failed */
}

static int sink_close(void *cookie)
{
    struct sink *s = cookie;
    int r = close(s->fd);
    if (r != 0 && !s->err)
        s->err = errno;
    return r;
}

/* Our own report, still there as we wrote it, is replaced atomically. */
static int replace_own(const struct trlat_output *o, const char *tmp)
{
    struct stat st;
    if (lstat(o->path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != o->dev || st.st_ino != o->ino ||
        st.st_ctim.tv_sec != o->ctime.tv_sec || st.st_ctim.tv_nsec != o->ctime.tv_nsec) {
        errno = EEXIST;
        return -1;
    }
    return rename(tmp, o->path);
}

/* Writes the report through a temporary beside want, then moves it there. */
static int write_at(struct trlat_output *o, const char *want, int replace, mode_t mode, void (*fill)(FILE *, void *),
                    void *arg, char *cause, size_t clen)
{
    char dir[PATH_MAX], tmp[PATH_MAX], final[sizeof o->path];
    int fd = -1;
    if (trlat_file_dir(want, dir, sizeof dir) != 0)
        errno = ENAMETOOLONG;
    else
        fd = trlat_file_temp(dir, mode, tmp, sizeof tmp);
    if (fd < 0) {
        snprintf(cause, clen, "%s", strerror(errno));
        return -1;
    }
    struct sink s = {fd, 0};
    cookie_io_functions_t io = {.write = sink_write, .close = sink_close};
    FILE *f = fopencookie(&s, "w", io);
    if (!f) {
        snprintf(cause, clen, "%s", strerror(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    setvbuf(f, NULL, _IOFBF, 1 << 16);
    fill(f, arg);
    const char *step = "";
    int err = 0;
    if (fflush(f) != 0 || ferror(f))
        err = s.err ? s.err : EIO;
    else if (fsync(fd) != 0 && errno != EINVAL)
        err = errno, step = "fsync: ";
    if (fclose(f) != 0 && !err)
        err = s.err ? s.err : EIO, step = "close: ";
    if (!err) {
        int r = -1;
        if (replace && (r = replace_own(o, tmp)) == 0)
            memcpy(final, o->path, sizeof final);
        if (!replace || (r != 0 && errno == EEXIST)) /* a new file, or ours is gone */
            r = trlat_file_publish(tmp, want, final, sizeof final);
        if (r != 0)
            err = errno, step = "moving it into place: ";
    }
    if (err) {
        snprintf(cause, clen, "%s%s", step, strerror(err));
        unlink(tmp);
        return -1;
    }
    /* what a later write checks before replacing it: still our file (the
     * change time too: a new file may get a freed inode's number) */
    struct stat st = {0};
    lstat(final, &st);
    memcpy(o->path, final, sizeof o->path);
    o->dev = st.st_dev;
    o->ino = st.st_ino;
    o->ctime = st.st_ctim;
    return 0;
}

/* TRLAT_REPORT_LIST: one line per report file, one write(2), O_APPEND (many
 * processes append to it; the only file trlat adds to rather than creates). */
static void list_append(const struct trlat_output *o)
{
    if (!o->list || !*o->list)
        return;
    char line[sizeof o->path + 1];
    size_t n = strlen(o->path);
    if (o->path[0] != '/' || memchr(o->path, '\n', n)) {
        trlat_log("TRLAT_REPORT_LIST=%.200s: the report's path %.200s is not absolute or holds a newline; not listed",
                  o->list, o->path);
        return;
    }
    memcpy(line, o->path, n);
    line[n] = '\n';
    const char *why = NULL;
    int fd = trlat_file_append(o->list, 0600, &why);
    ssize_t w = fd < 0 ? -1 : write(fd, line, n + 1);
    if (fd >= 0 && w != (ssize_t)(n + 1))
        why = w < 0 ? strerror(errno) : "a short write";
    if (fd >= 0)
        close(fd);
    if (why)
        trlat_log("cannot append to TRLAT_REPORT_LIST=%.200s (%s); the report is %.200s", o->list, why, o->path);
}

int trlat_output_write(struct trlat_output *o, const char *tmpl, void (*fill)(FILE *, void *), void *arg)
{
    if (o->pid != getpid()) { /* a forked child's report is its own */
        o->path[0] = 0;
        o->pid = getpid();
        o->fallback = 0;
    }
    char want[PATH_MAX], alt[PATH_MAX], old[sizeof o->path], c0[256], c1[256];
    int replace = o->path[0] != 0, refused = 0, rc = -1;
    snprintf(old, sizeof old, "%s", o->path);
    if (replace)
        snprintf(want, sizeof want, "%s", o->path);
    else
        refused = target(tmpl, want, sizeof want, c0, sizeof c0) != 0;
    if (!refused)
        rc = write_at(o, want, replace, o->fallback ? 0600 : 0644, fill, arg, c0, sizeof c0);
    if (rc != 0) {
        /* in a shared /tmp the report (argv, paths) is for its owner only */
        fallback(want, refused, alt, sizeof alt);
        char d0[PATH_MAX], d1[PATH_MAX];
        if (!refused && trlat_file_dir(want, d0, sizeof d0) == 0 && trlat_file_dir(alt, d1, sizeof d1) == 0 &&
            strcmp(d0, d1) == 0)
            snprintf(c1, sizeof c1, "the same directory");
        else
            rc = write_at(o, alt, 0, 0600, fill, arg, c1, sizeof c1);
        if (rc == 0) {
            o->fallback = 1;
            trlat_log("cannot write %s (%s); report written to %s instead", want, c0, o->path);
        } else {
            trlat_log("cannot write the report to %s (%s) nor to %s (%s); no report written", want, c0, alt, c1);
        }
    }
    if (rc == 0 && strcmp(old, o->path) != 0)
        list_append(o);
    return rc;
}
