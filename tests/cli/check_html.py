#!/usr/bin/env python3
"""Opens a `trlat report --format html` page in headless Chromium and checks
that it renders: the expected number of SVG charts, each with a non-zero
size and non-empty marks, the kernel table, and no console errors.

usage: check_html.py PAGE.html CHARTS [SITE_ROWS,FALLBACK_ROWS,USER_SITE_ROWS]

A copy of the page gets two probe scripts: one at the top of <head> that
records errors and console.error calls, one at the end of <body> that
measures the charts, clicks the kernel table's first header twice (the
page's own script sorts it) and writes the results into the DOM, which
--dump-dom prints. Chromium's own console log (--enable-logging) is scanned
too. Prints one line; exit 0 if good, 1 if not, 3 if no Chromium is installed.
"""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HEAD_PROBE = """<script>window.__trlatErrors = [];
window.addEventListener('error', function (e) {
  __trlatErrors.push('error: ' + (e.message || (e.target && (e.target.src || e.target.href)) || '?'));
}, true);
(function () { var ce = console.error; console.error = function () {
  __trlatErrors.push('console.error: ' + Array.prototype.join.call(arguments, ' ')); ce.apply(console, arguments); }; })();
</script>"""

TAIL_PROBE = """<script>(function () {
  var charts = [];
  document.querySelectorAll('svg').forEach(function (s) {
    var r = s.getBoundingClientRect(), marks = 0;
    s.querySelectorAll('rect').forEach(function (x) { var b = x.getBBox(); if (b.width > 0 && b.height > 0) marks++; });
    charts.push({id: s.id, width: r.width, height: r.height, marks: marks});
  });
  var table = document.getElementById('kernels');
  function shown(id) {  /* rows of a table that is laid out on the page */
    var t = document.getElementById(id);
    if (!t) return 0;
    var r = t.getBoundingClientRect();
    return r.width > 0 && r.height > 0 ? t.rows.length : 0;
  }
  /* the kernel table sorted by a click on its first header (launches), then
   * again: descending, then the reverse, the total row last both times */
  var sorted = null;
  if (table && table.tHead) {
    var body = table.tBodies[0], th = table.tHead.rows[0].cells[0];
    var col = function () {
      return Array.prototype.map.call(body.rows, function (r) {
        return r.className === 'total' ? 'total' : parseInt(r.cells[0].textContent.replace(/,/g, ''), 10);
      });
    };
    th.click();
    var first = col();
    th.click();
    var second = col();
    var nums = first.slice(0, -1);
    sorted = first[first.length - 1] === 'total' && second[second.length - 1] === 'total' &&
      nums.every(function (v, i) { return i === 0 || nums[i - 1] >= v; }) &&
      JSON.stringify(second.slice(0, -1)) === JSON.stringify(nums.slice().reverse());
  }
  var pre = document.createElement('pre');
  pre.id = 'trlat-probe';
  var mark = 'TRLAT' + '-PROBE';  /* split: the marker must not appear in this source */
  pre.textContent = mark + JSON.stringify({charts: charts, errors: window.__trlatErrors,
    rows: table ? table.rows.length : 0, sites: shown('sites'), fallbacks: shown('fallbacks'), user_sites: shown('user-sites'), sorted: sorted,
    title: document.title}) + mark;
  document.body.appendChild(pre);
})();</script>"""


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def probe(page, chrome, tmp):
    text = open(page, encoding="utf-8").read()
    if "<head>" not in text or "</body>" not in text:
        return None, "no <head> or </body> in the page"
    text = text.replace("<head>", "<head>" + HEAD_PROBE, 1).replace("</body>", TAIL_PROBE + "</body>", 1)
    copy = os.path.join(tmp, "page.html")
    open(copy, "w", encoding="utf-8").write(text)
    cmd = [chrome, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--no-first-run", "--user-data-dir=" + os.path.join(tmp, "profile"), "--enable-logging=stderr",
           "--v=0", "--virtual-time-budget=3000", "--window-size=1200,1600", "--dump-dom", "file://" + copy]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    console = [l for l in p.stderr.splitlines() if ":CONSOLE(" in l or "Uncaught" in l]
    m = re.search(r"TRLAT-PROBE(.*?)TRLAT-PROBE", p.stdout, re.S)
    if not m:
        return None, "the page did not render (chromium exit %d)" % p.returncode
    result = json.loads(html.unescape(m.group(1)))
    result["console"] = console
    return result, None


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: check_html.py PAGE.html CHARTS [SITE_ROWS,FALLBACK_ROWS]")
    chrome = browser()
    if not chrome:
        print("no chromium installed")
        return 3
    with tempfile.TemporaryDirectory() as tmp:
        r, err = probe(sys.argv[1], chrome, tmp)
    if err:
        print(err)
        return 1
    charts, want = r["charts"], int(sys.argv[2])
    problems = []
    if len(charts) != want:
        problems.append("%d charts, expected %d" % (len(charts), want))
    for c in charts:
        if not (c["width"] > 0 and c["height"] > 0 and c["marks"] > 0):
            problems.append("chart %s is empty (%gx%g, %d marks)" % (c["id"], c["width"], c["height"], c["marks"]))
    if r["rows"] < 3:
        problems.append("kernel table has %d rows" % r["rows"])
    if r["sorted"] is not True:
        problems.append("the kernel table did not sort by launches on a click of its header")
    if len(sys.argv) == 4:  # the call sites, fallbacks and user sites tables, laid out with their rows
        sites, fallbacks, user_sites = (int(x) for x in sys.argv[3].split(","))
        if (r["sites"], r["fallbacks"], r["user_sites"]) != (sites, fallbacks, user_sites):
            problems.append("sites table %d rows, fallbacks %d, user sites %d; expected %d, %d, %d" % (
                r["sites"], r["fallbacks"], r["user_sites"], sites, fallbacks, user_sites))
    if r["errors"] or r["console"]:
        problems.append("console errors: %s" % "; ".join(r["errors"] + r["console"])[:300])
    if problems:
        print("; ".join(problems))
        return 1
    print("rendered by %s: %s; table %d rows (sorts on a click), sites %d, fallbacks %d, user sites %d; "
          "no console errors" % (os.path.basename(chrome),
                                 ", ".join("%s %gx%g" % (c["id"], c["width"], c["height"]) for c in charts),
                                 r["rows"], r["sites"], r["fallbacks"], r["user_sites"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
