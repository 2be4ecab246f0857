#!/usr/bin/env python3
"""Writes malformed reports, one per way a report can be broken, for the
bad-input tests of tests/cli/run.sh: every trlat subcommand must exit 2 with
one line naming the file, and never crash.

usage: make_bad.py GOOD_REPORT OUTDIR
"""
import copy
import json
import os
import random
import sys

M = 2 ** 63 - 1


def edits(good):
    """name -> document (dict/list) or raw text/bytes."""
    raw = json.dumps(good)
    out = {
        "empty": b"",
        "whitespace": b" \n\t ",
        "truncated": raw[: len(raw) // 2].encode(),
        "binary": bytes(random.Random(7).randrange(256) for _ in range(4096)),
        "nul-bytes": b"\0" * 64,
        "invalid-utf8": b'{"schema": "trlat-report/1", "argv0": "\xff\xfe"}',
        "escaped-nul": raw.replace('"argv0": "python3"', '"argv0": "py\\u0000thon"').encode(),
        "not-json": b"schema: trlat-report/1\n",
        "top-level-array": [good],
        "top-level-number": b"42",
        "deep-nesting": b"[" * 100000,
        "duplicate-key": raw.replace('"pid": 4242', '"pid": 4242, "pid": 4243').encode(),
        "huge-number": raw.replace('"pid": 4242', '"pid": 9223372036854775808').encode(),
        "huge-negative": raw.replace('"pid": 4242', '"pid": -9223372036854775809').encode(),
        "exponent-number": raw.replace('"pid": 4242', '"pid": 1e400').encode(),
    }

    def mod(name, fn):
        d = copy.deepcopy(good)
        fn(d)
        out[name] = d

    k0 = lambda d: d["kernels"][0]  # noqa: E731
    mod("other-schema", lambda d: d.update(schema="trlat-report/2"))
    mod("no-schema", lambda d: d.pop("schema"))
    mod("schema-not-string", lambda d: d.update(schema=1))
    mod("other-hist-scheme", lambda d: d.update(hist_scheme="log10-v9"))
    mod("missing-totals", lambda d: d.pop("totals"))
    mod("missing-kernels", lambda d: d.pop("kernels"))
    mod("kernels-object", lambda d: d.update(kernels={}))
    mod("negative-count", lambda d: k0(d).update(launches=-1))
    mod("float-count", lambda d: k0(d)["driver_ns"].update(sum=1.5))
    mod("string-count", lambda d: k0(d).update(launches="400"))
    mod("bool-count", lambda d: d["totals"].update(launches=True))
    mod("name-number", lambda d: k0(d).update(name=42))
    mod("stats-array", lambda d: k0(d).update(driver_ns=[1, 2]))
    mod("stats-null-required", lambda d: k0(d).update(driver_ns=None))
    mod("bucket-out-of-range", lambda d: k0(d)["driver_ns"].update(hist=[[304, 1]]))
    mod("buckets-unsorted", lambda d: k0(d)["driver_ns"].update(hist=[[80, 1], [79, 1]]))
    mod("bucket-not-pair", lambda d: k0(d)["driver_ns"].update(hist=[[80, 1, 2]]))
    mod("bucket-counts-overflow", lambda d: k0(d)["driver_ns"].update(hist=[[80, M], [81, M]]))
    mod("min-above-max", lambda d: k0(d)["driver_ns"].update(min=10, max=5))
    mod("sources-missing", lambda d: k0(d).pop("sources"))
    mod("fastpath-string", lambda d: k0(d).update(fastpath="on"))
    mod("call-site-no-name", lambda d: k0(d)["call_sites"][0].pop("site"))
    mod("event-bad-time", lambda d: d["events"][0].update(start_ns="soon"))
    mod("event-no-kind", lambda d: d["events"][0].pop("kind"))
    launch = lambda d: next(e for e in d["events"] if e["kind"] == "launch")  # noqa: E731
    mod("event-dims", lambda d: launch(d).update(grid=[1, 2]))
    mod("config-stacks-string", lambda d: d["config"].update(stacks="yes"))
    mod("clock-no-source", lambda d: d["clock"].pop("source"))
    mod("merged-from-empty", lambda d: d.update(merged_from=[]))
    # Fields added later (a good report may lack them; when present they are checked).
    py = {"hook": "installed", "triton_version": "3.6.0", "reason": None, "calls": 3, "nested_calls": 0,
          "calls_one_launch": 3, "calls_multi_launch": 0, "calls_without_launch": {"warmup": 0, "error": 0, "other": 0}}
    gpu = {"kernel_records": 5, "devices": 1, "busy_ns": 100, "starved_ns": 0, "starved_launches": 0,
           "stream_starved_ns": 0, "dropped_records": 0, "untimed_records": 0, "late_records": 0,
           "unjoined_records": 5, "joined_by_trlat_id": 0, "other_kernel_records": 0}
    edit = lambda obj, **kw: dict(copy.deepcopy(obj), **kw)  # noqa: E731
    mod("errors-string", lambda d: k0(d).update(errors="3"))
    mod("errors-negative", lambda d: k0(d).update(errors=-1))
    mod("python-string", lambda d: d.update(python="installed"))
    mod("python-no-hook", lambda d: d.update(python={k: v for k, v in py.items() if k != "hook"}))
    mod("python-hook-number", lambda d: d.update(python=edit(py, hook=1)))
    mod("python-version-number", lambda d: d.update(python=edit(py, triton_version=3.6)))
    mod("python-calls-fraction", lambda d: d.update(python=edit(py, calls=1.5)))
    mod("python-without-launch-array", lambda d: d.update(python=edit(py, calls_without_launch=[0, 0, 0])))
    mod("python-without-launch-no-error", lambda d: d.update(
        python=edit(py, calls_without_launch={"warmup": 0, "other": 0})))
    mod("gpu-array", lambda d: d.update(gpu=[]))
    mod("gpu-no-unjoined", lambda d: d.update(gpu={k: v for k, v in gpu.items() if k != "unjoined_records"}))
    mod("gpu-devices-negative", lambda d: d.update(gpu=edit(gpu, devices=-1)))
    mod("gpu-counter-huge", lambda d: d.update(gpu=edit(gpu, busy_ns=M + 1)))
    starved = lambda d: next(e for e in d["events"] if e["kind"] == "starved")  # noqa: E731
    gpu_ev = lambda d: next(e for e in d["events"] if e["kind"] == "gpu")  # noqa: E731
    mod("event-scope-number", lambda d: starved(d).update(scope=1))
    mod("event-cupti-corr-string", lambda d: gpu_ev(d).update(cupti_corr="17"))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: make_bad.py GOOD_REPORT OUTDIR")
    good = json.load(open(sys.argv[1]))
    os.makedirs(sys.argv[2], exist_ok=True)
    for name, doc in edits(good).items():
        data = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
        with open(os.path.join(sys.argv[2], name + ".json"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
