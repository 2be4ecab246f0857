/* trlat report --format html: one self-contained page (no script, no
 * external resource) with inline SVG charts and the kernel table. */
#include "report/cli/cli.h"
#include "report/cli/fmt.h"
#include "report/cli/util.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define CHART_W 960
#define LABEL_W 300 /* kernel names left of the bars */
#define VALUE_W 190 /* figures right of the bars */
#define ROW_H 22
#define NAME_MAX_CHARS 42

static const char *const color_py = "#e8a33d", *const color_driver = "#3b78c3", *const color_gpu = "#58a55c";
static const char *const color_busy = "#aab4be", *const color_starved = "#d64541";
static const char *const palette[] = {"#d64541", "#8e5ec6", "#2a9d8f", "#e76f51", "#264653", "#c2578f", "#7f8c8d"};

static void esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

/* A kernel name for a chart label: at most NAME_MAX_CHARS code points. */
static void esc_short(FILE *f, const char *s)
{
    if (cli_text_width(s) <= NAME_MAX_CHARS) {
        esc(f, s);
        return;
    }
    char buf[NAME_MAX_CHARS * 4 + 4];
    size_t chars = 0, i = 0;
    for (; s[i] && i < sizeof buf - 4; i++) {
        if (((unsigned char)s[i] & 0xc0) != 0x80 && ++chars == NAME_MAX_CHARS)
            break;
        buf[i] = s[i];
    }
    strcpy(buf + i, "…");
    esc(f, buf);
}

static void head(FILE *f, const struct cli_report *r)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>trlat report: ", f);
    esc(f, r->path);
    fputs("</title>\n<style>\n"
          "body{font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",sans-serif;color:#1d2733;"
          "background:#f6f7f9;margin:0;padding:24px 32px;max-width:1040px}\n"
          "h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:0 0 10px}\n"
          ".meta{color:#5b6775;margin:0}.meta b{color:#1d2733;font-weight:600}\n"
          ".diag{font-size:16px;background:#fff;border-left:4px solid #d64541;padding:10px 14px;"
          "margin:18px 0}\n"
          "section{background:#fff;border:1px solid #dde2e8;border-radius:6px;padding:14px 16px;"
          "margin:0 0 18px}\n"
          "svg{display:block;font:12px system-ui,sans-serif}svg text{fill:#1d2733}\n"
          ".note{color:#5b6775}\n"
          "table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}\n"
          "th,td{padding:4px 8px;border-bottom:1px solid #e6e9ee;white-space:nowrap}\n"
          "th{font-weight:600;background:#f0f2f5}td.r,th.r{text-align:right}td.l,th.l{text-align:left}\n"
          "td.l{white-space:normal;word-break:break-all}tr.total td{font-weight:600;border-top:2px solid #c8ced6}\n"
          "</style>\n</head>\n<body>\n",
          f);
}

static void intro(FILE *f, const struct cli_view *v)
{
    char proc[512], config[512], wall[CLI_FMT_LEN];
    cli_describe_process(v->r, proc, sizeof proc);
    cli_describe_config(v->r, config, sizeof config);
    fputs("<h1>trlat report</h1>\n<p class=\"meta\"><b>file</b> ", f);
    esc(f, v->r->path);
    fputs(" &nbsp; <b>process</b> ", f);
    esc(f, proc);
    if (v->r->wall_ns.set)
        fprintf(f, " &nbsp; <b>wall</b> %s", cli_fmt_ns(wall, (double)v->r->wall_ns.v));
    fputs("</p>\n<p class=\"meta\"><b>config</b> ", f);
    esc(f, config);
    fputs("</p>\n<p class=\"diag\" id=\"diagnosis\">", f);
    esc(f, v->diagnosis);
    fputs("</p>\n", f);
}

static void svg_open(FILE *f, const char *id, int height, const char *label)
{
    fprintf(f,
            "<svg id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\">\n",
            id, CHART_W, height, CHART_W, height, label);
}

static void rect(FILE *f, double x, double y, double w, double h, const char *fill, const char *title)
{
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">", x, y, w, h, fill);
    if (title) {
        fputs("<title>", f);
        esc(f, title);
        fputs("</title>", f);
    }
    fputs("</rect>\n", f);
}

static void legend(FILE *f, double x, double y, const char *color, const char *text)
{
    rect(f, x, y - 10, 12, 12, color, NULL);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x + 17, y);
    esc_short(f, text);
    fputs("</text>\n", f);
}

/* ---- per-kernel bars: the host's py->drv + driver stacked, the GPU's run
 * apart below it (asynchronous: it overlaps the host's time, never adds) ---- */

struct part {
    double ns;
    const char *what, *color;
};

static int kernel_parts(const struct cli_kernel *k, struct part p[3])
{
    int n = 0;
    double py = cli_pct(&k->py, 0.5), drv = cli_pct(&k->driver, 0.5), gpu = cli_pct(&k->gpu, 0.5);
    if (!isnan(py))
        p[n++] = (struct part){py, "py→drv", color_py};
    if (!isnan(drv))
        p[n++] = (struct part){drv, "driver", color_driver};
    if (!isnan(gpu))
        p[n++] = (struct part){gpu, "gpu", color_gpu};
    return n;
}

static void bar_row(FILE *f, const struct cli_kernel *k, double y, double scale)
{
    struct part p[3];
    int n = kernel_parts(k, p);
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\"><title>", LABEL_W - 8, y + 15);
    esc(f, k->name);
    fputs("</title>", f);
    esc_short(f, k->name);
    fputs("</text>\n", f);
    double x = LABEL_W, gx = LABEL_W;
    char host[160] = "", gpu[64] = "", title[160], a[CLI_FMT_LEN];
    for (int i = 0; i < n; i++) {
        double w = p[i].ns * scale;
        snprintf(title, sizeof title, "%s: %s per launch (median)", p[i].what, cli_fmt_ns(a, p[i].ns));
        if (p[i].color == color_gpu) { /* its own bar, below the host's */
            rect(f, LABEL_W, y + ROW_H - 8, w > 0.5 ? w : 0.5, 5, p[i].color, title);
            gx = LABEL_W + w;
            snprintf(gpu, sizeof gpu, "gpu %s", a);
            continue;
        }
        rect(f, x, y + 2, w > 0.5 ? w : 0.5, ROW_H - 11, p[i].color, title);
        x += w;
        size_t len = strlen(host);
        snprintf(host + len, sizeof host - len, "%s%s", len ? " + " : "host ", a);
    }
    double tx = (x > gx ? x : gx) + 6;
    if (!n)
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">no launch times</text>\n", tx, y + 15);
    else
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s%s%s</text>\n", tx, y + 15, host, *host && *gpu ? "; " : "", gpu);
}

static void chart_bars(FILE *f, const struct cli_view *v)
{
    double max = 0;
    bool has_py = false, has_gpu = false;
    for (size_t i = 0; i < v->n; i++) {
        struct part p[3];
        double host = 0, gpu = 0;
        for (int j = 0, n = kernel_parts(v->kernels[i], p); j < n; j++) {
            if (p[j].color == color_gpu)
                gpu = p[j].ns;
            else
                host += p[j].ns;
            has_py = has_py || p[j].color == color_py;
            has_gpu = has_gpu || p[j].color == color_gpu;
        }
        max = host > max ? host : max;
        max = gpu > max ? gpu : max;
    }
    double scale = max > 0 ? (CHART_W - LABEL_W - VALUE_W) / max : 0;
    fputs("<section>\n<h2>Where a launch's time goes (median per launch)</h2>\n", f);
    svg_open(f, "chart-kernels", 34 + (int)(v->n ? v->n : 1) * ROW_H, "per-kernel time per launch");
    double x = LABEL_W;
    if (has_py) {
        legend(f, x, 14, color_py, "py→drv (Python call to driver entry)");
        x += 260;
    }
    legend(f, x, 14, color_driver, "driver (launch call)");
    if (has_gpu)
        legend(f, x + 160, 14, color_gpu, "gpu (kernel run, apart)");
    for (size_t i = 0; i < v->n; i++)
        bar_row(f, v->kernels[i], 26 + (double)i * ROW_H, scale);
    if (v->n == 0)
        fprintf(f, "<text x=\"%d\" y=\"44\">no kernels</text>\n", LABEL_W);
    fputs("</svg>\n</section>\n", f);
}

/* ---- histogram of per-launch host time (all kernels) ---- */

#define HIST_H 220
#define HIST_TOP 24
#define HIST_PLOT_H 160
#define HIST_LEFT 60

static void hist_range(const struct cli_stat *driver, const struct cli_stat *py, unsigned *lo, unsigned *hi,
                       uint64_t *max)
{
    *lo = TRLAT_HIST_BUCKETS;
    *hi = 0;
    *max = 0;
    for (unsigned i = 0; i < TRLAT_HIST_BUCKETS; i++) {
        uint64_t d = driver->set ? driver->s.hist[i] : 0, p = py->set ? py->s.hist[i] : 0;
        if (!d && !p)
            continue;
        *lo = i < *lo ? i : *lo;
        *hi = i;
        *max = d > *max ? d : *max;
        *max = p > *max ? p : *max;
    }
}

/* Bar heights are log(1 + count) over log(1 + max): a 436 ms first call
 * stays visible beside thousands of fast launches. */
static void hist_bars(FILE *f, const struct trlat_stat *s, unsigned lo, unsigned hi, double slot, double off,
                      double lmax, int ph, const char *color, const char *what)
{
    char title[160], a[CLI_FMT_LEN], b[CLI_FMT_LEN], c[CLI_FMT_LEN];
    for (unsigned i = lo; i <= hi; i++) {
        if (!s->hist[i])
            continue;
        double h = log1p((double)s->hist[i]) / lmax * ph;
        h = h < 1 ? 1 : h;
        uint64_t upper = i + 1 < TRLAT_HIST_BUCKETS ? trlat_hist_lower(i + 1) : s->max + 1;
        snprintf(title, sizeof title, "%s %s to %s: %s launches", what, cli_fmt_ns(a, (double)trlat_hist_lower(i)),
                 cli_fmt_ns(b, (double)upper), cli_fmt_count(c, s->hist[i]));
        rect(f, HIST_LEFT + (i - lo) * slot + off, HIST_TOP + ph - h, slot / 2 > 1 ? slot / 2 : 1, h, color, title);
    }
}

static void hist_tick(FILE *f, unsigned i, unsigned lo, double slot, int ph)
{
    char a[CLI_FMT_LEN];
    double x = HIST_LEFT + (i - lo) * slot;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#8c96a3\"/>\n", x, HIST_TOP + ph, x,
            HIST_TOP + ph + 5);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x, HIST_TOP + ph + 19,
            cli_fmt_ns(a, (double)trlat_hist_lower(i)));
}

/* Ticks where powers of two begin (every k-th, at most about 12). */
static void hist_axis(FILE *f, unsigned lo, unsigned hi, double slot, int ph)
{
    const unsigned L = TRLAT_HIST_LINEAR, S = TRLAT_HIST_SUB;
    unsigned first = lo <= L ? L : L + (lo - L + S - 1) / S * S;
    unsigned powers = hi >= first ? (hi - first) / S + 1 : 0;
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#8c96a3\"/>\n", HIST_LEFT, HIST_TOP + ph,
            CHART_W - 10, HIST_TOP + ph);
    if (lo < L)
        hist_tick(f, lo, lo, slot, ph);
    for (unsigned i = first; i <= hi; i += S * (1 + powers / 12))
        hist_tick(f, i, lo, slot, ph);
}

/* One histogram of driver and py->drv time per launch: its svg (id, height
 * h, plot height ph). */
static void hist_svg(FILE *f, const char *id, const char *label, const struct cli_stat *driver,
                     const struct cli_stat *py, int h, int ph)
{
    unsigned lo, hi;
    uint64_t max;
    hist_range(driver, py, &lo, &hi, &max);
    svg_open(f, id, h, label);
    legend(f, HIST_LEFT, 14, color_driver, "driver (launch call)");
    if (py->set)
        legend(f, HIST_LEFT + 170, 14, color_py, "py→drv (Python call to driver entry)");
    if (max == 0) {
        fprintf(f, "<text x=\"%d\" y=\"%d\">no launch times recorded</text>\n", HIST_LEFT, HIST_TOP + 40);
    } else {
        double slot = (double)(CHART_W - 10 - HIST_LEFT) / (hi - lo + 1);
        double lmax = log1p((double)max);
        char m[CLI_FMT_LEN];
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", HIST_LEFT - 6, HIST_TOP + 10,
                cli_fmt_count(m, max));
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n", HIST_LEFT - 6, HIST_TOP + ph);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">launches (log)</text>\n", CHART_W - 10, 14);
        hist_bars(f, &driver->s, lo, hi, slot, 0, lmax, ph, color_driver, "driver");
        if (py->set)
            hist_bars(f, &py->s, lo, hi, slot, slot / 2, lmax, ph, color_py, "py→drv");
        hist_axis(f, lo, hi, slot, ph);
    }
    fputs("</svg>\n", f);
}

static void chart_hist(FILE *f, const struct cli_view *v)
{
    fputs("<section>\n<h2>Host time per launch (all kernels)</h2>\n", f);
    hist_svg(f, "chart-hist", "histogram of per-launch host time", &v->all.driver, &v->all.py, HIST_H, HIST_PLOT_H);
    fputs("</section>\n", f);
}

/* The same for each kernel shown with launch times (at most KERNEL_HISTS),
 * its own axis each: a kernel's spread, and a first call's outlier, at a
 * glance. */
#define KERNEL_HISTS 8
#define KHIST_H 140
#define KHIST_PLOT_H 80

static void chart_kernel_hists(FILE *f, const struct cli_view *v)
{
    size_t shown = 0;
    for (size_t i = 0; i < v->n && shown < KERNEL_HISTS; i++) {
        const struct cli_kernel *k = v->kernels[i];
        if (!k->driver.set || !k->driver.s.count)
            continue;
        if (!shown++)
            fputs("<section>\n<h2>Host time per launch, by kernel</h2>\n", f);
        fputs("<h3>", f);
        esc(f, k->name);
        fputs("</h3>\n", f);
        char id[32];
        snprintf(id, sizeof id, "chart-hist-%zu", shown);
        hist_svg(f, id, "histogram of the kernel's per-launch host time", &k->driver, &k->py, KHIST_H, KHIST_PLOT_H);
    }
    if (shown)
        fputs("</section>\n", f);
}

/* ---- starved share ---- */

#define STARVED_KERNELS 6

/* Starved time of all kernels; *rows: legend rows the split will take. */
static uint64_t starved_total(const struct cli_view *v, size_t *rows)
{
    uint64_t total = 0;
    size_t starving = 0;
    for (size_t i = 0; i < v->n_all; i++)
        if (v->kernels[i]->starved.set && v->kernels[i]->starved.v) {
            total = cli_add_sat(total, v->kernels[i]->starved.v);
            starving++;
        }
    *rows = starving > STARVED_KERNELS ? STARVED_KERNELS + 1 : starving;
    return total;
}

static void starved_split(FILE *f, const struct cli_view *v, double y, double width)
{
    size_t rows;
    uint64_t total = starved_total(v, &rows);
    if (total == 0)
        return;
    /* Kernels by starved time, the largest first; the rest as "other". */
    struct cli_view by;
    cli_view_init(&by, v->r, CLI_SORT_STARVED, 0);
    double x = 10, other = (double)total, ly = y + 46;
    char title[256], a[CLI_FMT_LEN], pct[CLI_FMT_LEN];
    for (size_t i = 0; i < by.n && i < STARVED_KERNELS; i++) {
        const struct cli_kernel *k = by.kernels[i];
        if (!k->starved.set || !k->starved.v)
            break;
        double w = width * (double)k->starved.v / (double)total;
        snprintf(title, sizeof title, "%.160s: starved %s (%s)", k->name, cli_fmt_ns(a, (double)k->starved.v),
                 cli_fmt_pct(pct, (double)k->starved.v / (double)total));
        rect(f, x, y, w, 20, palette[i], title);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\">%s</text>", 10, ly + 4, pct);
        legend(f, 70, ly + 4, palette[i], k->name);
        x += w;
        ly += 18;
        other -= (double)k->starved.v;
    }
    if (other > 0.5) {
        snprintf(title, sizeof title, "other kernels: starved %s", cli_fmt_ns(a, other));
        rect(f, x, y, width * other / (double)total, 20, palette[STARVED_KERNELS], title);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\">%s</text>", 10, ly + 4, cli_fmt_pct(pct, other / (double)total));
        legend(f, 70, ly + 4, palette[STARVED_KERNELS], "other kernels");
    }
    cli_view_free(&by);
}

static void chart_starved(FILE *f, const struct cli_view *v)
{
    const struct cli_report *r = v->r;
    double share = cli_starved_share(r);
    fputs("<section>\n<h2>GPU starved: time the GPU waited for kernel launches</h2>\n", f);
    if (isnan(share)) {
        fputs("<p class=\"note\" id=\"chart-starved\">This report has no GPU timing (CUPTI was not on), so the "
              "starved share is unknown.</p>\n</section>\n",
              f);
        return;
    }
    double width = CHART_W - 20;
    char title[160], a[CLI_FMT_LEN], b[CLI_FMT_LEN];
    uint64_t starved = r->totals.starved_ns.v;
    double busy = cli_gpu_busy(r);
    size_t rows;
    starved_total(v, &rows);
    svg_open(f, "chart-starved", rows ? 74 + 46 + (int)rows * 18 : 60, "starved share of the GPU's active time");
    fprintf(f, "<text x=\"10\" y=\"14\">GPU active time: %s busy, %s starved (%.1f%%)</text>\n", cli_fmt_ns(a, busy),
            cli_fmt_ns(b, (double)starved), share * 100.0);
    snprintf(title, sizeof title, "busy %s", a);
    rect(f, 10, 22, width * (1 - share), 22, color_busy, title);
    snprintf(title, sizeof title, "starved %s", b);
    rect(f, 10 + width * (1 - share), 22, width * share, 22, color_starved, title);
    if (rows) {
        fputs("<text x=\"10\" y=\"66\">starved time by kernel:</text>\n", f);
        starved_split(f, v, 74, width);
    }
    fputs("</svg>\n</section>\n", f);
}

/* ---- table ---- */

/* A text table as HTML; with a header row (its first) and a total (its
 * last), as the kernel table has. */
/* header_total: 0, CLI_HEAD (its first row a header) or CLI_HEAD_TOTAL
 * (and its last a total) */
static void html_table(FILE *f, const struct cli_table *t, const char *id, int header_total)
{
    fprintf(f, "<table id=\"%s\">\n", id);
    size_t rows = t->ncells / t->ncols;
    for (size_t row = 0; row < rows; row++) {
        int head_row = header_total && row == 0;
        const char *tag = head_row ? "th" : "td";
        if (cli_table_is_rule(t, row * t->ncols))
            continue;
        fputs(head_row                                            ? "<thead><tr>"
              : header_total == CLI_HEAD_TOTAL && row == rows - 1 ? "<tr class=\"total\">"
                                                                  : "<tr>",
              f);
        for (size_t col = 0; col < t->ncols; col++) {
            fprintf(f, "<%s class=\"%c\">", tag, t->align[col]);
            esc(f, t->cells[row * t->ncols + col]);
            fprintf(f, "</%s>", tag);
        }
        fputs(head_row ? "</tr></thead>\n<tbody>\n" : "</tr>\n", f);
    }
    fputs(header_total ? "</tbody>\n</table>\n" : "</table>\n", f);
}

static void where(FILE *f, const struct cli_view *v)
{
    for (size_t i = 0; i < cli_n_sections; i++) {
        const struct cli_section *sec = &cli_sections[i];
        struct cli_table t;
        if (sec->make(&t, v)) {
            fprintf(f, "<section>\n<h2>%s</h2>\n", sec->html_title);
            html_table(f, &t, sec->html_id, sec->header_total);
            fputs("</section>\n", f);
        }
        cli_table_free(&t);
    }
}

static void table(FILE *f, const struct cli_view *v)
{
    struct cli_table t;
    cli_kernel_table(&t, v);
    fputs("<section>\n<h2>Kernels</h2>\n", f);
    html_table(f, &t, "kernels", CLI_HEAD_TOTAL);
    cli_table_free(&t);
    if (v->n < v->n_all)
        fprintf(f, "<p class=\"note\">%zu more kernels not shown (--top 0 shows all).</p>\n", v->n_all - v->n);
    char note[512];
    for (size_t i = 0; i < v->n; i++)
        if (cli_outlier_note(v->kernels[i], note, sizeof note)) {
            fputs("<p class=\"note\">", f);
            esc(f, note);
            fputs("</p>\n", f);
        }
    if (cli_library_note(v->r, note, sizeof note)) {
        fputs("<p class=\"note\">", f);
        esc(f, note);
        fputs("</p>\n", f);
    }
    fputs("</section>\n", f);
}

/* Clicking a column's header sorts the kernel table by it (numbers by
 * value, their units read; again: the other way); the total row stays last. */
static const char sort_script[] =
    "<script>(function () {\n"
    "  var t = document.getElementById('kernels');\n"
    "  if (!t || !t.tHead) return;\n"
    "  var units = {ns: 1e-3, 'µs': 1, ms: 1e3, s: 1e6};\n"
    "  function key(td) {\n"
    "    var s = td.textContent.trim(), m = s.match(/^(-?[0-9.,]+)\\s*([a-zµ]*)/);\n"
    "    if (!m) return s;\n"
    "    var v = parseFloat(m[1].replace(/,/g, ''));\n"
    "    return m[2] in units ? v * units[m[2]] : m[2] === 'k' ? v * 1e3 : m[2] === 'M' ? v * 1e6 : v;\n"
    "  }\n"
    "  Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th, col) {\n"
    "    th.style.cursor = 'pointer';\n"
    "    th.title = 'sort by ' + th.textContent;\n"
    "    th.addEventListener('click', function () {\n"
    "      var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);\n"
    "      var total = rows.filter(function (r) { return r.className === 'total'; });\n"
    "      rows = rows.filter(function (r) { return r.className !== 'total'; });\n"
    "      var down = th.getAttribute('data-sort') !== 'down';\n"
    "      rows.sort(function (a, b) {\n"
    "        var x = key(a.cells[col]), y = key(b.cells[col]);\n"
    "        var c = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));\n"
    "        return down ? -c : c;\n"
    "      });\n"
    "      Array.prototype.forEach.call(t.tHead.rows[0].cells, function (h) { h.removeAttribute('data-sort'); });\n"
    "      th.setAttribute('data-sort', down ? 'down' : 'up');\n"
    "      rows.concat(total).forEach(function (r) { body.appendChild(r); });\n"
    "    });\n"
    "  });\n"
    "})();</script>\n";

void cli_render_html(FILE *f, const struct cli_view *v)
{
    head(f, v->r);
    intro(f, v);
    chart_bars(f, v);
    chart_hist(f, v);
    chart_kernel_hists(f, v);
    chart_starved(f, v);
    table(f, v);
    where(f, v);
    fputs(sort_script, f);
    fputs("</body>\n</html>\n", f);
}
