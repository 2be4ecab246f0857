#include "interpose/safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

int trlat_file_dir(const char *path, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 1;
    if (slash && n == 0)
        n = 1; /* "/x": the root */
    if (n + 1 > len)
        return -1;
    memcpy(out, slash ? path : ".", n);
    out[n] = 0;
    return 0;
}

static const char *kind_refused(mode_t m)
{
    return S_ISCHR(m)    ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISSOCK(m) ? "a socket"
           : S_ISDIR(m)  ? "a directory"
                         : NULL;
}

const char *trlat_file_refused(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && kind_refused(st.st_mode))
        return kind_refused(st.st_mode);
    /* /dev/stdout is a symlink to whatever fd 1 is, a regular file too:
     * the kernel's directories never take a file of trlat's */
    char dir[PATH_MAX], real[PATH_MAX];
    struct statfs fs;
    if (trlat_file_dir(path, dir, sizeof dir) != 0)
        return NULL;
    if (realpath(dir, real) && strcmp(real, "/dev") == 0)
        return "a file in /dev";
    if (statfs(dir, &fs) == 0 && (fs.f_type == PROC_SUPER_MAGIC || fs.f_type == SYSFS_MAGIC))
        return "a file in /proc or /sys";
    return NULL;
}

int trlat_file_numbered(const char *path, unsigned n, char *out, size_t len)
{
    size_t b = strlen(path);
    if (n == 0) {
        if (b + 1 > len)
            return -1;
        memcpy(out, path, b + 1);
        return 0;
    }
    const char *ext = (b > 5 && strcmp(path + b - 5, ".json") == 0) ? ".json" : "";
    int w = snprintf(out, len, "%.*s.%u%s", (int)(b - strlen(ext)), path, n, ext);
    return (w < 0 || (size_t)w >= len) ? -1 : 0;
}

int trlat_file_append(const char *path, mode_t mode, const char **why)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        *why = "a symbolic link, not followed";
        return -1;
    }
    if ((*why = trlat_file_refused(path)))
        return -1;
    /* O_NONBLOCK: a FIFO swapped in since lstat must not block the open */
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode);
    if (fd < 0) {
        *why = strerror(errno);
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        *why = "not a regular file";
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

int trlat_file_temp(const char *dir, mode_t mode, char *tmp, size_t len)
{
    static unsigned counter;
    for (int tries = 0; tries < 64; tries++) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        uint32_t r = (uint32_t)t.tv_nsec * 2654435761u ^ (uint32_t)t.tv_sec ^ (++counter * 40503u);
        int w = snprintf(tmp, len, "%s/.trlat-%d-%08x.json.tmp", dir, (int)getpid(), r);
        if (w < 0 || (size_t)w >= len) {
            errno = ENAMETOOLONG;
            return -1;
        }
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST)
            return fd;
    }
    return -1;
}

static int rename_noreplace(const char *from, const char *to)
{
#if defined(RENAME_NOREPLACE)
    return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE);
#elif defined(SYS_renameat2)
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 1 /* RENAME_NOREPLACE */);
#else
    errno = ENOSYS;
    return -1;
#endif
}

/* The filesystem (or kernel, or a seccomp filter) has no such operation. */
static int unsupported(int e)
{
    return e == EINVAL || e == ENOSYS || e == EOPNOTSUPP || e == ENOTSUP || e == EPERM || e == EMLINK;
}

enum { BY_RENAME, BY_LINK, BY_PLACEHOLDER };

static int publish_as(int how, const char *tmp, const char *to)
{
    if (how == BY_RENAME)
        return rename_noreplace(tmp, to);
    if (how == BY_LINK) {
        if (link(tmp, to) != 0)
            return -1;
        unlink(tmp);
        return 0;
    }
    /* O_EXCL takes the name; the rename then replaces only that empty file */
    int fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    close(fd);
    if (rename(tmp, to) == 0)
        return 0;
    int e = errno;
    unlink(to);
    errno = e == EEXIST ? EIO : e; /* not "taken": the next name would fail alike */
    return -1;
}

int trlat_file_publish(const char *tmp, const char *want, char *out, size_t len)
{
    int how = BY_RENAME;
    for (unsigned n = 0; n < 1000; n++) {
        if (trlat_file_numbered(want, n, out, len)) {
            errno = ENAMETOOLONG;
            return -1;
        }
        for (;;) {
            if (publish_as(how, tmp, out) == 0)
                return 0;
            if (errno == EEXIST)
                break;
            if (how == BY_PLACEHOLDER || !unsupported(errno))
                return -1;
            how++;
        }
    }
    errno = EEXIST;
    return -1;
}
