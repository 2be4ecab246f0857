#!/usr/bin/env python3
"""Checks a `trlat trace` output against the Chrome trace event format and
against the report it came from.

usage: check_trace.py TRACE.json REPORT.json [--perfetto]

Always: the JSON object format ({"traceEvents": [...], "displayTimeUnit"}),
the fields each phase needs (X: name, ts, dur; M: process/thread names and
sort indexes; s/f: flow ids, "f" binding to its enclosing slice), slices on
one thread nesting properly (Perfetto's rule), every flow end inside a slice,
and the counts of host, python, GPU and starved slices matching the report's
events. With --perfetto, also loads the trace in Perfetto's trace_processor
(Python package `perfetto`) and compares its slice and flow counts; when that
is not possible the reason is printed and the exit status is 3.
Prints one line; exit 0 when the trace is good, 1 when not.
"""
import contextlib
import json
import sys
from collections import defaultdict

PHASES = {"X", "M", "s", "f"}
META = {"process_name", "thread_name", "process_sort_index", "thread_sort_index"}


class Bad(Exception):
    pass


def need(cond, what):
    if not cond:
        raise Bad(what)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_id(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def check_event(i, e):
    need(isinstance(e, dict), "event %d is not an object" % i)
    ph = e.get("ph")
    need(ph in PHASES, "event %d: unexpected ph %r" % (i, ph))
    need(is_id(e.get("pid")) and is_id(e.get("tid")), "event %d: pid/tid must be non-negative integers" % i)
    need(isinstance(e.get("name"), str) and e["name"], "event %d: no name" % i)
    if ph == "X":
        need(is_num(e.get("ts")) and e["ts"] >= 0, "event %d: bad ts" % i)
        need(is_num(e.get("dur")) and e["dur"] >= 0, "event %d: bad dur" % i)
        need(isinstance(e.get("cat"), str), "event %d: no cat" % i)
        need(isinstance(e.get("args", {}), dict), "event %d: args not an object" % i)
    elif ph == "M":
        need(e["name"] in META, "event %d: unknown metadata %r" % (i, e["name"]))
        args = e.get("args")
        need(isinstance(args, dict), "event %d: metadata without args" % i)
        if e["name"].endswith("_name"):
            need(isinstance(args.get("name"), str) and args["name"], "event %d: empty name" % i)
        else:
            need(is_id(args.get("sort_index")), "event %d: bad sort_index" % i)
    else:
        need(is_id(e.get("id")), "event %d: flow without an integer id" % i)
        need(is_num(e.get("ts")), "event %d: flow without ts" % i)
        if ph == "f":
            need(e.get("bp") == "e", "event %d: flow end must bind to its enclosing slice (bp e)" % i)


def ns(us):
    return round(us * 1000)


def check_nesting(slices):
    """Per thread: sorted by (ts, -dur), each slice closes within its parent
    (compared in whole nanoseconds, as Perfetto imports them)."""
    for (pid, tid), spans in slices.items():
        stack = []
        for ts, dur, name in sorted(((ns(t), ns(d), n) for t, d, n in spans), key=lambda s: (s[0], -s[1])):
            while stack and ts >= stack[-1][0] + stack[-1][1]:
                stack.pop()
            if stack:
                need(ts + dur <= stack[-1][0] + stack[-1][1],
                     "slices overlap without nesting on pid %d tid %d: %s" % (pid, tid, name))
            stack.append((ts, dur, name))


def inside(slices, key, ts):
    return any(ns(s) <= ns(ts) <= ns(s) + ns(d) for s, d, _ in slices.get(key, ()))


def check(trace, report):
    need(isinstance(trace, dict), "top level is not an object")
    need(trace.get("displayTimeUnit") in ("ns", "ms"), "displayTimeUnit missing")
    events = trace.get("traceEvents")
    need(isinstance(events, list) and events, "traceEvents missing or empty")
    slices, cats, flows = defaultdict(list), defaultdict(int), defaultdict(dict)
    named_pids = set()
    for i, e in enumerate(events):
        check_event(i, e)
        key = (e["pid"], e["tid"])
        if e["ph"] == "X":
            slices[key].append((e["ts"], e["dur"], e["name"]))
            cats[e["cat"]] += 1
        elif e["ph"] == "M" and e["name"] == "process_name":
            named_pids.add(e["pid"])
        elif e["ph"] in "sf":
            need(e["ph"] not in flows[e["id"]], "flow %d has two %s events" % (e["id"], e["ph"]))
            flows[e["id"]][e["ph"]] = (key, e["ts"])
    check_nesting(slices)
    for fid, ends in flows.items():
        need(set(ends) == {"s", "f"}, "flow %d lacks its %s" % (fid, "start" if "s" not in ends else "end"))
        for ph, (key, ts) in ends.items():
            need(inside(slices, key, ts), "flow %d %s is outside every slice" % (fid, ph))
    need({pid for pid, _ in slices} <= named_pids, "a process with slices has no process_name")
    evs = report.get("events", [])
    want = {
        "launch": sum(e["kind"] == "launch" for e in evs),
        "python": sum(e["kind"] == "launch" and e.get("py_ns") is not None for e in evs),
        "gpu": sum(e["kind"] == "gpu" for e in evs),
        "starved": sum(e["kind"] == "starved" for e in evs),
    }
    for cat, n in want.items():
        need(cats.get(cat, 0) == n, "%d %s slices, the report has %d" % (cats.get(cat, 0), cat, n))
    return sum(len(v) for v in slices.values()), len(flows)


def perfetto_counts(path):
    from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig

    tp = TraceProcessor(trace=path, config=TraceProcessorConfig(load_timeout=30))
    try:
        n_slices = next(iter(tp.query("select count(*) as n from slice"))).n
        n_flows = next(iter(tp.query("select count(*) as n from flow"))).n
    finally:
        tp.close()
    return n_slices, n_flows


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__.strip().splitlines()[3])
    try:
        trace = json.load(open(args[0]))
        n_slices, n_flows = check(trace, json.load(open(args[1])))
    except (Bad, ValueError, KeyError) as e:
        print("schema check failed: %s" % e)
        return 1
    if "--perfetto" not in sys.argv:
        print("schema check passed (%d slices, %d flows)" % (n_slices, n_flows))
        return 0
    try:
        with contextlib.redirect_stdout(sys.stderr):
            p_slices, p_flows = perfetto_counts(args[0])
    except Exception as e:  # the package or its trace_processor binary is missing
        reason = (str(e).strip().splitlines() or [type(e).__name__])[-1][:160]
        if "curl" in reason:
            reason = "its trace_processor binary, fetched at first use, could not be downloaded"
        print("schema check passed (%d slices, %d flows); perfetto unavailable: %s" % (n_slices, n_flows, reason))
        return 3
    if (p_slices, p_flows) != (n_slices, n_flows):
        print("perfetto trace_processor read %d slices and %d flows, expected %d and %d"
              % (p_slices, p_flows, n_slices, n_flows))
        return 1
    print("perfetto trace_processor loaded it: %d slices, %d flows" % (p_slices, p_flows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
