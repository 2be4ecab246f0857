#include "report/cli/util.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void cli_one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

static _Noreturn void vfail(const char *prefix, const char *what, const char *suffix, const char *fmt, va_list ap)
{
    char msg[1024];
    int n = snprintf(msg, sizeof msg, "%s%s: ", prefix, what);
    if (n < 0 || (size_t)n >= sizeof msg)
        n = 0;
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    cli_one_line(msg);
    fflush(stdout);
    fprintf(stderr, "%s%s\n", msg, suffix);
    exit(CLI_EXIT_BAD_INPUT);
}

void cli_fail(const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail("trlat: ", what, "", fmt, ap);
}

void cli_bad_report(const char *path, const char *why, bool skip, bool others)
{
    if (!skip)
        cli_fail(path, "%s%s", why, others ? "; rerun with --skip-bad to leave it out" : "");
    char msg[1024];
    snprintf(msg, sizeof msg, "trlat: %s: %s; skipped", path, why);
    cli_one_line(msg);
    fflush(stdout);
    fprintf(stderr, "%s\n", msg);
}

void cli_usage_fail(const char *cmd, const char *fmt, ...)
{
    char suffix[64];
    snprintf(suffix, sizeof suffix, " (see trlat %s --help)", cmd);
    va_list ap;
    va_start(ap, fmt);
    vfail("trlat ", cmd, suffix, fmt, ap);
}

void cli_bad_option(const char *cmd, int ret, char **argv)
{
    const char *arg = argv[optind - 1];
    char shortopt[3] = {'-', (char)optopt, 0};
    /* optopt is the letter for short options, 0 or the val for long ones. */
    const char *name = (optopt && strncmp(arg, "--", 2) != 0) ? shortopt : arg;
    if (ret == ':')
        cli_usage_fail(cmd, "option '%s' needs a value", name);
    cli_usage_fail(cmd, "unknown option '%s'", name);
}

static const char *oom_path;
static uint64_t oom_size;

void cli_oom_context(const char *path, uint64_t size)
{
    oom_path = path;
    oom_size = size;
}

const char *cli_fmt_size(char *buf, size_t len, uint64_t bytes)
{
    if (bytes < 1000000)
        snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
    else if (bytes < 1000000000)
        snprintf(buf, len, "%.1f MB", (double)bytes / 1e6);
    else
        snprintf(buf, len, "%.2f GB", (double)bytes / 1e9);
    return buf;
}

void cli_out_of_memory(void)
{
    char size[32];
    if (oom_path)
        cli_fail(oom_path, "out of memory reading this report (%s)", cli_fmt_size(size, sizeof size, oom_size));
    fputs("trlat: out of memory\n", stderr);
    exit(CLI_EXIT_BAD_INPUT);
}

void *cli_xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        cli_out_of_memory();
    return p;
}

void *cli_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        cli_out_of_memory();
    return p;
}

void *cli_xrealloc(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        cli_out_of_memory();
    size_t bytes = n * size;
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q)
        cli_out_of_memory();
    return q;
}

char *cli_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(cli_xmalloc(n), s, n);
}

int cli_strcmp_opt(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

uint64_t cli_parse_uint(const char *cmd, const char *opt, const char *s, uint64_t max)
{
    char *end;
    errno = 0;
    unsigned long long v = (*s >= '0' && *s <= '9') ? strtoull(s, &end, 10) : 0;
    if (*s < '0' || *s > '9' || errno || *end || v > max)
        cli_usage_fail(cmd, "%s expects a whole number from 0 to %llu, not '%s'", opt, (unsigned long long)max, s);
    return v;
}

double cli_parse_pct(const char *cmd, const char *opt, const char *s)
{
    char *end;
    errno = 0;
    double v = (*s >= '0' && *s <= '9') || *s == '.' ? strtod(s, &end) : -1;
    if (v < 0 || errno || *end || !(v <= 1e9))
        cli_usage_fail(cmd, "%s expects a percentage such as 10 or 2.5, not '%s'", opt, s);
    return v;
}

int cli_parse_word(const char *cmd, const char *opt, const char *s, const char *const *words)
{
    char accepted[256] = "";
    for (int i = 0; words[i]; i++) {
        if (strcmp(s, words[i]) == 0)
            return i;
        size_t n = strlen(accepted);
        snprintf(accepted + n, sizeof accepted - n, "%s%s", i ? ", " : "", words[i]);
    }
    cli_usage_fail(cmd, "%s expects one of %s, not '%s'", opt, accepted, s);
}

FILE *cli_open_out(const char *path)
{
    if (!path || strcmp(path, "-") == 0)
        return stdout;
    FILE *f = fopen(path, "w");
    if (!f)
        cli_fail(path, "cannot write: %s", strerror(errno));
    return f;
}

void cli_close_out(FILE *f, const char *path)
{
    const char *name = (!path || strcmp(path, "-") == 0) ? "standard output" : path;
    int bad = fflush(f) != 0 || ferror(f);
    int err = errno;
    if (f != stdout && fclose(f) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (bad)
        cli_fail(name, "write error: %s", strerror(err));
}

const char *cli_parse_output_only(const char *cmd, const char *usage, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const char *outpath = NULL;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            exit(0);
        }
        if (c != 'o')
            cli_bad_option(cmd, c, argv);
        outpath = optarg;
    }
    return outpath;
}

void cli_format_error(char *err, size_t errlen, const char *path, const char *fmt, va_list ap)
{
    int n = path ? snprintf(err, errlen, "%s: ", path) : 0;
    if (n < 0 || (size_t)n >= errlen)
        n = 0;
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
}
