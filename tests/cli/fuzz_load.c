/* libFuzzer target for the report loader and everything fed by it: each
 * input that loads is rendered in every form, traced, merged with itself,
 * and the merged document must load again. A rejected input must come
 * with a one-line message. Built and run by tests/cli/run.sh:
 *   clang -fsanitize=fuzzer,address,undefined -I. tests/cli/fuzz_load.c
 *         report/cli_*.c (but cli_main.c) -ljansson -lm */
#include "report/cli.h"
#include "report/cli_load.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static FILE *sink;

static void check_message(const char *err)
{
    if (!err[0] || strchr(err, '\n'))
        abort();
}

static void render_all(const struct cli_report *r)
{
    static const enum cli_sort sorts[] = {CLI_SORT_HOST, CLI_SORT_STARVED};
    for (size_t i = 0; i < sizeof sorts / sizeof sorts[0]; i++) {
        struct cli_view v;
        cli_view_init(&v, r, sorts[i], i ? 2 : 0);
        cli_render_text(sink, &v);
        cli_render_csv(sink, &v);
        cli_render_json(sink, &v);
        cli_render_html(sink, &v);
        cli_view_free(&v);
    }
    if (r->n_events)
        cli_render_trace(sink, r);
}

/* Merging a report with itself must give a document that loads again. */
static void merge_round_trip(const struct cli_report *r)
{
    const struct cli_report *in[2] = {r, r};
    struct cli_report m, again;
    char err[512];
    if (cli_merge(in, 2, &m, err, sizeof err) != 0) {
        check_message(err);
        return;
    }
    json_t *doc = cli_report_to_json(&m);
    char *text = json_dumps(doc, JSON_COMPACT);
    if (!text || cli_load_buffer(&again, "merged", text, strlen(text), err, sizeof err) != 0) {
        fprintf(stderr, "merged report does not load again: %s\n", text ? err : "no text");
        abort();
    }
    cli_report_free(&again);
    free(text);
    json_decref(doc);
    cli_report_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!sink && !(sink = fopen("/dev/null", "w")))
        abort();
    struct cli_report r;
    char err[512];
    if (cli_load_buffer(&r, "fuzz.json", (const char *)data, size, err, sizeof err) != 0) {
        check_message(err);
        return 0;
    }
    render_all(&r);
    merge_round_trip(&r);
    cli_report_free(&r);
    return 0;
}
