/* trlat run [OPTIONS] -- CMD ARGS...: runs CMD with libtrlat.so preloaded
 * and the TRLAT_* variables set, passes SIGINT, SIGTERM and SIGHUP on to
 * it, says where the report went (report/cli/run_reports.c) and ends as
 * CMD ended: its exit status, or killed by the same signal. */
#include "interpose/format.h"
#include "report/cli/cli.h"
#include "report/cli/run.h"
#include "report/cli/util.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LIB_NAME "libtrlat.so"
#define DEFAULT_OUTPUT "trlat-%p.json"

static const char usage_text[] =
    "usage: trlat run [--fastpath[=on|verify]] [--cupti=on|off|auto] [--stacks] [--trace=N]\n"
    "                 [--timing=all|sampled|none|auto] [-o PATTERN] -- CMD ARGS...\n"
    "\n"
    "Runs CMD with libtrlat.so preloaded (found next to trlat, or in ../lib when\n"
    "installed; existing LD_PRELOAD entries are kept; NVTX_INJECTION64_PATH is\n"
    "pointed at it when unset, so that NVTX ranges are regions), passes SIGINT,\n"
    "SIGTERM and SIGHUP on to it and says which reports it wrote (the library\n"
    "lists them in TRLAT_REPORT_LIST, a file in a private temporary directory;\n"
    "without a list, the files matching the output pattern that appeared). Exits\n"
    "with CMD's status; when a signal killed CMD, says so and ends by the same\n"
    "signal (a shell shows 128+N).\n"
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
    /* NVTX ranges become regions (interpose/nvtx.c), unless a tool of
     * its own was named */
    const char *nvtx = getenv("NVTX_INJECTION64_PATH");
    if (!nvtx || !*nvtx)
        set_env("NVTX_INJECTION64_PATH", lib);
    free(lib);
}

/* ---- running ---- */

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP};
#define N_FORWARDED (sizeof forwarded / sizeof forwarded[0])

static volatile sig_atomic_t child_pid;

/* A signal sent to trlat run goes on to the command. One the kernel sent
 * (a terminal's ^C or hangup, to its whole foreground process group) has
 * reached the command already: sent again it would arrive twice. */
static void forward(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    if (si->si_code != SI_KERNEL && child_pid > 0)
        kill((pid_t)child_pid, sig);
}

static _Noreturn void exec_child(char **cmd, pid_t parent)
{
    /* Should trlat run itself be killed (SIGKILL), the command is told. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(128 + SIGTERM);
    execvp(cmd[0], cmd);
    int err = errno;
    fprintf(stderr, "trlat run: %s: %s\n", cmd[0], strerror(err));
    _exit(err == ENOENT ? 127 : 126);
}

/* Runs cmd and waits for it; its wait status. */
static int run_child(char **cmd)
{
    sigset_t block, old_mask;
    sigemptyset(&block);
    for (size_t i = 0; i < N_FORWARDED; i++)
        sigaddset(&block, forwarded[i]);
    /* Blocked until the handlers are in: one sent meanwhile waits, then goes on. */
    sigprocmask(SIG_BLOCK, &block, &old_mask);
    fflush(NULL);
    pid_t parent = getpid(), pid = fork();
    if (pid < 0)
        cli_fail("run", "cannot start %s: %s", cmd[0], strerror(errno));
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        exec_child(cmd, parent);
    }
    child_pid = pid;
    struct sigaction fwd = {.sa_sigaction = forward, .sa_flags = SA_SIGINFO | SA_RESTART};
    struct sigaction ign = {.sa_handler = SIG_IGN}, old[N_FORWARDED], old_quit;
    sigemptyset(&fwd.sa_mask);
    for (size_t i = 0; i < N_FORWARDED; i++) {
        sigaction(forwarded[i], NULL, &old[i]);
        if (old[i].sa_handler != SIG_IGN) /* ignored when trlat started (nohup): the command ignores it too */
            sigaction(forwarded[i], &fwd, NULL);
    }
    /* Like a shell waiting for a foreground job: ^\ is for the child. */
    sigaction(SIGQUIT, &ign, &old_quit);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            cli_fail("run", "waiting for %s: %s", cmd[0], strerror(errno));
    child_pid = 0;
    for (size_t i = 0; i < N_FORWARDED; i++)
        sigaction(forwarded[i], &old[i], NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    return status;
}

/* Ends trlat run by sig, as the command ended; 128+sig when that signal
 * cannot end it. */
static _Noreturn void die_by(int sig)
{
    /* No core file of trlat's beside (or over) the command's. */
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    fflush(NULL);
    raise(sig);
    _exit(128 + sig);
}

static void parse(int argc, char **argv, struct options *o)
{
    /* the on/off words every TRLAT_ variable takes (interpose/config.c) */
    static const char *const fastpath_words[] = {"on", "1", "true", "verify", "off", "0", "false", NULL};
    static const char *const fastpath_env[] = {"1", "1", "1", "verify", "0", "0", "0"};
    static const char *const cupti_words[] = {"on", "off", "auto", "1", "0", "true", "false", NULL};
    static const char *const cupti_env[] = {"1", "0", "auto", "1", "0", "1", "0"};
    static const char *const timing_words[] = {"all", "sampled", "none", "auto", NULL};
    static const struct option longopts[] = {
        {"fastpath", optional_argument, NULL, 'f'}, {"cupti", required_argument, NULL, 'c'},
        {"stacks", no_argument, NULL, 's'},         {"trace", required_argument, NULL, 't'},
        {"timing", required_argument, NULL, 'm'},   {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
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
    if (WIFSIGNALED(status))
        fprintf(stderr, "trlat run: %s was killed by signal %d (%s)%s\n", o.cmd[0], WTERMSIG(status),
                strsignal(WTERMSIG(status)), WCOREDUMP(status) ? ", core dumped" : "");
    cli_run_reports_end(w);
    if (WIFSIGNALED(status))
        die_by(WTERMSIG(status));
    return WEXITSTATUS(status);
}
