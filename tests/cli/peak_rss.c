/* peak_rss LIMIT_KB CMD ARGS...: runs CMD under an address-space limit
 * (ulimit -v LIMIT_KB) and prints its peak resident set size in kB on
 * stderr's last line, "peak_rss KB"; exits as CMD did. Forked from this
 * small process, CMD's peak is its own (a process's peak counts what it
 * held before exec; forked from Python it would count Python). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fputs("usage: peak_rss LIMIT_KB CMD ARGS...\n", stderr);
        return 2;
    }
    rlim_t limit = (rlim_t)strtoull(argv[1], NULL, 10) * 1024;
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit as = {limit, limit};
        setrlimit(RLIMIT_AS, &as);
        execvp(argv[2], argv + 2);
        perror(argv[2]);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) {
        perror("peak_rss");
        return 2;
    }
    fprintf(stderr, "peak_rss %ld\n", ru.ru_maxrss);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
