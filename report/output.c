#include "report/output.h"
#include "interpose/config.h"
#include "interpose/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *rank_text(char *buf, size_t len)
{
    long r = trlat_config_rank("RANK");
    if (r < 0)
        r = trlat_config_rank("LOCAL_RANK");
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

/* path with ".N" inserted before a trailing ".json" (or appended). */
static int with_suffix(const char *base, unsigned n, char *out, size_t len)
{
    size_t b = strlen(base);
    const char *ext = (b > 5 && strcmp(base + b - 5, ".json") == 0) ? ".json" : "";
    int w = snprintf(out, len, "%.*s.%u%s", (int)(b - strlen(ext)), base, n, ext);
    return (w < 0 || (size_t)w >= len) ? -1 : 0;
}

static FILE *create_at(const char *want, char *path, size_t len, int *err)
{
    for (unsigned n = 0; n < 1000; n++) {
        if (n == 0) {
            if (strlen(want) + 1 > len)
                return NULL;
            strcpy(path, want);
        } else if (with_suffix(want, n, path, len)) {
            return NULL;
        }
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0) {
            FILE *f = fdopen(fd, "w");
            if (!f)
                close(fd);
            return f;
        }
        *err = errno;
        if (errno != EEXIST)
            return NULL;
    }
    return NULL;
}

FILE *trlat_output_create(const char *tmpl, char *path, size_t len)
{
    char want[4096];
    if (trlat_output_expand(tmpl, want, sizeof want)) {
        trlat_log("TRLAT_OUTPUT=%.64s is too long; report not written", tmpl);
        return NULL;
    }
    int err = 0;
    FILE *f = create_at(want, path, len, &err);
    if (f)
        return f;
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !*tmpdir)
        tmpdir = "/tmp";
    const char *base = strrchr(want, '/');
    base = base ? base + 1 : want;
    char alt[4096];
    int first_err = err;
    if ((size_t)snprintf(alt, sizeof alt, "%s/%s", tmpdir, base) < sizeof alt &&
        (f = create_at(alt, path, len, &err))) {
        trlat_log("cannot write %s (%s); report written to %s instead", want, strerror(first_err), path);
        return f;
    }
    trlat_log("cannot write the report to %s (%s); no report written", want, strerror(first_err));
    return NULL;
}
