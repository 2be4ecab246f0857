/* trlat: the command-line tool. Dispatches to one file per subcommand. */
#include "report/cli/cli.h"
#include "report/cli/util.h"

#include <stdio.h>
#include <string.h>

struct command {
    const char *name;
    int (*main)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"run", cli_run_main, "run a command with libtrlat.so preloaded; say where the report went"},
    {"report", cli_report_main, "show a report: text, csv, json or a self-contained html page"},
    {"diff", cli_diff_main, "compare two reports; exit 1 when launch overhead regressed"},
    {"merge", cli_merge_main, "combine the reports of many processes or ranks into one"},
    {"trace", cli_trace_main, "turn a report's per-launch events into a Chrome/Perfetto trace"},
};

static void usage(FILE *f)
{
    fputs("usage: trlat COMMAND [ARGS...]\n"
          "\n"
          "Profiles CUDA kernel launch latency (with libtrlat.so) and reads the\n"
          "trlat-report/1 files it writes.\n"
          "\n"
          "commands:\n",
          f);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fputs("\n"
          "'trlat COMMAND --help' shows a command's options; 'trlat --version' the version.\n"
          "Exit status: 2 for bad input or usage; diff: 1 when a figure regressed;\n"
          "run: the command's own status.\n",
          f);
}

static const struct command *find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_BAD_INPUT;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("trlat %s\n", TRLAT_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0 && argc > 2 && find(argv[2])) {
        char *help_argv[] = {argv[2], "--help", NULL};
        return find(argv[2])->main(2, help_argv);
    }
    const struct command *c = find(cmd);
    if (!c)
        cli_fail(cmd, "unknown command (commands: run, report, diff, merge, trace; see trlat --help)");
    return c->main(argc - 1, argv + 1);
}
