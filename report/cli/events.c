/* A report's events, read one at a time: from the text, each element of
 * the events array parsed by itself (the scanner found where it ends), or
 * from the document when the events are in it. */
#include "report/cli/check.h"
#include "report/cli/util.h"

#include <string.h>

enum { EV_START, EV_NEXT, EV_DONE };

static void load_dims(struct ld *ld, const json_t *ev, const char *key, uint64_t out[3])
{
    const json_t *v = ld_field(ld, ev, key, LD_REQ);
    size_t mark = ld_push_key(ld, key);
    if (!json_is_array(v) || json_array_size(v) != 3)
        ld_fail(ld, "expected an array of 3 whole numbers");
    for (size_t i = 0; i < 3; i++) {
        size_t m2 = ld_push_index(ld, i);
        out[i] = ld_as_u64(ld, json_array_get(v, i));
        ld_pop(ld, m2);
    }
    ld_pop(ld, mark);
}

static void load_launch_event(struct ld *ld, const json_t *ev, struct cli_event *e)
{
    e->tid = ld_get_opt_u64(ld, ev, "tid");
    e->py = ld_get_opt_u64(ld, ev, "py_ns");
    e->corr = ld_get_opt_u64(ld, ev, "corr");
    const json_t *stream = ld_field(ld, ev, "stream", LD_OPT);
    if (stream) {
        size_t mark = ld_push_key(ld, "stream");
        e->stream_handle = ld_as_str(ld, stream);
        ld_pop(ld, mark);
    }
    if (ld_field(ld, ev, "grid", LD_OPT) || ld_field(ld, ev, "block", LD_OPT)) {
        load_dims(ld, ev, "grid", e->grid);
        load_dims(ld, ev, "block", e->block);
        e->has_dims = true;
    }
}

/* Returns false for an event of a kind this version does not know. */
static bool load_event(struct ld *ld, const json_t *ev, struct cli_event *e)
{
    ld_need(ld, ev, JSON_OBJECT, "an object");
    const char *kind = ld_get_str(ld, ev, "kind", LD_REQ);
    if (strcmp(kind, "launch") == 0)
        e->kind = CLI_EV_LAUNCH;
    else if (strcmp(kind, "gpu") == 0)
        e->kind = CLI_EV_GPU;
    else if (strcmp(kind, "starved") == 0)
        e->kind = CLI_EV_STARVED;
    else
        return false;
    e->kernel = ld_get_str(ld, ev, "kernel", LD_REQ);
    e->start = ld_get_u64(ld, ev, "start_ns");
    e->end = ld_get_u64(ld, ev, "end_ns");
    e->pid = ld_get_opt_u64(ld, ev, "pid");
    if (e->kind == CLI_EV_LAUNCH) {
        load_launch_event(ld, ev, e);
        return true;
    }
    e->device = ld_get_opt_u64(ld, ev, "device");
    e->stream = ld_get_opt_u64(ld, ev, "stream");
    if (e->kind == CLI_EV_GPU) {
        e->corr = ld_get_opt_u64(ld, ev, "corr");
        e->cupti_corr = ld_get_opt_u64(ld, ev, "cupti_corr");
        e->source = ld_get_str(ld, ev, "source", LD_OPT);
    } else {
        e->scope = ld_get_str(ld, ev, "scope", LD_OPT);
    }
    return true;
}

/* The text moved under the reader, or could not be read. */
static _Noreturn void bad_text(struct ld *ld, const struct cli_events *it, int scan, const char *what)
{
    const struct cli_text *t = &it->r->text;
    int line, col;
    if (it->rd.err)
        ld_fail(ld, "cannot read: %s", strerror(it->rd.err));
    if (scan == CLI_SCAN_END)
        ld_fail(ld, "truncated at byte %llu (not valid JSON)", (unsigned long long)t->size);
    cli_text_linecol(t, cli_rd_tell(&it->rd), &line, &col);
    ld_fail(ld, "not valid JSON (line %d, column %d: %s)", line, col, what);
}

/* The next element of the array in the text, parsed; NULL after the last. */
static json_t *text_element(struct cli_events *it, struct ld *ld)
{
    struct cli_rd *rd = &it->rd;
    const char *what = "',' or ']' expected after an event";
    cli_scan_ws(rd);
    int c = cli_rd_get(rd);
    if (it->state == EV_START) {
        if (c != '[')
            bad_text(ld, it, c < 0 ? CLI_SCAN_END : CLI_SCAN_BAD, "'[' expected");
        cli_scan_ws(rd);
        if (cli_rd_peek(rd) == ']')
            return NULL;
        it->state = EV_NEXT;
    } else if (c == ']') {
        return NULL;
    } else if (c != ',') {
        bad_text(ld, it, c < 0 ? CLI_SCAN_END : CLI_SCAN_BAD, what);
    }
    cli_scan_ws(rd);
    uint64_t at = cli_rd_tell(rd);
    rd->mark = rd->pos;
    rd->marked = true;
    int scan = cli_scan_value(rd, &what);
    if (scan != CLI_SCAN_OK)
        bad_text(ld, it, scan, what);
    json_error_t je;
    memset(&je, 0, sizeof je);
    cli_json_parsing();
    json_t *doc = json_loadb(rd->b + rd->mark, rd->pos - rd->mark, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
    rd->marked = false;
    if (!doc) {
        int line, col;
        uint64_t pos = at + (je.position > 0 ? (uint64_t)je.position : 0);
        cli_text_linecol(&it->r->text, pos, &line, &col);
        ld_json_error(ld, &it->r->text, &je, pos, line, col, false);
    }
    return doc;
}

static json_t *tree_element(struct cli_events *it)
{
    const json_t *events = it->r->events_json;
    if (!events || it->index >= json_array_size(events))
        return NULL;
    return json_incref(json_array_get(events, it->index));
}

void cli_events_open(struct cli_events *it, const struct cli_report *r)
{
    memset(it, 0, sizeof *it);
    it->r = r;
    if (r->layout.split)
        cli_rd_open(&it->rd, &r->text, r->layout.at);
}

int cli_events_next(struct cli_events *it, struct cli_event *e, char *err, size_t errlen)
{
    struct ld ld = {.err = err, .errlen = errlen};
    json_decref(it->doc);
    it->doc = NULL;
    if (it->state == EV_DONE)
        return 0;
    if (setjmp(ld.jmp)) {
        cli_one_line(err);
        it->state = EV_DONE;
        return -1;
    }
    for (;;) {
        json_t *doc = it->r->layout.split ? text_element(it, &ld) : tree_element(it);
        if (!doc) {
            it->state = EV_DONE;
            return 0;
        }
        it->doc = doc;
        size_t mark = ld_push_key(&ld, "events");
        ld_push_index(&ld, it->index++);
        memset(e, 0, sizeof *e);
        bool known = load_event(&ld, doc, e);
        ld_pop(&ld, mark);
        if (known)
            return 1;
        json_decref(doc);
        it->doc = NULL;
    }
}

void cli_events_close(struct cli_events *it)
{
    json_decref(it->doc);
    cli_rd_close(&it->rd);
    memset(it, 0, sizeof *it);
}
