#!/usr/bin/env python3
"""Memory of the trlat CLI on large reports, for tests/cli/run.sh: the peak
RSS of `trlat report` on a report of 2 million events stays far below the
file's size, `trlat merge` of 16 reports takes about what merging one does,
and a report that does not fit in memory (ulimit -v) says "out of memory"
with the file and its size. Each run is held to an address-space limit, so
a CLI that loads whole reports fails quickly instead of taking gigabytes.

usage: check_memory.py PEAK_RSS TRLAT FIXTURE TMPDIR [NAME]   (NAME: one check)
(PEAK_RSS: tests/cli/peak_rss.c built)
Prints "ok NAME (...)" or "FAIL NAME: why" per check.
"""
import os
import shutil
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
MB = 1 << 20
PEAK_RSS = None


def make(fixture, out, *args):
    subprocess.run([sys.executable, os.path.join(here, "make_large.py"), fixture, out, *args], check=True)
    return out


def run(cmd, limit):
    """(exit status, peak RSS in bytes, stderr) of cmd under an address-space
    limit, through peak_rss (tests/cli/peak_rss.c)."""
    p = subprocess.run([PEAK_RSS, str(limit // 1024), *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.decode(errors="replace").strip().split("\n")
    return p.returncode, int(err[-1].split()[1]) * 1024, "\n".join(err[:-1])


# Each check returns (passed, what it saw).

def check_report(trlat, fixture, tmp):
    big = make(fixture, os.path.join(tmp, "big.json"), "--events", "2000000")
    size = os.path.getsize(big)
    rc, rss, err = run([trlat, "report", big], 1024 * MB)
    os.unlink(big)
    if rc != 0:
        return False, "exit %d: %s" % (rc, err[:200])
    return rss < size // 8, "peak RSS %.1f MB for a %.0f MB report of 2,000,000 events" % (rss / MB, size / MB)


def check_merge(trlat, fixture, tmp):
    inputs = [make(fixture, os.path.join(tmp, "rank0.json"), "--events", "30000")]
    for i in range(1, 16):
        inputs.append(shutil.copy(inputs[0], os.path.join(tmp, "rank%d.json" % i)))
    size = sum(os.path.getsize(p) for p in inputs)
    out = os.path.join(tmp, "merged.json")
    rc1, rss1, err1 = run([trlat, "merge", inputs[0], "-o", out], 512 * MB)
    rc16, rss16, err16 = run([trlat, "merge", *inputs, "-o", out], 512 * MB)
    merged = os.path.getsize(out) if rc16 == 0 else 0
    for p in inputs + [out]:
        os.unlink(p)
    if rc1 or rc16:
        return False, "exit %d and %d: %s" % (rc1, rc16, (err1 or err16)[:200])
    if merged < size:
        return False, "the merge of 16 is %d bytes, its inputs %d" % (merged, size)
    return rss16 < rss1 * 1.25 + 8 * MB, "peak RSS %.1f MB merging 1 report, %.1f MB merging 16 (%.0f MB in all)" % (
        rss1 / MB, rss16 / MB, size / MB)


def check_out_of_memory(trlat, fixture, tmp):
    path = make(fixture, os.path.join(tmp, "kernels.json"), "--kernels", "30000")
    size = os.path.getsize(path)
    rc, _, err = run([trlat, "report", path], 160 * MB)
    os.unlink(path)
    want = "trlat: %s: out of memory reading this report (%.1f MB)" % (path, size / 1e6)
    if rc != 2 or err != want:
        return False, "exit %d, stderr %r; expected exit 2 and %r" % (rc, err[:300], want)
    return True, err[len("trlat: %s: " % path):]


CHECKS = {"memory-report-large": check_report, "memory-merge-1-vs-16": check_merge,
          "memory-out-of-memory-says-so": check_out_of_memory}


def main():
    global PEAK_RSS
    PEAK_RSS, trlat, fixture, tmp = sys.argv[1:5]
    names = sys.argv[5:] or list(CHECKS)
    failed = False
    for name in names:
        ok, why = CHECKS[name](trlat, fixture, tmp)
        print(("ok %s (%s)" if ok else "FAIL %s: %s") % (name, why))
        failed |= not ok
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
