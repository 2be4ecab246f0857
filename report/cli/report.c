/* trlat report FILE: one report as text, csv, json or html. */
#include "report/cli/cli.h"
#include "report/cli/fmt.h"
#include "report/cli/util.h"

#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TOP 20

enum format { FMT_TEXT, FMT_CSV, FMT_JSON, FMT_HTML };
static const char *const format_names[] = {"text", "csv", "json", "html", NULL};

static const char usage_text[] =
    "usage: trlat report FILE... [--top N] [--sort KEY] [--format text|csv|json|html] [-o OUT] [--skip-bad]\n"
    "\n"
    "Shows one report (FILE '-' reads standard input); several are shown merged, as\n"
    "'trlat merge' combines them.\n"
    "\n"
    "  --top N        kernels to show (0: all; default 20 for text and html, all otherwise)\n"
    "  --sort KEY     order of kernels: host (total host time, the default), launches,\n"
    "                 py (py->drv), driver, gpu or starved\n"
    "  --format F     text (default), csv, json or html (one self-contained page)\n"
    "  -o, --output OUT  write to OUT instead of standard output\n"
    "  --skip-bad     leave out a report that cannot be read (truncated, invalid), saying\n"
    "                 which and why, instead of stopping; fails only when none is left\n"
    "\n"
    "Times are per launch (medians: p50) unless the column says total; percentiles\n"
    "are computed from the report's histograms; means are in csv and json. An errors\n"
    "column (launches the driver refused) appears only when some kernel has errors.\n";

/* ---- text ---- */

/* Appends a row of the kernel table: its cells in column order, the
 * errors column (cell 1) only when the table has it. */
enum { ROW_CELLS = 10 };

static void add_row(struct cli_table *t, const char *const cells[ROW_CELLS], bool errors)
{
    for (size_t i = 0; i < ROW_CELLS; i++)
        if (i != 1 || errors)
            cli_table_add(t, cells[i]);
}

/* One row of the kernel table: a kernel's figures, or the totals (k == NULL). */
static void table_row(struct cli_table *t, const struct cli_kernel *k, const struct cli_agg *a, const char *name,
                      bool errors)
{
    char launches[CLI_FMT_LEN], errs[CLI_FMT_LEN], host[CLI_FMT_LEN], py[CLI_FMT_LEN], drv[CLI_FMT_LEN];
    char p99[CLI_FMT_LEN], gpu[CLI_FMT_LEN], starved[CLI_FMT_LEN], hits[CLI_FMT_LEN];
    const struct cli_stat *sdrv = k ? &k->driver : &a->driver, *spy = k ? &k->py : &a->py;
    const struct cli_stat *sgpu = k ? &k->gpu : &a->gpu;
    const struct cli_u64 *st = k ? &k->starved : &a->starved;
    bool fp = k ? k->fastpath.set : a->fastpath;
    cli_fmt_count(launches, k ? k->launches : a->launches);
    cli_fmt_count(errs, k ? k->errors : a->errors);
    bool timed = k ? (k->driver.s.count || (k->py.set && k->py.s.count)) : a->driver.s.count > 0;
    cli_fmt_ns(host, timed ? (double)(k ? cli_host_sum(k) : a->host_sum) : NAN);
    cli_fmt_ns(py, cli_pct(spy, 0.5));
    cli_fmt_ns(drv, cli_pct(sdrv, 0.5));
    cli_fmt_ns(p99, cli_pct(sdrv, 0.99));
    cli_fmt_ns(gpu, cli_pct(sgpu, 0.5));
    cli_fmt_ns(starved, st->set ? (double)st->v : NAN);
    cli_fmt_pct(hits, !fp ? NAN
                      : k ? cli_hit_rate(k->fastpath.hits, k->fastpath.misses)
                          : cli_hit_rate(a->hits, a->misses));
    const char *const cells[ROW_CELLS] = {launches, errs, host, py, drv, p99, gpu, starved, hits, name};
    add_row(t, cells, errors);
}

static void text_header(FILE *f, const struct cli_view *v)
{
    const struct cli_report *r = v->r;
    char proc[512], config[512], python[512], wall[CLI_FMT_LEN];
    cli_describe_process(r, proc, sizeof proc);
    cli_describe_config(r, config, sizeof config);
    fprintf(f, "trlat report: %s\n", r->path);
    struct cli_table t;
    cli_table_init(&t, "ll");
    cli_table_row(&t, "process", proc);
    cli_table_row(&t, "config", config);
    if (r->wall_ns.set)
        cli_table_row(&t, "wall", cli_fmt_ns(wall, (double)r->wall_ns.v));
    if (cli_describe_python(r, python, sizeof python))
        cli_table_row(&t, "python", python);
    cli_table_print(&t, f, "  ");
    cli_table_free(&t);
    fputc('\n', f);
}

static void text_notes(FILE *f, const struct cli_view *v)
{
    const struct cli_report *r = v->r;
    char n[CLI_FMT_LEN], m[CLI_FMT_LEN];
    if (v->n < v->n_all)
        fprintf(f, "  (%zu more kernels not shown; --top 0 shows all)\n", v->n_all - v->n);
    /* Both count CUPTI's dropped records; older reports have only totals'. */
    uint64_t dropped = r->gpu.n[CLI_GPU_DROPPED_RECORDS];
    if (r->totals.dropped_records.set && r->totals.dropped_records.v > dropped)
        dropped = r->totals.dropped_records.v;
    if (dropped)
        fprintf(f, "warning: CUPTI dropped %s activity records; GPU figures are incomplete\n",
                cli_fmt_count(n, dropped));
    if (r->gpu.n[CLI_GPU_UNJOINED_RECORDS])
        fprintf(f,
                "warning: GPU records not joined to a launch: %s of %s; starved figures leave them out (their "
                "launch callbacks were lost or never came; see docs/CUPTI.md)\n",
                cli_fmt_count(n, r->gpu.n[CLI_GPU_UNJOINED_RECORDS]),
                cli_fmt_count(m, r->gpu.n[CLI_GPU_KERNEL_RECORDS]));
    char note[512];
    for (size_t i = 0; i < v->n; i++)
        if (cli_outlier_note(v->kernels[i], note, sizeof note))
            fprintf(f, "note: %s\n", note);
    if (cli_library_note(r, note, sizeof note))
        fprintf(f, "note: %s\n", note);
    if (r->totals.unnamed_launches.set && r->totals.unnamed_launches.v)
        fprintf(f, "note: %s launches of kernels trlat could not name are listed as <unknown ...>\n",
                cli_fmt_count(n, r->totals.unnamed_launches.v));
    if (r->totals.trace_lost.set && r->totals.trace_lost.v)
        fprintf(f,
                "note: %s launches kept no trace event (their slot's older writer was preempted for a whole "
                "turn of the ring)\n",
                cli_fmt_count(n, r->totals.trace_lost.v));
}

/* Where each shown kernel's launches came from (its call sites, most
 * launches first, SITES_SHOWN of them) and why the fast path did not serve
 * them (its fallbacks by reason, most first): what the report records
 * beside the times. */
#define SITES_SHOWN 3

static int by_count(const void *a, const void *b)
{
    const struct cli_count *x = *(const struct cli_count *const *)a, *y = *(const struct cli_count *const *)b;
    return x->n < y->n ? 1 : x->n > y->n ? -1 : strcmp(x->name, y->name);
}

static void fallbacks_text(const struct cli_fastpath *fp, char *buf, size_t len)
{
    const struct cli_count *order[64];
    size_t n = fp->n_fallbacks < 64 ? fp->n_fallbacks : 64, used = 0;
    for (size_t i = 0; i < n; i++)
        order[i] = &fp->fallbacks[i];
    qsort(order, n, sizeof *order, by_count);
    buf[0] = 0;
    for (size_t i = 0; i < n && used < len; i++) {
        char c[CLI_FMT_LEN];
        int w =
            snprintf(buf + used, len - used, "%s%s %s", i ? ", " : "", order[i]->name, cli_fmt_count(c, order[i]->n));
        used += w > 0 ? (size_t)w : 0;
    }
}

static int by_launches(const void *a, const void *b)
{
    const struct cli_site *x = *(const struct cli_site *const *)a, *y = *(const struct cli_site *const *)b;
    if (x->launches != y->launches)
        return x->launches < y->launches ? 1 : -1;
    int c = strcmp(x->site, y->site);
    return c ? c : cli_strcmp_opt(x->user, y->user);
}

/* A site, with the program's own line that led to it when that is
 * another: "rms_norm.py:483 (from model.py:87)". */
static void site_text(const struct cli_site *s, char *buf, size_t len)
{
    if (s->user && strcmp(s->user, s->site) != 0)
        snprintf(buf, len, "%.500s (from %.500s)", s->site, s->user);
    else
        snprintf(buf, len, "%s", s->site);
}

size_t cli_sites_table(struct cli_table *t, const struct cli_view *v)
{
    cli_table_init(t, "lrll");
    size_t rows = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct cli_kernel *k = v->kernels[i];
        const struct cli_site **order = cli_xcalloc(k->n_sites ? k->n_sites : 1, sizeof *order);
        for (size_t s = 0; s < k->n_sites; s++)
            order[s] = &k->sites[s];
        qsort(order, k->n_sites, sizeof *order, by_launches);
        for (size_t s = 0; s < k->n_sites && s < SITES_SHOWN; s++, rows++) {
            char c[CLI_FMT_LEN], where[1100];
            site_text(order[s], where, sizeof where);
            cli_table_row(t, s ? "" : k->name, cli_fmt_count(c, order[s]->launches), where,
                          order[s]->kind ? order[s]->kind : "");
        }
        free(order);
        if (k->n_sites > SITES_SHOWN) {
            char more[64];
            snprintf(more, sizeof more, "(%zu more sites)", k->n_sites - SITES_SHOWN);
            cli_table_row(t, "", "", more, "");
            rows++;
        }
    }
    return rows;
}

size_t cli_fallbacks_table(struct cli_table *t, const struct cli_view *v)
{
    cli_table_init(t, "ll");
    size_t rows = 0;
    for (size_t i = 0; i < v->n; i++) {
        const struct cli_fastpath *fp = &v->kernels[i]->fastpath;
        if (!fp->set || !fp->n_fallbacks)
            continue;
        char why[512];
        fallbacks_text(fp, why, sizeof why);
        cli_table_row(t, v->kernels[i]->name, why);
        rows++;
    }
    return rows;
}

const struct cli_section cli_sections[] = {
    {"call sites (launches, most first)", "Call sites (launches, most first)", "sites", 0, cli_sites_table},
    {"fast-path fallbacks (calls Triton ran, by reason)", "Fast-path fallbacks (calls Triton ran, by reason)",
     "fallbacks", 0, cli_fallbacks_table},
    {"host time between launches, by user site (most first)", "Host time between launches, by user site", "user-sites",
     CLI_HEAD_TOTAL, cli_user_sites_table},
    {"py→drv by Triton's phase (TRLAT_PY_PHASES; means per call)", "py→drv by Triton's phase (means per call)",
     "phases", CLI_HEAD, cli_phases_table},
    {"regions (host time, most first)", "Regions (host time, most first)", "regions", CLI_HEAD, cli_regions_table},
};
const size_t cli_n_sections = sizeof cli_sections / sizeof cli_sections[0];

static void text_where(FILE *f, const struct cli_view *v)
{
    for (size_t i = 0; i < cli_n_sections; i++) {
        struct cli_table t;
        if (cli_sections[i].make(&t, v)) {
            fprintf(f, "\n%s:\n", cli_sections[i].title);
            cli_table_print(&t, f, "  ");
        }
        cli_table_free(&t);
    }
}

void cli_kernel_table(struct cli_table *t, const struct cli_view *v)
{
    bool errors = v->all.errors > 0;
    static const char *const header[ROW_CELLS] = {"launches",   "errors",  "host total",    "py→drv p50", "driver p50",
                                                  "driver p99", "gpu p50", "starved total", "fast-path",  "kernel"};
    cli_table_init(t, errors ? "rrrrrrrrrl" : "rrrrrrrrl");
    add_row(t, header, errors);
    for (size_t i = 0; i < v->n; i++)
        table_row(t, v->kernels[i], NULL, v->kernels[i]->name, errors);
    char total[64];
    snprintf(total, sizeof total, "total (%zu kernel%s)", v->n_all, v->n_all == 1 ? "" : "s");
    cli_table_rule(t);
    table_row(t, NULL, &v->all, total, errors);
}

void cli_render_text(FILE *f, const struct cli_view *v)
{
    text_header(f, v);
    struct cli_table t;
    cli_kernel_table(&t, v);
    cli_table_print(&t, f, "");
    cli_table_free(&t);
    text_notes(f, v);
    text_where(f, v);
    fprintf(f, "\n%s\n", v->diagnosis);
}

/* ---- csv ---- */

static void csv_str(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, double v)
{
    if (!isnan(v))
        fprintf(f, "%.0f", v);
    fputc(',', f);
}

static void csv_opt(FILE *f, const struct cli_u64 *v)
{
    if (v->set)
        fprintf(f, "%llu", (unsigned long long)v->v);
    fputc(',', f);
}

static void csv_stat(FILE *f, const struct cli_stat *s)
{
    csv_num(f, cli_mean(s));
    csv_num(f, cli_pct(s, 0.5));
    csv_num(f, cli_pct(s, 0.9));
    csv_num(f, cli_pct(s, 0.99));
}

void cli_render_csv(FILE *f, const struct cli_view *v)
{
    fputs("kernel,module,launches,driver_launches,runtime_launches,host_ns,host_mean_ns,"
          "py_to_driver_mean_ns,py_to_driver_p50_ns,py_to_driver_p90_ns,py_to_driver_p99_ns,"
          "driver_mean_ns,driver_p50_ns,driver_p90_ns,driver_p99_ns,"
          "gpu_mean_ns,gpu_p50_ns,gpu_p90_ns,gpu_p99_ns,"
          "starved_ns,starved_launches,fastpath_hits,fastpath_misses",
          f);
    bool errors = v->all.errors > 0; /* a last column, only then */
    fputs(errors ? ",errors\n" : "\n", f);
    for (size_t i = 0; i < v->n; i++) {
        const struct cli_kernel *k = v->kernels[i];
        csv_str(f, k->name);
        fputc(',', f);
        csv_str(f, k->module ? k->module : "");
        fprintf(f, ",%llu,%llu,%llu,%llu,", (unsigned long long)k->launches, (unsigned long long)k->src_driver,
                (unsigned long long)k->src_runtime, (unsigned long long)cli_host_sum(k));
        csv_num(f, cli_host_mean(k));
        csv_stat(f, &k->py);
        csv_stat(f, &k->driver);
        csv_stat(f, &k->gpu);
        csv_opt(f, &k->starved);
        csv_opt(f, &k->starved_launches);
        if (k->fastpath.set)
            fprintf(f, "%llu,%llu", (unsigned long long)k->fastpath.hits, (unsigned long long)k->fastpath.misses);
        else
            fputc(',', f);
        if (errors)
            fprintf(f, ",%llu", (unsigned long long)k->errors);
        fputc('\n', f);
    }
}

/* ---- json ---- */

static json_t *j_num(double v)
{
    if (isnan(v))
        return json_null();
    return json_integer(v >= 0x1p63 ? INT64_MAX : (json_int_t)llround(v));
}

static json_t *j_rate(double v)
{
    return isnan(v) ? json_null() : json_real(round(v * 1e4) / 1e4);
}

static json_t *j_stat(const struct cli_stat *s)
{
    if (!s->set)
        return json_null();
    return json_pack("{s:I,s:I,s:o,s:I,s:I,s:o,s:o,s:o}", "count", (json_int_t)s->s.count, "sum", (json_int_t)s->s.sum,
                     "mean", j_num(cli_mean(s)), "min", (json_int_t)s->s.min, "max", (json_int_t)s->s.max, "p50",
                     j_num(cli_pct(s, 0.5)), "p90", j_num(cli_pct(s, 0.9)), "p99", j_num(cli_pct(s, 0.99)));
}

static json_t *json_kernel(const struct cli_kernel *k, bool errors)
{
    const struct cli_fastpath *fp = &k->fastpath;
    json_t *o = json_pack("{s:s,s:o,s:I,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "name", k->name, "module",
                          cli_jv_str(k->module), "launches", (json_int_t)k->launches, "host_ns",
                          (json_int_t)cli_host_sum(k), "host_mean_ns", j_num(cli_host_mean(k)), "py_to_driver_ns",
                          j_stat(&k->py), "driver_ns", j_stat(&k->driver), "gpu_ns", j_stat(&k->gpu), "starved_ns",
                          cli_jv_opt(&k->starved), "starved_launches", cli_jv_opt(&k->starved_launches),
                          "fastpath_hit_rate", j_rate(fp->set ? cli_hit_rate(fp->hits, fp->misses) : NAN));
    if (errors)
        json_object_set_new(o, "errors", json_integer((json_int_t)k->errors));
    return o;
}

static json_t *json_totals(const struct cli_view *v)
{
    const struct cli_report *r = v->r;
    const struct cli_agg *a = &v->all;
    json_t *o =
        json_pack("{s:I,s:I,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "launches", (json_int_t)a->launches, "kernels",
                  (json_int_t)v->n_all, "host_ns", (json_int_t)a->host_sum, "host_mean_ns", j_num(cli_agg_host_mean(a)),
                  "driver_ns", j_stat(&a->driver), "py_to_driver_ns", j_stat(&a->py), "gpu_ns", j_stat(&a->gpu),
                  "gpu_busy_ns", cli_jv_opt(&r->totals.gpu_busy_ns), "starved_ns", cli_jv_opt(&r->totals.starved_ns),
                  "starved_share", j_rate(cli_starved_share(r)), "fastpath_hit_rate",
                  j_rate(a->fastpath ? cli_hit_rate(a->hits, a->misses) : NAN));
    if (a->errors)
        json_object_set_new(o, "errors", json_integer((json_int_t)a->errors));
    return o;
}

void cli_render_json(FILE *f, const struct cli_view *v)
{
    const struct cli_report *r = v->r;
    char proc[512], config[512];
    cli_describe_process(r, proc, sizeof proc);
    cli_describe_config(r, config, sizeof config);
    json_t *kernels = json_array();
    for (size_t i = 0; i < v->n; i++)
        json_array_append_new(kernels, json_kernel(v->kernels[i], v->all.errors > 0));
    json_t *file = json_string(r->path); /* NULL when the name is not UTF-8 */
    json_t *doc =
        json_pack("{s:s,s:o,s:s,s:s,s:o,s:o,s:s,s:o}", "schema", "trlat-summary/1", "file", file ? file : json_null(),
                  "process", proc, "config", config, "wall_ns", cli_jv_opt(&r->wall_ns), "totals", json_totals(v),
                  "diagnosis", v->diagnosis, "kernels", kernels);
    cli_json_dump(f, doc);
    json_decref(doc);
}

/* ---- command ---- */

struct options {
    char **files;
    size_t n_files;
    const char *out;
    size_t top;
    bool top_set, skip_bad;
    enum cli_sort sort;
    enum format format;
};

enum { OPT_SKIP_BAD = 256 };

static void parse(int argc, char **argv, struct options *o)
{
    static const struct option longopts[] = {{"top", required_argument, NULL, 't'},
                                             {"sort", required_argument, NULL, 's'},
                                             {"format", required_argument, NULL, 'f'},
                                             {"output", required_argument, NULL, 'o'},
                                             {"skip-bad", no_argument, NULL, OPT_SKIP_BAD},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            o->top = (size_t)cli_parse_uint("report", "--top", optarg, 1000000000);
            o->top_set = true;
            break;
        case 's':
            o->sort = (enum cli_sort)cli_parse_word("report", "--sort", optarg, cli_sort_names);
            break;
        case 'f':
            o->format = (enum format)cli_parse_word("report", "--format", optarg, format_names);
            break;
        case 'o':
            o->out = optarg;
            break;
        case OPT_SKIP_BAD:
            o->skip_bad = true;
            break;
        case 'h':
            fputs(usage_text, stdout);
            exit(0);
        default:
            cli_bad_option("report", c, argv);
        }
    }
    if (optind >= argc)
        cli_usage_fail("report", "no report file given");
    o->files = argv + optind;
    o->n_files = (size_t)(argc - optind);
    if (!o->top_set && (o->format == FMT_TEXT || o->format == FMT_HTML))
        o->top = DEFAULT_TOP;
}

/* What the header names for several files: the first few. */
static char *label(char *const *names, size_t n)
{
    size_t len = 64;
    for (size_t i = 0; i < n && i < 3; i++)
        len += strlen(names[i]) + 2;
    char *s = cli_xmalloc(len);
    size_t at = 0;
    for (size_t i = 0; i < n && i < 3; i++)
        at += (size_t)snprintf(s + at, len - at, "%s%s", i ? ", " : "", names[i]);
    if (n > 3)
        snprintf(s + at, len - at, " and %zu more", n - 3);
    return s;
}

/* The files' reports, merged when more than one could be read: *m then
 * holds the strings of *r. Returns the label to free, or NULL. */
static char *load_all(const struct options *o, struct cli_report *r, struct cli_merger **m)
{
    char **good = cli_xcalloc(o->n_files, sizeof *good), err[512];
    size_t n = 0;
    struct cli_report one;
    for (size_t i = 0; i < o->n_files; i++) {
        if (cli_load_path(&one, o->files[i], 0, err, sizeof err) != 0) {
            cli_bad_report(o->files[i], err, o->skip_bad, o->n_files > 1);
            continue;
        }
        good[n++] = o->files[i];
        if (n == 1) {
            *r = one; /* one readable report is shown as it is */
            continue;
        }
        if (n == 2) {
            *m = cli_merger_new();
            cli_merger_add(*m, r);
            cli_report_free(r);
        }
        cli_merger_add(*m, &one);
        cli_report_free(&one);
    }
    if (n == 0)
        cli_fail("report", "no report left to show (%zu skipped)", o->n_files);
    char *name = NULL;
    if (n > 1) {
        if (cli_merger_finish(*m, r, err, sizeof err) != 0) {
            fprintf(stderr, "trlat: %s\n", err);
            exit(CLI_EXIT_BAD_INPUT);
        }
        name = label(good, n);
        r->path = name;
    }
    free(good);
    return name;
}

int cli_report_main(int argc, char **argv)
{
    struct options o = {0};
    parse(argc, argv, &o);
    struct cli_report r;
    struct cli_merger *m = NULL;
    char *name = load_all(&o, &r, &m);
    struct cli_view v;
    cli_view_init(&v, &r, o.sort, o.top);
    FILE *f = cli_open_out(o.out);
    static void (*const render[])(FILE *, const struct cli_view *) = {cli_render_text, cli_render_csv, cli_render_json,
                                                                      cli_render_html};
    render[o.format](f, &v);
    cli_close_out(f, o.out);
    cli_view_free(&v);
    cli_report_free(&r);
    cli_merger_free(m);
    free(name);
    return 0;
}
