/* A preloaded library making file I/O fail or crawl, for the tests of how
 * trlat writes its files (test_output_safety.sh). Only files whose path
 * contains $FAULTY_PATH are touched:
 *   FAULTY_ENOSPC_AFTER=N  write() fails with ENOSPC once N bytes went there
 *   FAULTY_WRITE_MS=N      each write() there sleeps N ms first
 *   FAULTY_FSYNC_EIO=1     fsync() there fails with EIO
 *   FAULTY_NO_RENAMEAT2=1  renameat2() fails with EINVAL (as on a filesystem
 *                          without RENAME_NOREPLACE)
 *   FAULTY_NO_LINK=1       link() fails with EPERM (as on vfat)
 *   FAULTY_CALLS=FILE      each renameat2() and link() call appends a line
 *                          there: "renameat2 refused", "link 0", ...
 * The real calls are made as system calls: no dlsym in a process whose
 * dlsym trlat interposes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long env_long(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? atol(v) : -1;
}

static int faulty_fd(int fd)
{
    const char *want = getenv("FAULTY_PATH");
    char link[64], path[4096];
    if (!want || !*want)
        return 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return 0;
    path[n] = 0;
    return strstr(path, want) != NULL;
}

static long written;

ssize_t write(int fd, const void *buf, size_t count)
{
    if (faulty_fd(fd)) {
        long ms = env_long("FAULTY_WRITE_MS"), after = env_long("FAULTY_ENOSPC_AFTER");
        if (ms > 0) {
            struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
            nanosleep(&t, NULL);
        }
        if (after >= 0) {
            if (written >= after) {
                errno = ENOSPC;
                return -1;
            }
            if ((long)count > after - written)
                count = (size_t)(after - written);
        }
        ssize_t w = syscall(SYS_write, fd, buf, count);
        if (w > 0)
            written += w;
        return w;
    }
    return syscall(SYS_write, fd, buf, count);
}

int fsync(int fd)
{
    if (faulty_fd(fd) && env_long("FAULTY_FSYNC_EIO") == 1) {
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_fsync, fd);
}

static int called(const char *what, int refused, int rc)
{
    const char *calls = getenv("FAULTY_CALLS");
    if (calls && *calls) {
        int e = errno, fd = (int)syscall(SYS_openat, AT_FDCWD, calls, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        char line[64];
        int n = snprintf(line, sizeof line, "%s %s\n", what, refused ? "refused" : rc == 0 ? "0" : strerror(e));
        if (fd >= 0) {
            syscall(SYS_write, fd, line, (size_t)n);
            syscall(SYS_close, fd);
        }
        errno = e;
    }
    return rc;
}

int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags)
{
    if (env_long("FAULTY_NO_RENAMEAT2") == 1) {
        errno = EINVAL;
        return called("renameat2", 1, -1);
    }
    return called("renameat2", 0, (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags));
}

int link(const char *oldpath, const char *newpath)
{
    if (env_long("FAULTY_NO_LINK") == 1) {
        errno = EPERM;
        return called("link", 1, -1);
    }
    return called("link", 0, (int)syscall(SYS_linkat, AT_FDCWD, oldpath, AT_FDCWD, newpath, 0));
}
