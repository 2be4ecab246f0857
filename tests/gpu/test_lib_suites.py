"""The libraries' own op tests under the fast path (GPU machine).

    python3 tests/gpu/test_lib_suites.py   # PASS/FAIL lines, exit 1 on any FAIL

Runs Liger-Kernel's and FlagGems' own pytest files (scripts/fetch-suites.sh
puts them in .suites/; SUITES overrides) under libtrlat.so with
TRLAT_FASTPATH=0, 1 and verify, one after the other, and checks that every
test that ran in all three ended the same way, that verify mode found no
mismatch over them, and that the fast path served calls (summed over
every report of the run: pytest's children write their own). Each run has
SUITE_S seconds (default 45); one cut short is stopped with SIGTERM (trlat
still writes its report) and the tests it finished are compared. FlagGems'
run quick (--mode quick). Prints each library's outcomes and its share of
Triton calls served.
"""
import glob
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

from common import LIB, ROOT, check, summary

SUITES = os.environ.get("SUITES", os.path.join(ROOT, ".suites"))
BUDGET = float(os.environ.get("SUITE_S", "45"))
LIBS = {
    "liger": ("liger", ["test/transformers/test_rms_norm.py", "test/transformers/test_swiglu.py",
                        "test/transformers/test_geglu.py", "test/transformers/test_rope.py",
                        "test/transformers/test_layer_norm.py", "test/transformers/test_cross_entropy.py"], []),
    "flaggems": ("flaggems", ["tests/test_tensor_wrapper.py", "tests/test_pointwise_dynamic.py",
                              "tests/test_binary_pointwise_ops.py", "tests/test_unary_pointwise_ops.py",
                              "tests/test_norm_ops.py", "tests/test_reduction_ops.py"], ["--mode", "quick"]),
}
OUTCOME = re.compile(r"^(\S+::\S+) (PASSED|FAILED|SKIPPED|XFAIL|XPASS|ERROR)")


def run(lib, mode):
    d, files, extra = LIBS[lib]
    cwd = os.path.join(SUITES, d)
    fd, rpt = tempfile.mkstemp(prefix="trlat-gpu-suite-%s-%s-" % (lib, mode), suffix=".json")
    os.close(fd)
    os.unlink(rpt)
    env = dict(os.environ, LD_PRELOAD=LIB, TRLAT_FASTPATH=mode, TRLAT_OUTPUT=rpt, TRLAT_CUPTI="0", TRLAT_SUMMARY="0",
               PYTHONPATH=cwd + os.pathsep + os.environ.get("PYTHONPATH", ""))
    files = [f for f in files if os.path.exists(os.path.join(cwd, f))]
    p = subprocess.Popen([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-p", "no:randomly",
                          "-W", "ignore", *extra, *files], cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = p.communicate(timeout=BUDGET)
        cut = False
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGTERM)
        try:
            out, _ = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
        cut = True
    outcomes = {}
    for line in out.splitlines():
        m = OUTCOME.match(line)
        if m:
            outcomes[m.group(1)] = m.group(2)
    # pytest's children (compile workers, multiprocessing tests) write their
    # own reports beside it (NAME.1.json, ...): all of them are read
    reps = []
    for path in sorted(glob.glob(rpt[:-len(".json")] + "*.json")):
        with open(path) as f:
            reps.append(json.load(f))
        keep = os.environ.get("TRLAT_GPU_REPORTS")
        if keep:
            os.makedirs(keep, exist_ok=True)
            os.replace(path, os.path.join(keep, os.path.basename(path)))
        else:
            os.unlink(path)
    rep = {"kernels": [k for r in reps for k in r.get("kernels", [])]} if reps else None
    if not outcomes:
        print(out[-3000:])
    return outcomes, rep, cut


def fp_totals(rep):
    t = {"hits": 0, "misses": 0, "fallbacks": {}}
    for k in (rep or {}).get("kernels", []):
        f = k.get("fastpath")
        if not f:
            continue
        t["hits"] += f["hits"]
        t["misses"] += f["misses"]
        for r, n in f["fallbacks"].items():
            t["fallbacks"][r] = t["fallbacks"].get(r, 0) + n
    return t


def main():
    for lib in LIBS:
        if not os.path.isdir(os.path.join(SUITES, LIBS[lib][0])):
            check("%s: its tests are in %s (scripts/fetch-suites.sh)" % (lib, SUITES), False)
            continue
        got = {m: run(lib, m) for m in ("0", "1", "verify")}
        common_ids = set.intersection(*(set(o) for o, _, _ in got.values()))
        counts = {m: len(o) for m, (o, _, _) in got.items()}
        differ = sorted(t for t in common_ids if len({got[m][0][t] for m in got}) > 1)
        tally = {}
        for t in common_ids:
            tally[got["0"][0][t]] = tally.get(got["0"][0][t], 0) + 1
        check("%s: tests ran in all three modes" % lib, len(common_ids) >= 10, "%s (cut: %s)" %
              (counts, {m: c for m, (_, _, c) in got.items()}))
        check("%s: each ended the same way with the fast path off, on and in verify mode" % lib, not differ,
              "%d tests %s; differ: %s" % (len(common_ids), tally, differ[:5]))
        on, ver = fp_totals(got["1"][1]), fp_totals(got["verify"][1])
        check("%s: verify mode found no mismatch" % lib, got["verify"][1] is not None and
              not ver["fallbacks"].get("verify_mismatch"), str(ver))
        calls = on["hits"] + on["misses"] + sum(on["fallbacks"].values())
        check("%s: the fast path served calls" % lib, on["hits"] > 0, str(on))
        print("TABLE suite %s tests %d %s; Triton calls %d, served %.1f%%, fallbacks %s" %
              (lib, len(common_ids), tally, calls, 100 * on["hits"] / max(calls, 1), on["fallbacks"]))


if __name__ == "__main__":
    main()
    sys.exit(summary())
