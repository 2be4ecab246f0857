/* trlat merge FILE... -o OUT: one report from the reports of many ranks or
 * processes (report/cli/merger.c merges). Each input is read, folded in
 * and let go before the next, so memory does not grow with their number;
 * their events are read again, one input at a time, as the output is
 * written. */
#include "report/cli/cli.h"
#include "report/cli/fmt.h"
#include "report/cli/util.h"

#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] = "usage: trlat merge FILE... -o OUT [--skip-bad]\n"
                                 "\n"
                                 "Combines reports of many processes (e.g. all ranks of a torchrun job) into one\n"
                                 "trlat-report/1 document that report, diff, trace and merge read again.\n"
                                 "Kernels are matched by name; counts, sums and histograms are added and the\n"
                                 "percentiles recomputed from the merged histograms. \"merged_from\" lists the\n"
                                 "processes; events are kept, each with its process's \"pid\". Launch errors,\n"
                                 "the Python hook's call counts and the GPU counters are summed (GPU devices:\n"
                                 "the most any input saw).\n"
                                 "\n"
                                 "  -o, --output OUT  where to write the merged report ('-': standard output)\n"
                                 "  --skip-bad        leave out a report that cannot be read (truncated, invalid),\n"
                                 "                    saying which and why, instead of stopping; fails only when\n"
                                 "                    none is left\n";

enum { OPT_SKIP_BAD = 256 };

struct input {
    const char *path;
    bool has_events;
};

/* The events of every input, read again as they are written. */
struct writer {
    const struct input *in;
    size_t n;
    const struct cli_report *stdin_report; /* standard input cannot be read twice: kept */
    const char *outpath;
};

/* An input that no longer reads as it did: the output is incomplete. */
static _Noreturn void fail_writing(const struct writer *w, const char *path, const char *err)
{
    if (w->outpath && strcmp(w->outpath, "-") != 0)
        unlink(w->outpath);
    cli_fail(path, "%s (reading its events again to write the merged report)", err);
}

static int write_events(FILE *f, void *ctx)
{
    const struct writer *w = ctx;
    size_t n = 0;
    char err[512];
    for (size_t i = 0; i < w->n; i++) {
        if (!w->in[i].has_events)
            continue;
        struct cli_report again;
        const struct cli_report *r = w->stdin_report;
        if (strcmp(w->in[i].path, "-") != 0) {
            if (cli_load_path(&again, w->in[i].path, CLI_LOAD_EVENTS_LATER, err, sizeof err) != 0)
                fail_writing(w, w->in[i].path, err);
            r = &again;
        }
        if (cli_merge_events(f, r, &n, err, sizeof err) != 0)
            fail_writing(w, w->in[i].path, err);
        if (r == &again)
            cli_report_free(&again);
    }
    cli_json_items_end(f, n);
    return 0;
}

static const char *parse(int argc, char **argv, bool *skip_bad)
{
    static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                             {"skip-bad", no_argument, NULL, OPT_SKIP_BAD},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *outpath = NULL;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage_text, stdout);
            exit(0);
        }
        if (c == OPT_SKIP_BAD)
            *skip_bad = true;
        else if (c == 'o')
            outpath = optarg;
        else
            cli_bad_option("merge", c, argv);
    }
    if (optind >= argc)
        cli_usage_fail("merge", "no report files given");
    if (!outpath)
        cli_usage_fail("merge", "no output given (-o OUT)");
    return outpath;
}

int cli_merge_main(int argc, char **argv)
{
    bool skip_bad = false;
    const char *outpath = parse(argc, argv, &skip_bad);
    size_t n = (size_t)(argc - optind), good = 0;
    struct input *in = cli_xcalloc(n, sizeof *in);
    struct cli_merger *m = cli_merger_new();
    struct cli_report stdin_report = {.text.fd = -1};
    char err[512];
    for (size_t i = 0; i < n; i++) {
        const char *path = argv[optind + (int)i];
        struct cli_report r;
        if (cli_load_path(&r, path, 0, err, sizeof err) != 0) {
            cli_bad_report(path, err, skip_bad, n > 1);
            continue;
        }
        cli_merger_add(m, &r);
        in[good++] = (struct input){path, r.n_events > 0};
        if (strcmp(path, "-") == 0 && !stdin_report.json)
            stdin_report = r;
        else
            cli_report_free(&r);
    }
    if (good == 0)
        cli_fail("merge", "no report left to merge (%zu skipped)", n);
    struct cli_report merged;
    int rc = cli_merger_finish(m, &merged, err, sizeof err);
    if (rc == 0) {
        json_t *doc = cli_report_to_json(&merged);
        struct writer w = {in, good, &stdin_report, outpath};
        FILE *f = cli_open_out(outpath);
        cli_json_dump_with(f, doc, "events", write_events, &w);
        cli_close_out(f, outpath);
        json_decref(doc);
        cli_report_free(&merged);
    } else {
        fprintf(stderr, "trlat: %s\n", err);
    }
    cli_report_free(&stdin_report);
    cli_merger_free(m);
    free(in);
    return rc == 0 ? 0 : CLI_EXIT_BAD_INPUT;
}
