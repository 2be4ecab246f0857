#!/usr/bin/env bash
# Tests of the `trlat` command-line tool, run against $BUILD/trlat (BUILD
# defaults to build, relative to the repository root).
#
#   BUILD=build tests/cli/run.sh
#
# Prints "ok NAME" or "FAIL NAME: why" per test ("skip NAME: why" when a tool
# it needs is missing), details of failures on stderr, and ends with
# "N passed, N failed"; exits 1 if any failed. Needs python3; uses chromium
# (HTML test), clang with libFuzzer (fuzz test, FUZZ_SECONDS, default 20) and
# cc (trlat run tests) when present. Builds nothing but the fuzz target and
# two empty shared objects. UPDATE_GOLDEN=1 rewrites tests/cli/golden/.
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$root/$BUILD ;; esac
TRLAT=$BUILD/trlat
FIX=$here/fixtures
GOLDEN=$here/golden
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
CC=${CC:-cc}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0

ok() { echo "ok $1${2:+ ($2)}"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
skip() { echo "skip $1: $2"; }
# Details for a failure, on stderr so stdout keeps one line per test.
detail() { sed 's/^/  | /' | head -n "${1:-20}" >&2; }

if [ ! -x "$TRLAT" ]; then
    fail build "$TRLAT not found (run make build/trlat)"
    echo "$passed passed, $failed failed"
    exit 1
fi

# run_cmd OUT ERR CMD...: runs CMD with stdout and stderr in files; sets rc.
# (The braces keep bash's "Killed" notice for a CMD a signal ended quiet.)
run_cmd() {
    local out=$1 err=$2
    shift 2
    { "$@" >"$out" 2>"$err"; } 2>/dev/null
    rc=$?
}

# expect_rc NAME WANT CMD...: the exit status alone.
expect_rc() {
    local name=$1 want=$2
    shift 2
    run_cmd "$tmp/out" "$tmp/err" "$@"
    if [ "$rc" = "$want" ]; then ok "$name"; else
        fail "$name" "exit $rc, expected $want"
        detail <"$tmp/err"
    fi
}

# one_line_error NAME FILE CMD...: exit 2, nothing on stdout, exactly one
# stderr line starting "trlat: FILE: " (just "trlat" when FILE is -).
one_line_error() {
    local name=$1 file=$2
    shift 2
    run_cmd "$tmp/out" "$tmp/err" "$@"
    local lines prefix="trlat: $file: "
    lines=$(wc -l <"$tmp/err")
    [ "$file" = - ] && prefix="trlat"
    if [ "$rc" != 2 ]; then
        echo "exit $rc, expected 2"
    elif [ "$lines" != 1 ]; then
        echo "$lines lines on stderr, expected 1"
    elif [ "$(head -c ${#prefix} "$tmp/err")" != "$prefix" ]; then
        echo "message does not start with '$prefix': $(head -c 200 "$tmp/err")"
    elif [ -s "$tmp/out" ]; then
        echo "wrote to stdout"
    fi
}

expect_one_line_error() {
    local name=$1 why
    why=$(one_line_error "$@")
    if [ -z "$why" ]; then ok "$name"; else fail "$name" "$why"; fi
}

# golden NAME DIR CMD...: stdout of CMD (run in DIR, exit 0 or 1) equals
# golden/NAME.
golden() {
    local name=$1 dir=$2
    shift 2
    (cd "$dir" && "$@") >"$tmp/golden.out" 2>"$tmp/golden.err"
    local status=$?
    if [ "$status" -gt 1 ]; then
        fail "golden-$name" "exit $status"
        detail <"$tmp/golden.err"
        return
    fi
    if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
        mkdir -p "$GOLDEN"
        cp "$tmp/golden.out" "$GOLDEN/$name"
    fi
    if [ ! -f "$GOLDEN/$name" ]; then
        fail "golden-$name" "no golden file $GOLDEN/$name (UPDATE_GOLDEN=1 writes it)"
    elif diff -u "$GOLDEN/$name" "$tmp/golden.out" >"$tmp/golden.diff"; then
        ok "golden-$name"
    else
        fail "golden-$name" "output differs from tests/cli/golden/$name (diff on stderr)"
        detail 40 <"$tmp/golden.diff"
    fi
}

# ---- help and usage ----

test_help() {
    local cmd why=
    run_cmd "$tmp/out" "$tmp/err" "$TRLAT" --help
    [ "$rc" = 0 ] && grep -q '^usage: trlat COMMAND' "$tmp/out" || why="trlat --help"
    for cmd in run report diff merge trace; do
        run_cmd "$tmp/out" "$tmp/err" "$TRLAT" "$cmd" --help
        [ "$rc" = 0 ] && grep -q "^usage: trlat $cmd" "$tmp/out" || why="$why trlat $cmd --help"
        run_cmd "$tmp/out" "$tmp/err" "$TRLAT" help "$cmd"
        [ "$rc" = 0 ] && grep -q "^usage: trlat $cmd" "$tmp/out" || why="$why trlat help $cmd"
    done
    run_cmd "$tmp/out" "$tmp/err" "$TRLAT" --version
    [ "$rc" = 0 ] && grep -Eq '^trlat [0-9]+\.[0-9]+' "$tmp/out" || why="$why --version"
    if [ -z "$why" ]; then ok help; else fail help "failed:$why"; fi
}

# docs/CLI.md's usage block of each command is what --help says
test_help_matches_docs() {
    local cmd why=
    for cmd in run report diff merge trace; do
        "$TRLAT" "$cmd" --help 2>/dev/null | python3 -c '
import re, sys
cmd, doc = sys.argv[1], open(sys.argv[2]).read()
help_usage = sys.stdin.read().split("\n\n")[0]
want = " ".join(help_usage.replace("usage: ", "", 1).split())
blocks = [" ".join(b.split()) for b in re.findall(r"\n((?:    trlat %s .*\n)(?:     +\S.*\n)*)" % cmd, doc)]
sys.exit(0 if want in blocks else 1)' "$cmd" "$root/docs/CLI.md" || why="$why $cmd"
    done
    if [ -z "$why" ]; then ok help-matches-docs; else fail help-matches-docs "docs/CLI.md differs from --help for:$why"; fi
}

test_usage_errors() {
    expect_rc usage-no-command 2 "$TRLAT"
    expect_one_line_error usage-unknown-command frobnicate "$TRLAT" frobnicate
    expect_one_line_error usage-report-no-file - "$TRLAT" report
    expect_one_line_error usage-report-unknown-option - "$TRLAT" report "$FIX/basic.json" --bogus
    expect_one_line_error usage-report-bad-top - "$TRLAT" report "$FIX/basic.json" --top ten
    expect_one_line_error usage-report-bad-sort - "$TRLAT" report "$FIX/basic.json" --sort size
    expect_one_line_error usage-report-bad-format - "$TRLAT" report "$FIX/basic.json" --format pdf
    expect_one_line_error usage-report-missing-value - "$TRLAT" report "$FIX/basic.json" --top
    expect_one_line_error usage-diff-one-file - "$TRLAT" diff "$FIX/base.json"
    expect_one_line_error usage-diff-bad-threshold - "$TRLAT" diff "$FIX/base.json" "$FIX/base.json" --threshold -5
    expect_one_line_error usage-diff-bad-metric - "$TRLAT" diff "$FIX/base.json" "$FIX/base.json" --metric speed
    expect_one_line_error usage-diff-base-without-new - "$TRLAT" diff --base "$FIX/base.json"
    expect_one_line_error usage-diff-base-and-files - "$TRLAT" diff --base "$FIX/base.json" --new "$FIX/base.json" "$FIX/base.json"
    expect_one_line_error usage-diff-bad-alpha - "$TRLAT" diff "$FIX/base.json" "$FIX/base.json" --alpha 2
    expect_one_line_error usage-merge-no-output - "$TRLAT" merge "$FIX/rank0.json"
    expect_one_line_error usage-trace-no-file - "$TRLAT" trace
    expect_one_line_error usage-trace-bad-format - "$TRLAT" trace "$FIX/basic.json" --format nsys
    expect_one_line_error usage-run-no-command - "$TRLAT" run --stacks
    expect_one_line_error usage-run-bad-cupti - "$TRLAT" run --cupti=maybe -- true
    expect_one_line_error usage-run-bad-trace - "$TRLAT" run --trace=-1 -- true
    expect_one_line_error usage-run-bad-timing - "$TRLAT" run --timing=some -- true
    expect_one_line_error missing-file "$tmp/none.json" "$TRLAT" report "$tmp/none.json"
    expect_one_line_error directory-as-file "$tmp" "$TRLAT" report "$tmp"
}

# ---- fixtures and golden outputs ----

test_fixtures_consistent() {
    local why
    why=$(python3 "$here/make_fixture.py" --check "$FIX"/*.json 2>&1)
    if [ $? = 0 ]; then ok fixtures-consistent; else fail fixtures-consistent "$why"; fi
}

test_golden() {
    golden report-text-basic.txt "$FIX" "$TRLAT" report basic.json
    golden report-text-nocupti.txt "$FIX" "$TRLAT" report nocupti.json
    golden report-text-sort-starved-top2.txt "$FIX" "$TRLAT" report basic.json --sort starved --top 2
    golden report-csv-basic.csv "$FIX" "$TRLAT" report basic.json --format csv
    golden report-json-basic.json "$FIX" "$TRLAT" report basic.json --format json
    golden report-html-basic.html "$FIX" "$TRLAT" report basic.json --format html
    golden report-html-nocupti.html "$FIX" "$TRLAT" report nocupti.json --format html
    golden diff-regressed.txt "$FIX" "$TRLAT" diff base.json regressed.json
    golden diff-improved.txt "$FIX" "$TRLAT" diff base.json improved.json
    golden diff-identical.txt "$FIX" "$TRLAT" diff base.json base.json
    golden diff-all-metrics.txt "$FIX" "$TRLAT" diff base.json regressed.json --metric all --all --threshold 5
    # reports made with other settings (CUPTI, fast path, stacks): said above the figures
    golden diff-settings.txt "$FIX" "$TRLAT" diff basic.json nocupti.json --threshold 1000
    golden merge-ranks.json "$FIX" "$TRLAT" merge rank0.json rank1.json rank2.json -o -
    golden trace-basic.json "$FIX" "$TRLAT" trace basic.json
    "$TRLAT" merge "$FIX/rank0.json" "$FIX/rank1.json" "$FIX/rank2.json" -o "$tmp/merged.json"
    golden report-text-merged.txt "$tmp" "$TRLAT" report merged.json
    golden trace-merged.json "$tmp" "$TRLAT" trace merged.json
    # The fields added later: launch errors, the python and gpu objects,
    # scoped starved events and cupti_corr.
    golden report-text-hooked1.txt "$FIX" "$TRLAT" report hooked1.json
    golden report-csv-hooked1.csv "$FIX" "$TRLAT" report hooked1.json --format csv
    golden report-json-hooked1.json "$FIX" "$TRLAT" report hooked1.json --format json
    golden report-html-hooked1.html "$FIX" "$TRLAT" report hooked1.json --format html
    golden report-text-latectx.txt "$FIX" "$TRLAT" report latectx.json
    # one launch holding most of a kernel's time: medians, and a note each
    golden report-text-firstcall.txt "$FIX" "$TRLAT" report firstcall.json
    golden report-html-firstcall.html "$FIX" "$TRLAT" report firstcall.json --format html
    # a mean one launch holds (the first call's compile) is listed, not gated
    golden diff-firstcall-cold.txt "$FIX" "$TRLAT" diff firstcall_warm.json firstcall.json --all
    golden diff-firstcall-slower.txt "$FIX" "$TRLAT" diff firstcall.json firstcall_slower.json
    golden diff-hooked.txt "$FIX" "$TRLAT" diff hooked0.json hooked1.json
    golden diff-runs-same.txt "$FIX" "$TRLAT" diff --base run1.json --base run2.json --base run3.json --new run4.json --new run5.json --new run6.json
    golden diff-runs-slower.txt "$FIX" "$TRLAT" diff --base run1.json --base run2.json --base run3.json --new slow1.json --new slow2.json --new slow3.json
    golden diff-runs-two-each.txt "$FIX" "$TRLAT" diff --base run1.json --base run2.json --new slow1.json --new slow2.json
    golden trace-hooked0.json "$FIX" "$TRLAT" trace hooked0.json
    golden merge-hooked.json "$FIX" "$TRLAT" merge hooked0.json hooked1.json latectx.json -o -
    "$TRLAT" merge "$FIX/hooked0.json" "$FIX/hooked1.json" "$FIX/latectx.json" -o "$tmp/merged-hooked.json"
    golden report-text-merged-hooked.txt "$tmp" "$TRLAT" report merged-hooked.json
    golden trace-merged-hooked.json "$tmp" "$TRLAT" trace merged-hooked.json
    golden trace-kineto-hooked1.json "$FIX" "$TRLAT" trace hooked1.json --format kineto
    expect_one_line_error trace-kineto-merged - "$TRLAT" trace "$tmp/merged-hooked.json" --format kineto
}

# ---- diff ----

test_diff_exit_codes() {
    expect_rc diff-exit-regression 1 "$TRLAT" diff "$FIX/base.json" "$FIX/regressed.json"
    expect_rc diff-exit-improvement 0 "$TRLAT" diff "$FIX/base.json" "$FIX/improved.json"
    expect_rc diff-exit-identical 0 "$TRLAT" diff "$FIX/base.json" "$FIX/base.json"
    expect_rc diff-exit-first-call-compiled 0 "$TRLAT" diff "$FIX/firstcall_warm.json" "$FIX/firstcall.json"
    expect_rc diff-exit-first-call-and-slower 1 "$TRLAT" diff "$FIX/firstcall.json" "$FIX/firstcall_slower.json"
    expect_rc diff-exit-reverse-of-improvement 1 "$TRLAT" diff "$FIX/improved.json" "$FIX/base.json"
    expect_rc diff-exit-high-threshold 0 "$TRLAT" diff "$FIX/base.json" "$FIX/regressed.json" --threshold 1000
    expect_rc diff-exit-untouched-metric 0 "$TRLAT" diff "$FIX/base.json" "$FIX/regressed.json" --metric driver,gpu
    expect_rc diff-exit-py-metric 1 "$TRLAT" diff "$FIX/base.json" "$FIX/regressed.json" --metric py
    expect_rc diff-exit-min-launches 1 "$TRLAT" diff "$FIX/base.json" "$FIX/regressed.json" --metric host --min-launches 1000
    expect_rc diff-exit-other-kernels 0 "$TRLAT" diff "$FIX/basic.json" "$FIX/nocupti.json" --metric host --threshold 1000
    expect_rc diff-exit-errors-not-gated 0 "$TRLAT" diff "$FIX/hooked0.json" "$FIX/hooked1.json" --threshold 1000
    # repeated runs of one workload on a drifting machine (run1..6: speeds
    # 0.95..1.13) and of a twice slower one (slow1..3)
    local b=(--base "$FIX/run1.json" --base "$FIX/run2.json" --base "$FIX/run3.json")
    expect_rc diff-exit-one-run-each-cries-wolf 1 "$TRLAT" diff "$FIX/run1.json" "$FIX/run4.json"
    expect_rc diff-exit-runs-same-workload 0 "$TRLAT" diff "${b[@]}" --new "$FIX/run4.json" --new "$FIX/run5.json" --new "$FIX/run6.json"
    expect_rc diff-exit-runs-twice-slower 1 "$TRLAT" diff "${b[@]}" --new "$FIX/slow1.json" --new "$FIX/slow2.json" --new "$FIX/slow3.json"
    expect_rc diff-exit-runs-too-few-to-judge 0 "$TRLAT" diff --base "$FIX/run1.json" --base "$FIX/run2.json" --new "$FIX/slow1.json" --new "$FIX/slow2.json"
    expect_rc diff-exit-runs-alpha 0 "$TRLAT" diff "${b[@]}" --new "$FIX/slow1.json" --new "$FIX/slow2.json" --new "$FIX/slow3.json" --alpha 0.01
    expect_rc diff-exit-runs-one-new 1 "$TRLAT" diff "${b[@]}" --new "$FIX/slow1.json"
}

# ---- merge ----

# py_check NAME ARGS... <SCRIPT: a python check that exits with a reason on failure.
py_check() {
    local name=$1 why
    shift
    why=$(python3 - "$@" 2>&1)
    if [ $? = 0 ] && [ -z "$why" ]; then ok "$name"; else fail "$name" "$(echo "$why" | tail -n 1)"; fi
}

test_merge() {
    local why r0=$FIX/rank0.json r1=$FIX/rank1.json r2=$FIX/rank2.json
    "$TRLAT" merge "$r0" "$r1" "$r2" -o "$tmp/m3.json" 2>"$tmp/err" || { fail merge-three-ranks "merge failed"; detail <"$tmp/err"; return; }
    py_check merge-equals-combined-launches "$tmp/m3.json" "$FIX/combined.json" "$r0" "$r1" "$r2" <<'EOF'
import json, sys
m, c = (json.load(open(p)) for p in sys.argv[1:3])
for k in c["totals"]:
    if m["totals"][k] != c["totals"][k]:
        sys.exit("totals.%s: merged %r, combined %r" % (k, m["totals"][k], c["totals"][k]))
if [k["name"] for k in m["kernels"]] != [k["name"] for k in c["kernels"]]:
    sys.exit("kernel order differs")
for a, b in zip(m["kernels"], c["kernels"]):
    for f in b:
        if a.get(f) != b[f]:
            sys.exit("kernel %s: field %s differs" % (b["name"], f))
if [o["pid"] for o in m["merged_from"]] != [3001, 3002, 3003]:
    sys.exit("merged_from lists %r" % m["merged_from"])
n = sum(len(json.load(open(p))["events"]) for p in sys.argv[3:])
if len(m["events"]) != n or any("pid" not in e for e in m["events"]):
    sys.exit("events: %d, expected %d, each with a pid" % (len(m["events"]), n))
EOF
    why=$(python3 "$here/make_fixture.py" --check "$tmp/m3.json" 2>&1)
    if [ $? = 0 ]; then ok merge-percentiles-from-merged-histograms; else
        fail merge-percentiles-from-merged-histograms "$why"
    fi
    "$TRLAT" merge "$r0" "$r1" -o "$tmp/m01.json" && "$TRLAT" merge "$tmp/m01.json" "$r2" -o "$tmp/m01-2.json"
    py_check merge-of-merged-equals-merge-of-all "$tmp/m01-2.json" "$tmp/m3.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for f in ("totals", "kernels", "merged_from", "events"):
    if a[f] != b[f]:
        sys.exit("%s differs" % f)
EOF
    local rc_all=0
    "$TRLAT" report "$tmp/m3.json" >/dev/null && "$TRLAT" report "$tmp/m3.json" --format html >/dev/null &&
        "$TRLAT" trace "$tmp/m3.json" >/dev/null && "$TRLAT" diff "$tmp/m3.json" "$FIX/combined.json" >/dev/null || rc_all=$?
    if [ "$rc_all" = 0 ]; then ok merge-output-rereadable; else fail merge-output-rereadable "exit $rc_all"; fi
    test_merge_newer_fields
    python3 "$here/make_bad.py" "$FIX/basic.json" "$tmp/bad" >/dev/null
    expect_one_line_error merge-refuses-other-schema "$tmp/bad/other-schema.json" \
        "$TRLAT" merge "$r0" "$tmp/bad/other-schema.json" -o "$tmp/never.json"
    if [ -e "$tmp/never.json" ]; then fail merge-refusal-writes-nothing "output written"; else ok merge-refusal-writes-nothing; fi
}

# Launch errors, python and gpu: exact sums (gpu.devices: the most any
# input saw), the hook's strings kept only when the inputs agree, inputs
# without the objects (latectx's python, the older fixtures') left out.
test_merge_newer_fields() {
    local why h0=$FIX/hooked0.json h1=$FIX/hooked1.json lc=$FIX/latectx.json
    python3 - "$h1" "$tmp/hooked1-other.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["python"].update(hook="failed", triton_version="3.5.1", reason="unknown JITFunction.run")
json.dump(d, open(sys.argv[2], "w"))
EOF
    "$TRLAT" merge "$h0" "$h1" "$lc" -o "$tmp/mh.json" &&
        "$TRLAT" merge "$h0" "$tmp/hooked1-other.json" -o "$tmp/mh-mixed.json" &&
        "$TRLAT" merge "$h0" "$h1" -o "$tmp/mh01.json" && "$TRLAT" merge "$tmp/mh01.json" "$lc" -o "$tmp/mh01-2.json" &&
        "$TRLAT" merge "$FIX/rank0.json" "$h0" -o "$tmp/mh-old.json" 2>"$tmp/err" ||
        { fail merge-newer-fields "merge failed"; detail <"$tmp/err"; return; }
    py_check merge-sums-errors-python-gpu-exactly "$tmp/mh.json" "$h0" "$h1" "$lc" <<'EOF'
import json, sys
m, *ins = (json.load(open(p)) for p in sys.argv[1:])
errors = {}
for d in ins:
    for k in d["kernels"]:
        errors[k["name"]] = errors.get(k["name"], 0) + k["errors"]
got = {k["name"]: k["errors"] for k in m["kernels"]}
if got != errors or sum(errors.values()) == 0:
    sys.exit("kernel errors %r, expected %r" % (got, errors))
pys = [d["python"] for d in ins if d["python"]]
py = m["python"]
for key in ("calls", "nested_calls", "calls_one_launch", "calls_multi_launch"):
    if py[key] != sum(p[key] for p in pys):
        sys.exit("python.%s: %r, expected the sum %r" % (key, py[key], sum(p[key] for p in pys)))
for key in ("warmup", "error", "other"):
    want = sum(p["calls_without_launch"][key] for p in pys)
    if py["calls_without_launch"][key] != want:
        sys.exit("python.calls_without_launch.%s: %r, expected %r" % (key, py["calls_without_launch"][key], want))
if (py["hook"], py["triton_version"], py["reason"]) != ("installed", "3.6.0", None):
    sys.exit("python strings %r" % py)
if len(m["gpu"]) != len(ins[0]["gpu"]):
    sys.exit("gpu has %d counters, the inputs %d" % (len(m["gpu"]), len(ins[0]["gpu"])))
for key, v in m["gpu"].items():
    vals = [d["gpu"][key] for d in ins]
    want = max(vals) if key == "devices" else sum(vals)
    if v != want:
        sys.exit("gpu.%s: %r, expected %r" % (key, v, want))
if m["gpu"]["dropped_records"] != m["totals"]["dropped_records"]:
    sys.exit("gpu.dropped_records and totals.dropped_records differ")
starved = [e for e in m["events"] if e["kind"] == "starved"]
if not starved or any(e.get("scope") not in ("device", "stream") for e in starved):
    sys.exit("starved events lost their scope")
n = sum(1 for d in ins for e in d["events"] if "cupti_corr" in e)
if n == 0 or sum(1 for e in m["events"] if "cupti_corr" in e) != n:
    sys.exit("gpu events lost their cupti_corr")
EOF
    py_check merge-python-strings-mixed "$tmp/mh-mixed.json" <<'EOF'
import json, sys
py = json.load(open(sys.argv[1]))["python"]
if (py["hook"], py["triton_version"], py["reason"]) != ("mixed", "mixed", None):
    sys.exit("hook %r, triton_version %r, reason %r" % (py["hook"], py["triton_version"], py["reason"]))
EOF
    py_check merge-newer-fields-of-merged-equals-merge-of-all "$tmp/mh01-2.json" "$tmp/mh.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for f in ("python", "gpu", "kernels", "events"):
    if a[f] != b[f]:
        sys.exit("%s differs" % f)
EOF
    py_check merge-with-older-report "$tmp/mh-old.json" "$FIX/rank0.json" "$h0" <<'EOF'
import json, sys
m, old, new = (json.load(open(p)) for p in sys.argv[1:])
if m["python"] != new["python"] or m["gpu"] != new["gpu"]:
    sys.exit("python/gpu of the one input that has them not kept as they were")
only_old = {k["name"] for k in old["kernels"]} - {k["name"] for k in new["kernels"]}
if any(k["errors"] != 0 for k in m["kernels"] if k["name"] in only_old):
    sys.exit("kernels of the older report got errors")
old_starved = sum(1 for e in old["events"] if e["kind"] == "starved")
if sum(1 for e in m["events"] if e["kind"] == "starved" and "scope" not in e) != old_starved:
    sys.exit("starved events of the older report changed")
EOF
    why=$(python3 "$here/make_fixture.py" --check "$tmp/mh.json" 2>&1)
    if [ $? = 0 ]; then ok merge-newer-fields-consistent; else fail merge-newer-fields-consistent "$why"; fi
}

# ---- trace ----

perfetto_ready=
perfetto_setup() {
    [ -n "$perfetto_ready" ] && return
    perfetto_ready=no
    if python3 -c 'import perfetto.trace_processor' 2>/dev/null ||
        timeout 120 python3 -m pip install -q --disable-pip-version-check perfetto >/dev/null 2>&1; then
        perfetto_ready=yes
    fi
}

test_trace() {
    perfetto_setup
    local f name
    "$TRLAT" merge "$FIX/rank0.json" "$FIX/rank1.json" "$FIX/rank2.json" -o "$tmp/merged.json"
    "$TRLAT" merge "$FIX/hooked0.json" "$FIX/hooked1.json" "$FIX/latectx.json" -o "$tmp/merged-hooked.json"
    for f in "$FIX/basic.json" "$tmp/merged.json" "$FIX/hooked0.json" "$FIX/latectx.json" "$tmp/merged-hooked.json"; do
        name=trace-format-$(basename "$f" .json)
        if ! "$TRLAT" trace "$f" -o "$tmp/trace.json" 2>"$tmp/err"; then
            fail "$name" "trlat trace failed"
            detail <"$tmp/err"
            continue
        fi
        local args=("$here/check_trace.py" "$tmp/trace.json" "$f")
        [ "$perfetto_ready" = yes ] && args+=(--perfetto)
        local msg status
        msg=$(timeout 180 python3 "${args[@]}" 2>/dev/null)
        status=$?
        case $status in
        0) ok "$name" "$msg" ;;
        3) ok "$name" "$msg; used the schema check" ;;
        *) fail "$name" "$msg" ;;
        esac
    done
    [ "$perfetto_ready" = yes ] || echo "  | perfetto package did not install; trace checked against the schema only" >&2
    expect_one_line_error trace-needs-events "$FIX/nocupti.json" "$TRLAT" trace "$FIX/nocupti.json" -o "$tmp/t.json"
    if grep -q 'TRLAT_TRACE=N' "$tmp/err"; then ok trace-needs-events-says-how; else
        fail trace-needs-events-says-how "message does not mention TRLAT_TRACE=N"
    fi
}

# ---- html in chromium ----

test_html() {
    local f charts msg status
    # NAME:CHARTS:SITE_ROWS,FALLBACK_ROWS,USER_SITE_ROWS (the call sites, fallbacks and user sites tables)
    for f in basic:7:4,3,6 nocupti:5:4,0,0 hooked1:6:3,0,5; do
        where=${f##*:}
        f=${f%:*}
        charts=${f#*:}
        f=${f%:*}
        "$TRLAT" report "$FIX/$f.json" --format html -o "$tmp/$f.html"
        msg=$(python3 "$here/check_html.py" "$tmp/$f.html" "$charts" "$where" 2>&1)
        status=$?
        case $status in
        0) ok "html-chromium-$f" "$msg" ;;
        3) skip "html-chromium-$f" "$msg" ;;
        *) fail "html-chromium-$f" "$msg" ;;
        esac
    done
}

# ---- bad input ----

test_bad_input() {
    python3 "$here/make_bad.py" "$FIX/basic.json" "$tmp/bad" || { fail bad-input "make_bad.py failed"; return; }
    local f name why
    for f in "$tmp"/bad/*.json; do
        name=bad-input-$(basename "$f" .json)
        why=$(one_line_error x "$f" "$TRLAT" report "$f")
        [ -z "$why" ] && why=$(one_line_error x "$f" "$TRLAT" report "$f" --format html)
        [ -z "$why" ] && why=$(one_line_error x "$f" "$TRLAT" diff "$f" "$FIX/basic.json")
        [ -z "$why" ] && why=$(one_line_error x "$f" "$TRLAT" diff "$FIX/basic.json" "$f")
        [ -z "$why" ] && why=$(one_line_error x "$f" "$TRLAT" merge "$FIX/basic.json" "$f" -o "$tmp/m.json")
        [ -z "$why" ] && why=$(one_line_error x "$f" "$TRLAT" trace "$f" -o "$tmp/t.json")
        if [ -z "$why" ]; then ok "$name"; else fail "$name" "$why"; fi
    done
    run_cmd "$tmp/out" "$tmp/err" "$TRLAT" report - </dev/null
    if [ "$rc" = 2 ] && [ "$(cat "$tmp/err")" = "trlat: -: file is empty" ]; then ok bad-input-empty-stdin; else
        fail bad-input-empty-stdin "exit $rc: $(head -c 200 "$tmp/err")"
    fi
    test_bad_input_where
}

# one_line NAME WANT_RC WANT_ERR CMD...: exit status and stderr exactly.
one_line() {
    local name=$1 want_rc=$2 want=$3
    shift 3
    run_cmd "$tmp/out" "$tmp/err" "$@"
    if [ "$rc" = "$want_rc" ] && [ "$(cat "$tmp/err")" = "$want" ]; then ok "$name"; else
        fail "$name" "exit $rc, stderr '$(head -c 300 "$tmp/err")'; expected exit $want_rc, '$want'"
    fi
}

# The events are parsed apart from the rest of the document: an error in
# one of them, or after them, is still placed in the file as a whole.
test_bad_input_where() {
    local name
    python3 - "$FIX/basic.json" "$tmp/where" <<'EOF'
import json, sys
text = json.dumps(json.load(open(sys.argv[1])), indent=1)
def place(name, bad, at, near):
    i = bad.index(at) + len(at)
    line, col = bad.count("\n", 0, i) + 1, i - bad.rfind("\n", 0, i) - 1
    open("%s-%s.json" % (sys.argv[2], name), "w").write(bad)
    open("%s-%s.want" % (sys.argv[2], name), "w").write("line %d, column %d: %s" % (line, col, near))
place("in-event", text.replace('"kind": "launch"', '"kind" "launch"', 1), '"kind" "launch"',
      "':' expected near '\"launch\"'")
place("after-events", text[:-2] + ',\n "merged_from": [{"pid": 1,}]\n}', '"pid": 1,}',
      "string or '}' expected near '}'")
EOF
    for name in in-event after-events; do
        one_line "bad-input-where-$name" 2 \
            "trlat: $tmp/where-$name.json: not valid JSON ($(cat "$tmp/where-$name.want"))" \
            "$TRLAT" report "$tmp/where-$name.json"
    done
}

# ---- unreadable reports: --skip-bad ----

test_skip_bad() {
    local r0=$FIX/rank0.json r2=$FIX/rank2.json cut=$tmp/cut-events.json cutk=$tmp/cut-kernels.json size sizek
    # rank1.json cut short inside its events, and inside its kernels
    python3 - "$FIX/rank1.json" "$tmp/cut" <<'EOF'
import sys
text = open(sys.argv[1], "rb").read()
for part in ("kernels", "events"):
    open("%s-%s.json" % (sys.argv[2], part), "wb").write(text[:text.index(b'"%s"' % part.encode()) + 200])
EOF
    size=$(wc -c <"$cut")
    sizek=$(wc -c <"$cutk")
    local why="truncated at byte $size (not valid JSON)"
    "$TRLAT" merge "$r0" "$r2" -o "$tmp/m02.json"
    one_line merge-skip-bad-says-which-and-why 0 "trlat: $cut: $why; skipped" \
        "$TRLAT" merge "$r0" "$cut" "$r2" --skip-bad -o "$tmp/skipped.json"
    if cmp -s "$tmp/skipped.json" "$tmp/m02.json"; then ok merge-skip-bad-merges-the-rest; else
        fail merge-skip-bad-merges-the-rest "output differs from the merge of the other two"
    fi
    one_line merge-bad-suggests-skip-bad 2 "trlat: $cut: $why; rerun with --skip-bad to leave it out" \
        "$TRLAT" merge "$r0" "$cut" "$r2" -o "$tmp/never.json"
    one_line merge-truncated-in-kernels 2 "trlat: $cutk: truncated at byte $sizek (not valid JSON)" \
        "$TRLAT" merge "$cutk" -o "$tmp/never.json"
    python3 "$here/make_bad.py" "$FIX/basic.json" "$tmp/bad" >/dev/null
    one_line merge-skip-bad-nothing-left 2 "trlat: $cutk: truncated at byte $sizek (not valid JSON); skipped
trlat: $tmp/bad/other-schema.json: schema \"trlat-report/2\" is not supported (expected trlat-report/1); skipped
trlat: merge: no report left to merge (2 skipped)" \
        "$TRLAT" merge "$cutk" "$tmp/bad/other-schema.json" --skip-bad -o "$tmp/never.json"
    if [ -e "$tmp/never.json" ]; then fail merge-bad-writes-nothing "output written"; else
        ok merge-bad-writes-nothing
    fi

    # trlat report: several files are shown merged; --skip-bad as in merge
    "$TRLAT" report "$tmp/m02.json" --format csv >"$tmp/m02.csv"
    run_cmd "$tmp/out" "$tmp/err" "$TRLAT" report "$r0" "$r2" --format csv
    if [ "$rc" = 0 ] && cmp -s "$tmp/out" "$tmp/m02.csv"; then ok report-several-files-merged; else
        fail report-several-files-merged "exit $rc; not the csv of their merge"
    fi
    run_cmd "$tmp/out" "$tmp/err" "$TRLAT" report "$r0" "$r2"
    if [ "$(head -n 1 "$tmp/out")" = "trlat report: $r0, $r2" ]; then ok report-several-files-header; else
        fail report-several-files-header "$(head -n 1 "$tmp/out")"
    fi
    one_line report-skip-bad-says-which-and-why 0 "trlat: $cut: $why; skipped" \
        "$TRLAT" report "$r0" "$cut" "$r2" --skip-bad --format csv
    if cmp -s "$tmp/out" "$tmp/m02.csv"; then ok report-skip-bad-shows-the-rest; else
        fail report-skip-bad-shows-the-rest "not the csv of the merge of the other two"
    fi
    one_line report-bad-suggests-skip-bad 2 "trlat: $cut: $why; rerun with --skip-bad to leave it out" \
        "$TRLAT" report "$r0" "$cut"
    one_line report-truncated 2 "trlat: $cut: $why" "$TRLAT" report "$cut"
    one_line report-skip-bad-nothing-left 2 "trlat: $cut: $why; skipped
trlat: report: no report left to show (1 skipped)" "$TRLAT" report "$cut" --skip-bad
}

# ---- large reports: memory ----

# count_lines DEFAULT CMD...: counts CMD's "ok NAME (...)" and "FAIL NAME: why" lines.
count_lines() {
    local default=$1 line
    shift
    while IFS= read -r line; do
        case $line in
        "ok "*) line=${line#ok }; ok "${line%% *}" "$(sed -nE 's/^[^ ]+ \((.*)\)$/\1/p' <<<"$line")" ;;
        "FAIL "*) line=${line#FAIL }; fail "${line%%:*}" "${line#*: }" ;;
        *) fail "$default" "$line" ;;
        esac
    done < <("$@" 2>&1)
}

test_memory() {
    if ! "$CC" -O2 -o "$tmp/peak_rss" "$here/peak_rss.c" 2>"$tmp/err"; then
        skip memory "no C compiler ($CC) to build tests/cli/peak_rss.c"
        return
    fi
    mkdir -p "$tmp/mem"
    count_lines memory python3 "$here/check_memory.py" "$tmp/peak_rss" "$TRLAT" "$FIX/basic.json" "$tmp/mem"
    rm -rf "$tmp/mem"
}

# ---- fuzzing ----

test_fuzz() {
    if ! command -v clang >/dev/null; then
        skip fuzz-report-loader "clang not installed (scripts/install-deps.sh installs it)"
        return
    fi
    local srcs=() s
    for s in "$root"/report/cli/*.c; do [ "$(basename "$s")" = main.c ] || srcs+=("$s"); done
    if ! clang -std=c11 -D_GNU_SOURCE -DCLI_TEXT_WINDOW=16 -I"$root" -g -O1 -fsanitize=fuzzer,address,undefined \
        -fno-sanitize-recover=undefined "$here/fuzz_load.c" "${srcs[@]}" -o "$tmp/fuzz_load" \
        $(pkg-config --libs jansson 2>/dev/null || echo -ljansson) -lm 2>"$tmp/err"; then
        if grep -qi 'fuzzer' "$tmp/err" && grep -qiE 'cannot find|no such file' "$tmp/err"; then
            skip fuzz-report-loader "clang has no libFuzzer runtime (libclang-rt-dev)"
        else
            fail fuzz-report-loader "fuzz target does not build"
            detail <"$tmp/err"
        fi
        return
    fi
    mkdir -p "$tmp/corpus"
    (cd "$tmp" && ./fuzz_load -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
        -dict="$here/fuzz.dict" -print_final_stats=1 corpus "$FIX" >"$tmp/fuzz.log" 2>&1)
    local status=$? runs
    runs=$(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$tmp/fuzz.log" | tail -n 1)
    if [ "$status" = 0 ]; then ok fuzz-report-loader "${runs:-done}, no crash"; else
        fail fuzz-report-loader "libFuzzer exit $status"
        grep -E 'ERROR|SUMMARY|==[0-9]+==|runtime error' "$tmp/fuzz.log" | detail
    fi
}

# ---- trlat run ----

test_run() {
    if ! command -v "$CC" >/dev/null; then
        skip run "no C compiler ($CC) to build the stand-in shared objects"
        return
    fi
    local bt=$tmp/bt prefix=$tmp/prefix
    mkdir -p "$bt" "$prefix/bin" "$prefix/lib" "$tmp/nolib" "$tmp/work"
    # Stand-ins: an empty libtrlat.so (the real one is not needed to test
    # the wrapper) and some other preloaded library the user already had.
    "$CC" -shared -fPIC -o "$bt/libtrlat.so" -x c /dev/null &&
        "$CC" -shared -fPIC -o "$tmp/libother.so" -x c /dev/null || {
        fail run "cannot build stand-in shared objects"
        return
    }
    cp "$TRLAT" "$bt/trlat"
    cp "$TRLAT" "$prefix/bin/trlat"
    cp "$bt/libtrlat.so" "$prefix/lib/libtrlat.so"
    cp "$TRLAT" "$tmp/nolib/trlat"

    expect_rc run-exit-status 7 "$bt/trlat" run -- sh -c 'exit 7'
    expect_rc run-exit-zero 0 "$bt/trlat" run -- true
    expect_rc run-killed-by-signal 143 "$bt/trlat" run -- sh -c 'kill -TERM $$'
    expect_rc run-exit-three 3 "$bt/trlat" run -- sh -c 'exit 3'
    one_line run-says-killed-by-sigkill 137 "trlat run: sh was killed by signal 9 (Killed)
trlat run: no report matching trlat-%p.json appeared" \
        sh -c "cd '$tmp/work' && exec '$bt/trlat' run -- sh -c 'kill -KILL \$\$'"
    run_cmd "$tmp/out" "$tmp/err" \
        sh -c "cd '$tmp/work' && ulimit -c 0 && exec '$bt/trlat' run -- sh -c 'kill -SEGV \$\$'"
    local segv="trlat run: sh was killed by signal 11 (Segmentation fault)"
    if [ "$rc" = 139 ] && [ "$(head -n 1 "$tmp/err")" = "$segv" ]; then
        ok run-says-killed-by-sigsegv
    else
        fail run-says-killed-by-sigsegv "exit $rc: $(head -c 200 "$tmp/err")"
    fi
    count_lines run-signals python3 "$here/check_run_signals.py" "$bt/trlat" "$tmp/work"
    expect_rc run-command-not-found 127 "$bt/trlat" run -- "$tmp/no-such-command"
    expect_rc run-without-dashes 5 "$bt/trlat" run sh -c 'exit 5'

    local out want
    out=$(cd "$tmp/work" && LD_PRELOAD=$tmp/libother.so "$bt/trlat" run -- sh -c 'echo "$LD_PRELOAD"' 2>/dev/null)
    want="$(realpath "$bt/libtrlat.so"):$tmp/libother.so"
    if [ "$out" = "$want" ]; then ok run-keeps-existing-ld-preload; else
        fail run-keeps-existing-ld-preload "LD_PRELOAD was '$out', expected '$want'"
    fi
    out=$(cd "$tmp/work" && env -u LD_PRELOAD "$prefix/bin/trlat" run -- sh -c 'echo "$LD_PRELOAD"' 2>/dev/null)
    want=$(realpath "$prefix/lib/libtrlat.so")
    if [ "$out" = "$want" ]; then ok run-finds-installed-library; else
        fail run-finds-installed-library "LD_PRELOAD was '$out', expected '$want'"
    fi
    expect_one_line_error run-no-library - "$tmp/nolib/trlat" run -- true
    if grep -q 'cannot find libtrlat.so' "$tmp/err"; then ok run-no-library-says-which; else
        fail run-no-library-says-which "$(head -c 200 "$tmp/err")"
    fi

    out=$(cd "$tmp/work" && "$bt/trlat" run --fastpath=verify --cupti=off --stacks --trace=5 --timing=none -o 'out-%p.json' -- \
        sh -c 'echo "$TRLAT_FASTPATH $TRLAT_CUPTI $TRLAT_STACKS $TRLAT_TRACE $TRLAT_TIMING $TRLAT_OUTPUT"' 2>/dev/null)
    if [ "$out" = "verify 0 1 5 none out-%p.json" ]; then ok run-sets-variables; else
        fail run-sets-variables "got '$out'"
    fi
    out=$(cd "$tmp/work" && "$bt/trlat" run --fastpath --cupti=auto -- sh -c 'echo "$TRLAT_FASTPATH $TRLAT_CUPTI"' 2>/dev/null)
    if [ "$out" = "1 auto" ]; then ok run-sets-variables-defaults; else fail run-sets-variables-defaults "got '$out'"; fi

    # Where the report went: the command writes what libtrlat.so would.
    run_cmd "$tmp/out" "$tmp/err" sh -c "cd '$tmp/work' && '$bt/trlat' run -- sh -c 'echo {} > trlat-\$\$.json; echo \$\$'"
    local pid
    pid=$(cat "$tmp/out")
    if [ "$rc" = 0 ] && grep -q "^trlat run: report written to trlat-$pid.json$" "$tmp/err"; then
        ok run-says-where-the-report-went
    else
        fail run-says-where-the-report-went "$(head -c 200 "$tmp/err")"
    fi
    run_cmd "$tmp/out" "$tmp/err" sh -c "cd '$tmp/work' && '$bt/trlat' run -o 'rep/%h-%p.json' -- sh -c 'mkdir -p rep; echo {} > rep/\$(hostname)-\$\$.json'"
    if grep -q "^trlat run: report written to rep/.*-[0-9]*\.json$" "$tmp/err"; then ok run-says-where-pattern-report-went; else
        fail run-says-where-pattern-report-went "$(head -c 200 "$tmp/err")"
    fi
    run_cmd "$tmp/out" "$tmp/err" sh -c "cd '$tmp/work' && '$bt/trlat' run -- true"
    if grep -q "^trlat run: no report matching trlat-%p.json appeared$" "$tmp/err"; then ok run-says-no-report; else
        fail run-says-no-report "$(head -c 200 "$tmp/err")"
    fi
    test_run_report_list "$bt/trlat"

    if [ -f "$BUILD/libtrlat.so" ]; then
        mkdir -p "$tmp/real"
        expect_rc run-real-library-exit-status 3 sh -c "cd '$tmp/real' && TRLAT_SUMMARY=0 '$TRLAT' run -- sh -c 'exit 3'"
    else
        skip run-real-library-exit-status "$BUILD/libtrlat.so not built"
    fi
}

# Reports found through TRLAT_REPORT_LIST, wherever they went. The command
# stands in for libtrlat.so's side: it writes DIR/NAME... (a fixture's copy)
# and lists each report's absolute path.
test_run_report_list() {
    local trlat=$1 writes=$tmp/writes-reports.sh out
    cat >"$writes" <<EOF
dir=\$1
shift
mkdir -p "\$dir" && cd "\$dir" || exit 1
for name; do cp '$FIX/basic.json' "\$name" && echo "\$PWD/\$name" >>"\$TRLAT_REPORT_LIST"; done
EOF
    mkdir -p "$tmp/list" "$tmp/fallback"
    one_line run-list-numbered-name 0 "trlat run: report written to rep.1.json" \
        sh -c "cd '$tmp/list' && '$trlat' run -o rep.json -- sh '$writes' . rep.1.json"
    one_line run-list-tmp-fallback 0 "trlat run: report written to $(cd "$tmp/fallback" && pwd)/trlat-77.json" \
        sh -c "cd '$tmp/list' && '$trlat' run -- sh '$writes' '$tmp/fallback' trlat-77.json"
    one_line run-list-after-chdir 0 "trlat run: report written to sub/trlat-78.json" \
        sh -c "cd '$tmp/list' && '$trlat' run -- sh '$writes' sub trlat-78.json"
    one_line run-list-several-once-each 0 \
        "trlat run: 2 reports written: a.json, b.json (combine them with trlat merge)" \
        sh -c "cd '$tmp/list' && '$trlat' run -- sh -c 'sh $writes . a.json b.json; sh $writes . a.json;
            echo /nonexistent/c.json >>\"\$TRLAT_REPORT_LIST\"'"
    one_line run-list-all-gone 0 \
        "trlat run: no report appeared (1 listed in TRLAT_REPORT_LIST, none there now: /nonexistent/c.json)" \
        sh -c "cd '$tmp/list' && '$trlat' run -- sh -c 'echo /nonexistent/c.json >>\"\$TRLAT_REPORT_LIST\"'"
    out=$(cd "$tmp/list" && "$trlat" run -- sh -c 'echo "$TRLAT_REPORT_LIST"; stat -c %a "${TRLAT_REPORT_LIST%/*}"' \
        2>/dev/null)
    local list=${out%%$'\n'*} mode=${out#*$'\n'}
    if [ "${list##*/}" = reports ] && [ "$mode" = 700 ] && [ ! -e "${list%/*}" ]; then
        ok run-list-private-dir-removed
    else
        fail run-list-private-dir-removed \
            "TRLAT_REPORT_LIST '$list', mode '$mode'$([ -e "${list%/*}" ] && echo ', left behind')"
    fi
}

test_help
test_help_matches_docs
test_usage_errors
test_fixtures_consistent
test_golden
test_diff_exit_codes
test_merge
test_trace
test_html
test_bad_input
test_skip_bad
test_memory
test_run
test_fuzz

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
