/* libFuzzer target for the report loader and everything fed by it: each
 * input that loads is rendered in every form, traced, merged with itself,
 * and the merged document must load again. A rejected input must come
 * with a one-line message. Built and run by tests/cli/run.sh:
 *   clang -fsanitize=fuzzer,address,undefined -I. tests/cli/fuzz_load.c
 *         report/cli_*.c (but cli_main.c) -ljansson -lm
 * Each input is loaded from memory and again from a file, read through a
 * window of CLI_TEXT_WINDOW bytes (run.sh builds this with 16): both must
 * give the same. */
#include "report/cli/cli.h"
#include "report/cli/fmt.h"
#include "report/cli/load.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
    char err[512];
    struct cli_trace *t = cli_trace_index(r, err, sizeof err);
    if (!t || (cli_trace_events(t) && cli_trace_write(t, sink, err, sizeof err) != 0))
        abort(); /* its events were read once already, when it loaded */
    cli_trace_free(t);
}

/* The events of the report merged with itself: its own, twice. */
static int write_events(FILE *f, void *ctx)
{
    const struct cli_report *r = ctx;
    size_t n = 0;
    char err[512];
    for (int i = 0; i < 2; i++)
        if (cli_merge_events(f, r, &n, err, sizeof err) != 0)
            abort();
    cli_json_items_end(f, n);
    return 0;
}

/* The merge of r with itself, as text (NULL when it is refused). */
static char *merged_text(const struct cli_report *r, size_t *len)
{
    struct cli_merger *mg = cli_merger_new();
    struct cli_report m;
    char err[512], *text = NULL;
    cli_merger_add(mg, r);
    cli_merger_add(mg, r);
    if (cli_merger_finish(mg, &m, err, sizeof err) != 0) {
        check_message(err);
        cli_merger_free(mg);
        return NULL;
    }
    json_t *doc = cli_report_to_json(&m);
    FILE *f = open_memstream(&text, len);
    if (!f || cli_json_dump_with(f, doc, "events", write_events, (void *)r) != 0 || fclose(f) != 0)
        abort();
    json_decref(doc);
    cli_report_free(&m);
    cli_merger_free(mg);
    return text;
}

/* Merging a report with itself must give a document that loads again. */
static void check_round_trip(const struct cli_report *r, const char *text, size_t len)
{
    struct cli_report again;
    char err[512];
    if (cli_load_buffer(&again, "merged", text, len, err, sizeof err) != 0) {
        fprintf(stderr, "merged report does not load again: %s\n", err);
        abort();
    }
    if (again.n_events != 2 * r->n_events)
        abort();
    cli_report_free(&again);
}

/* Loaded from a file instead, read a few bytes at a time (the target is
 * built with a tiny CLI_TEXT_WINDOW), the input must give what it gave
 * from memory: the same message, or the same merge. */
static void same_from_file(const uint8_t *data, size_t size, int rc, const char *err, const char *text)
{
    int fd = memfd_create("fuzz", 0);
    char path[64], err2[512];
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
        abort();
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    struct cli_report r;
    int rc2 = cli_load_path(&r, path, 0, err2, sizeof err2);
    close(fd);
    if (rc2 != rc || (rc && strcmp(err, err2) != 0)) {
        fprintf(stderr, "from memory: %s\nfrom a file: %s\n", rc ? err : "loads", rc2 ? err2 : "loads");
        abort();
    }
    if (rc)
        return;
    size_t len;
    char *text2 = merged_text(&r, &len);
    if (!text != !text2 || (text && strcmp(text, text2) != 0))
        abort();
    free(text2);
    cli_report_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!sink && !(sink = fopen("/dev/null", "w")))
        abort();
    struct cli_report r;
    char err[512], *text = NULL;
    int rc = cli_load_buffer(&r, "fuzz.json", (const char *)data, size, err, sizeof err);
    if (rc != 0) {
        check_message(err);
    } else {
        render_all(&r);
        size_t len;
        text = merged_text(&r, &len);
        if (text)
            check_round_trip(&r, text, len);
        cli_report_free(&r);
    }
    same_from_file(data, size, rc, err, text);
    free(text);
    return 0;
}
