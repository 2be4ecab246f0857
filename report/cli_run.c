/* trlat run [OPTIONS] -- CMD ARGS...: runs CMD with libtrlat.so preloaded
 * and the TRLAT_* variables set, returns CMD's exit status and says where
 * the reports went (report/cli_run_reports.c). */
#include "interpose/config.h"
#include "report/cli.h"
#include "report/cli_run.h"
#include "report/cli_util.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LIB_NAME "libtrlat.so"
#define DEFAULT_OUTPUT "trlat-%p.json"

static const char usage_text[] =
    "usage: trlat run [--fastpath[=verify]] [--cupti=on|off|auto] [--stacks] [--trace=N]\n"
    "                 [--timing=all|sampled|none|auto] [-o PATTERN] -- CMD ARGS...\n"
    "\n"
    "Runs CMD with libtrlat.so preloaded (found next to trlat, or in ../lib when\n"
    "installed; existing LD_PRELOAD entries are kept), exits with CMD's status\n"
    "(128+N when a signal N killed it) and says which reports it wrote (the library\n"
    "lists them in TRLAT_REPORT_LIST, a file in a private temporary directory;\n"
    "without a list, the files matching the output pattern that appeared).\n"
    "\n"
    "  --fastpath[=on|verify]  memoize Triton launches (TRLAT_FASTPATH=1 or verify)\n"
    "  --cupti=on|off|auto     GPU timing through CUPTI (TRLAT_CUPTI; default auto)\n"
    "  --stacks                native call sites (TRLAT_STACKS=1)\n"
    "  --trace=N               keep the last N launches as events (TRLAT_TRACE=N),\n"
    "                          for 'trlat trace'\n"
    "  --timing=all|sampled|none|auto\n"
    "                          sampled: fast-path hits timed 1 in 16 (the default with --fastpath=on);\n"
    "                          none: count launches without timing them (TRLAT_TIMING)\n"
    "  -o, --output PATTERN    report path: %p pid, %r rank, %h host\n"
    "                          (TRLAT_OUTPUT; default trlat-%p.json)\n";

/* ---- finding the library ---- */

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* LIB_NAME beside the executable (build tree), else in ../lib (installed). */
static char *find_library(void)
{
    char self[PATH_MAX], dir[PATH_MAX], candidate[2][PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        cli_fail("run", "cannot find the trlat executable (/proc/self/exe): %s", strerror(errno));
    self[n] = 0;
    snprintf(dir, sizeof dir, "%s", dirname(self));
    snprintf(candidate[0], sizeof candidate[0], "%s/" LIB_NAME, dir);
    snprintf(candidate[1], sizeof candidate[1], "%s/../lib/" LIB_NAME, dir);
    for (int i = 0; i < 2; i++) {
        char *real = is_file(candidate[i]) ? realpath(candidate[i], NULL) : NULL;
        if (real)
            return real;
    }
    cli_fail("run", "cannot find " LIB_NAME " (looked for %s and %s)", candidate[0], candidate[1]);
}

/* ---- environment ---- */

struct options {
    const char *fastpath, *cupti, *stacks, *trace, *timing, *output;
    char **cmd;
};

static void set_env(const char *name, const char *value)
{
    if (value && setenv(name, value, 1) != 0)
        cli_fail("run", "cannot set %s: %s", name, strerror(errno));
}

/* LD_PRELOAD with lib first and every entry already there kept. */
static void set_preload(const char *lib)
{
    const char *old = getenv("LD_PRELOAD");
    if (!old || !*old) {
        set_env("LD_PRELOAD", lib);
        return;
    }
    size_t len = strlen(lib) + strlen(old) + 2;
    char *v = cli_xmalloc(len);
    snprintf(v, len, "%s:%s", lib, old);
    set_env("LD_PRELOAD", v);
    free(v);
}

static void apply(const struct options *o)
{
    set_env("TRLAT_FASTPATH", o->fastpath);
    set_env("TRLAT_CUPTI", o->cupti);
    set_env("TRLAT_STACKS", o->stacks);
    set_env("TRLAT_TRACE", o->trace);
    set_env("TRLAT_TIMING", o->timing);
    set_env("TRLAT_OUTPUT", o->output);
    char *lib = find_library();
    set_preload(lib);
    free(lib);
}

/* ---- running ---- */

static _Noreturn void exec_child(char **cmd)
{
    execvp(cmd[0], cmd);
    int err = errno;
    fprintf(stderr, "trlat run: %s: %s\n", cmd[0], strerror(err));
    _exit(err == ENOENT ? 127 : 126);
}

/* The child's status as a shell reports it. */
static int run_child(char **cmd)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        cli_fail("run", "cannot start %s: %s", cmd[0], strerror(errno));
    if (pid == 0)
        exec_child(cmd);
    /* Like a shell waiting for a foreground job: ^C and ^\ are for the child. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            cli_fail("run", "waiting for %s: %s", cmd[0], strerror(errno));
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static void parse(int argc, char **argv, struct options *o)
{
    static const char *const fastpath_words[] = {"on", "1", "verify", "off", "0", NULL};
    static const char *const fastpath_env[] = {"1", "1", "verify", "0", "0"};
    static const char *const cupti_words[] = {"on", "off", "auto", "1", "0", NULL};
    static const char *const cupti_env[] = {"1", "0", "auto", "1", "0"};
    static const char *const timing_words[] = {"all", "sampled", "none", "auto", NULL};
    static const struct option longopts[] = {{"fastpath", optional_argument, NULL, 'f'},
                                             {"cupti", required_argument, NULL, 'c'},
                                             {"stacks", no_argument, NULL, 's'},
                                             {"trace", required_argument, NULL, 't'},
                                             {"timing", required_argument, NULL, 'm'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c;
    opterr = 0;
    /* '+': options end at CMD, whose own options are its business. */
    while ((c = getopt_long(argc, argv, "+:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            o->fastpath = optarg ? fastpath_env[cli_parse_word("run", "--fastpath", optarg, fastpath_words)] : "1";
            break;
        case 'c':
            o->cupti = cupti_env[cli_parse_word("run", "--cupti", optarg, cupti_words)];
            break;
        case 's':
            o->stacks = "1";
            break;
        case 't':
            cli_parse_uint("run", "--trace", optarg, TRLAT_TRACE_MAX);
            o->trace = optarg;
            break;
        case 'm':
            o->timing = timing_words[cli_parse_word("run", "--timing", optarg, timing_words)];
            break;
        case 'o':
            if (!*optarg)
                cli_usage_fail("run", "-o expects a path pattern");
            o->output = optarg;
            break;
        case 'h':
            fputs(usage_text, stdout);
            exit(0);
        default:
            cli_bad_option("run", c, argv);
        }
    }
    if (optind >= argc)
        cli_usage_fail("run", "no command given (trlat run [OPTIONS] -- CMD ARGS...)");
    o->cmd = argv + optind;
}

int cli_run_main(int argc, char **argv)
{
    struct options o = {0};
    parse(argc, argv, &o);
    apply(&o);
    const char *pattern = getenv("TRLAT_OUTPUT");
    if (!pattern || !*pattern)
        pattern = DEFAULT_OUTPUT;
    struct cli_run_reports *w = cli_run_reports_begin(pattern);
    int status = run_child(o.cmd);
    cli_run_reports_end(w);
    return status;
}
