#!/usr/bin/env python3
"""Writes a large but valid report for the memory tests of tests/cli/run.sh:
the kernels of a fixture and EVENTS trace events (launch, gpu, starved in
turn, as TRLAT_TRACE writes them), or with --kernels K that many kernels
(copies of the fixture's, renamed) instead.

usage: make_large.py FIXTURE OUT [--events N] [--kernels K] [--pid PID]
"""
import argparse
import json

LAUNCH = ('{"kind":"launch","tid":%d,"kernel":"%s","start_ns":%d,"end_ns":%d,"py_ns":%d,'
          '"stream":"0x55d0c0b41200","corr":%d,"grid":[4,1,1],"block":[128,1,1]}')
GPU = '{"kind":"gpu","kernel":"%s","device":0,"stream":7,"start_ns":%d,"end_ns":%d,"corr":%d,"source":"driver"}'
STARVED = '{"kind":"starved","kernel":"%s","device":0,"stream":7,"scope":"stream","start_ns":%d,"end_ns":%d}'


def events(n, pid, names):
    for i in range(n):
        corr, t, name = i // 3 + 1, 1000 * i, names[i % len(names)]
        kind = i % 3
        if kind == 0:
            yield LAUNCH % (pid, name, t + 300, t + 900, t, corr)
        elif kind == 1:
            yield GPU % (name, t + 200, t + 700, corr)
        else:
            yield STARVED % (name, t, t + 100)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fixture")
    ap.add_argument("out")
    ap.add_argument("--events", type=int, default=0)
    ap.add_argument("--kernels", type=int, default=0)
    ap.add_argument("--pid", type=int, default=0)
    a = ap.parse_args()
    doc = json.load(open(a.fixture))
    if a.pid:
        doc["pid"] = a.pid
    if a.kernels:
        base = doc["kernels"]
        doc["kernels"] = [dict(base[i % len(base)], name="kernel_%d" % i) for i in range(a.kernels)]
        doc["totals"]["kernels"] = a.kernels
        doc["totals"]["launches"] = sum(k["launches"] for k in doc["kernels"])
        doc["totals"]["driver_ns"] = sum(k["driver_ns"]["sum"] for k in doc["kernels"])
    doc.pop("events", None)
    head = json.dumps(doc)[:-1]
    names = [k["name"] for k in doc["kernels"]]
    with open(a.out, "w") as f:
        f.write(head + ', "events": [\n')
        chunk = []
        for i, e in enumerate(events(a.events, doc["pid"], names)):
            chunk.append(e)
            if len(chunk) == 100000:
                f.write(",\n".join(chunk) + (",\n" if i + 1 < a.events else ""))
                chunk = []
        f.write(",\n".join(chunk) + "\n]}\n")


if __name__ == "__main__":
    main()
