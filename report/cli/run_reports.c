/* Which reports `trlat run`'s command wrote. The library appends the path
 * of each report it writes to the file TRLAT_REPORT_LIST names, wherever
 * the report went (a ".N" name, the $TMPDIR fallback, a directory the
 * program changed to); without a list (a library from before it), the
 * files matching TRLAT_OUTPUT's pattern that appeared or changed. */
#include "report/cli/run.h"
#include "report/cli/util.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REPORTS_LISTED 4
#define LIST_NAME "reports"

/* ---- the pattern's files ---- */

/* The output pattern as a glob: %p, %r, %h (any %x) match anything. */
static char *pattern_glob(const char *pattern)
{
    char *g = cli_xmalloc(2 * strlen(pattern) + 2), *p = g;
    for (const char *s = pattern; *s; s++) {
        if (*s == '%' && s[1]) {
            s++;
            if (*s == '%')
                *p++ = '%';
            else if (p == g || p[-1] != '*')
                *p++ = '*';
            continue;
        }
        if (strchr("*?[\\", *s))
            *p++ = '\\';
        *p++ = *s;
    }
    *p = 0;
    return g;
}

struct snapshot {
    glob_t g;
    struct timespec *mtime;
};

static void take(struct snapshot *s, const char *glob_pattern)
{
    memset(s, 0, sizeof *s);
    if (glob(glob_pattern, 0, NULL, &s->g) != 0)
        s->g.gl_pathc = 0;
    s->mtime = cli_xcalloc(s->g.gl_pathc, sizeof *s->mtime);
    for (size_t i = 0; i < s->g.gl_pathc; i++) {
        struct stat st;
        if (stat(s->g.gl_pathv[i], &st) == 0)
            s->mtime[i] = st.st_mtim;
    }
}

static void drop(struct snapshot *s)
{
    if (s->g.gl_pathv)
        globfree(&s->g);
    free(s->mtime);
}

/* New since before: absent then, or written since. */
static bool is_new(const struct snapshot *before, const struct snapshot *after, size_t i)
{
    for (size_t j = 0; j < before->g.gl_pathc; j++)
        if (strcmp(before->g.gl_pathv[j], after->g.gl_pathv[i]) == 0)
            return before->mtime[j].tv_sec != after->mtime[i].tv_sec ||
                   before->mtime[j].tv_nsec != after->mtime[i].tv_nsec;
    return true;
}

/* Those matching the pattern that appeared or changed. */
static size_t new_files(const struct snapshot *before, const struct snapshot *after, char ***out)
{
    size_t n = 0;
    *out = cli_xcalloc(after->g.gl_pathc, sizeof **out);
    for (size_t i = 0; i < after->g.gl_pathc; i++)
        if (is_new(before, after, i))
            (*out)[n++] = cli_xstrdup(after->g.gl_pathv[i]);
    return n;
}

/* ---- the list ---- */

struct cli_run_reports {
    const char *pattern;
    char *glob;
    struct snapshot before;
    char *dir, *list; /* NULL when no directory could be made */
};

/* A private directory under $TMPDIR (else /tmp), its real path. */
static char *make_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    for (int i = 0; i < 2; i++, tmp = "/tmp") {
        if (!tmp || !*tmp)
            continue;
        size_t len = strlen(tmp) + 32;
        char *dir = cli_xmalloc(len);
        snprintf(dir, len, "%s/trlat-run-XXXXXX", tmp);
        char *real = mkdtemp(dir) ? realpath(dir, NULL) : NULL;
        if (real) {
            free(dir);
            return real;
        }
        free(dir);
    }
    return NULL;
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The listed paths, each once, in the order listed; *listed counts those
 * listed, the files that exist are returned. */
static size_t read_list(const char *list, char ***out, size_t *listed, char **gone)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    *listed = 0;
    *gone = NULL;
    FILE *f = list ? fopen(list, "r") : NULL;
    if (!f)
        return 0;
    char *line = NULL;
    size_t len = 0;
    ssize_t got;
    while ((got = getline(&line, &len, f)) > 0) {
        if (line[got - 1] == '\n')
            line[--got] = 0;
        if (!got)
            continue;
        (*listed)++;
        bool seen = false;
        for (size_t i = 0; i < n && !seen; i++)
            seen = strcmp((*out)[i], line) == 0;
        if (seen)
            continue;
        if (!is_file(line)) {
            if (!*gone)
                *gone = cli_xstrdup(line);
            continue;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            *out = cli_xrealloc(*out, cap, sizeof **out);
        }
        (*out)[n++] = cli_xstrdup(line);
    }
    free(line);
    fclose(f);
    return n;
}

/* path, relative to the working directory when inside it. */
static const char *shown(const char *path, const char *cwd)
{
    size_t n = strlen(cwd);
    if (n > 1 && strncmp(path, cwd, n) == 0 && path[n] == '/')
        return path + n + 1;
    return path;
}

static void tell(char **paths, size_t n, const char *matching)
{
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = 0;
    if (n == 1) {
        fprintf(stderr, "trlat run: report written to %s\n", shown(paths[0], cwd));
        return;
    }
    fprintf(stderr, "trlat run: %zu reports%s%s written:", n, matching ? " matching " : "", matching ? matching : "");
    for (size_t i = 0; i < n && i < REPORTS_LISTED; i++)
        fprintf(stderr, "%s %s", i ? "," : "", shown(paths[i], cwd));
    fprintf(stderr, "%s (combine them with trlat merge)\n", n > REPORTS_LISTED ? ", ..." : "");
}

struct cli_run_reports *cli_run_reports_begin(const char *pattern)
{
    struct cli_run_reports *w = cli_xcalloc(1, sizeof *w);
    w->pattern = pattern;
    w->glob = pattern_glob(pattern);
    take(&w->before, w->glob);
    w->dir = make_dir();
    if (!w->dir) {
        fprintf(stderr,
                "trlat run: cannot make a temporary directory in $TMPDIR or /tmp (%s); "
                "looking for reports matching %s only\n",
                strerror(errno), pattern);
        unsetenv("TRLAT_REPORT_LIST");
        return w;
    }
    size_t len = strlen(w->dir) + sizeof "/" LIST_NAME;
    w->list = cli_xmalloc(len);
    snprintf(w->list, len, "%s/" LIST_NAME, w->dir);
    if (setenv("TRLAT_REPORT_LIST", w->list, 1) != 0)
        cli_fail("run", "cannot set TRLAT_REPORT_LIST: %s", strerror(errno));
    return w;
}

void cli_run_reports_end(struct cli_run_reports *w)
{
    char **paths, *gone;
    size_t listed, n = read_list(w->list, &paths, &listed, &gone);
    if (n) {
        tell(paths, n, NULL);
    } else if (listed) {
        fprintf(stderr, "trlat run: no report appeared (%zu listed in TRLAT_REPORT_LIST, none there now: %s)\n", listed,
                gone);
    } else {
        struct snapshot after;
        take(&after, w->glob);
        free(paths);
        n = new_files(&w->before, &after, &paths);
        drop(&after);
        if (n)
            tell(paths, n, w->pattern);
        else
            fprintf(stderr, "trlat run: no report matching %s appeared\n", w->pattern);
    }
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    free(gone);
    if (w->dir) {
        unlink(w->list);
        rmdir(w->dir);
    }
    drop(&w->before);
    free(w->glob);
    free(w->list);
    free(w->dir);
    free(w);
}
