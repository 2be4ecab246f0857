#!/usr/bin/env python3
"""Loads `trlat trace --format kineto` traces in HolisticTraceAnalysis and
checks its kernel-launch statistics against the reports they came from:
one row per launch joined to its GPU kernel by correlation, with the
report's host and GPU durations.

usage: check_hta.py TRLAT REPORT.json...   (HTA importable: scripts/check-kineto.sh)
Prints one line per report; exit 1 on a difference.
"""
import json
import os
import subprocess
import sys
import tempfile

from hta.trace_analysis import TraceAnalysis


def expected(report):
    r = json.load(open(report))
    launches = {e["corr"]: e for e in r["events"] if e.get("kind") == "launch" and e.get("corr")}
    gpu = {e["corr"]: e for e in r["events"] if e.get("kind") == "gpu" and e.get("corr") in launches}
    return launches, gpu


def main():
    trlat, reports, failed = sys.argv[1], sys.argv[2:], 0
    for report in reports:
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([trlat, "trace", report, "--format", "kineto", "-o", os.path.join(d, "rank0.json")],
                           check=True)
            rank = json.load(open(report)).get("rank") or 0
            stats = TraceAnalysis(trace_dir=d).get_cuda_kernel_launch_stats(ranks=[rank], visualize=False)
        df = stats[rank]
        launches, gpu = expected(report)
        got = sorted(int(c) for c in df["correlation"])
        want = sorted(gpu)
        # HTA keeps whole microseconds (it rounds the start and the end down)
        dur_ok = all(abs(row.gpu_duration - (gpu[int(row.correlation)]["end_ns"] -
                                             gpu[int(row.correlation)]["start_ns"]) / 1e3) < 2
                     for row in df.itertuples())
        ok = got == want and dur_ok and len(got) > 0
        failed |= not ok
        print("%s %s: HTA joined %d launches to their kernels (the report: %d of %d launches have one)%s" % (
            "ok  " if ok else "FAIL", os.path.basename(report), len(got), len(want), len(launches),
            "" if dur_ok else "; GPU durations differ"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
