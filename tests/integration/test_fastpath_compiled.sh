#!/usr/bin/env bash
# The launcher memo (fastpath/compiled.c, runner.c) on the stand-in Triton
# 3.6 of tests/fastpath: compiled kernels launched directly
# (compiled[grid](...), CompiledKernel.run, a library's cached kernels) give
# the same output and launch sequence with the fast path off, on, in
# verify and identical mode; they hit; what the launcher would reject or
# the launch hooks are counted by reason; each launch keeps its sites and
# its py->driver time; a launcher that packs other than its memoized block
# is caught by verify mode. Every Python found of 3.11+.
. "$(dirname "$0")/lib.sh"

mapfile -t pythons < <(find_pythons 11)

run() { # TAG FASTPATH [env...]
    local tag=$1 fp=$2; shift 2
    fp_run "$tag" "$fp" compiled 8 "$@"
}
k() { fpk "$1" "k(\"$2\")[\"fastpath\"]$3"; } # TAG KERNEL EXPR

for PY in "${pythons[@]}"; do
    v=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    run off 0
    run on 1
    run ver verify
    run ident 1 TRLAT_FASTPATH_MODE=identical
    run all 1 TRLAT_TIMING=all
    same "py$v compiled kernels" off on
    same "py$v compiled kernels, verify" off ver
    same "py$v compiled kernels, identical mode" off ident
    expect "py$v compiled: ran to the end" "$(grep -c '^compiled done' "$WORK/on.out")" 1
    expect "py$v compiled: nothing on stderr" "$(grep -v '^trlat: ' "$WORK/on.err" "$WORK/ver.err")" ""
    # add_kernel: 8 rounds of 6 launching calls (one a list grid, through
    # Triton's closure), the library's 7 after its first, 8 after the hooks,
    # 8 with a launch_metadata of the instance's (the closure, then the launcher);
    # 3 keys (the JIT call's stays the JIT layer's miss: counted once)
    expect "py$v compiled[grid], run(), a library's cached kernel: hits" "$(k on add_kernel '["hits"]')" 86
    expect "py$v misses: one per argument-kind key" \
        "$(k on add_kernel '["misses"]'):$(k on scalars_kernel '["misses"]'):$(k on cluster_kernel '["misses"]')" "3:3:2"
    expect "py$v what the launcher rejects, and the launch hooks: counted by reason" \
        "$(k on add_kernel '["fallbacks"]')" "{'launch_hooks': 8, 'argtype': 3, 'binding': 1}"
    expect "py$v verify: the same hits, no mismatch" "$(k ver add_kernel '["hits"]'):$(k ver add_kernel '["fallbacks"].get("verify_mismatch", 0)')" "86:0"
    expect "py$v identical mode: misses for each new value" "$(( $(k ident add_kernel '["misses"]') > 3 ))" 1
    # 8 CompiledKernel.run calls before compiled[grid] learnt the launcher
    # made before the hook (its first call, the process's first launch while
    # the hooks were installed, is not counted)
    expect "py$v a launcher made before the hook: counted, then learnt" \
        "$(k on warm_kernel '["fallbacks"]'):$(k on warm_kernel '["hits"]')" "{'launcher': 8}:15"
    expect "py$v the scalar and cluster kernels hit" "$(k on scalars_kernel '["hits"]'):$(k on cluster_kernel '["hits"]')" "14:7"
    launches='sorted((k["name"], k["launches"], sum(s["launches"] for s in k["call_sites"])) for k in r["kernels"])'
    expect "py$v every launch counted at a site" "$(fpk on "$launches")" "$(fpk off "$launches")"
    expect "py$v every launch has a user site in the program (past each kernel's table of sites: other)" \
        "$(fpk all 'sorted({(s.get("user_site") or s["kind"]).rsplit("/", 1)[-1].split(":")[0] for k in r["kernels"] for s in k["call_sites"]})')" "['other', 'prog.py']"
    expect "py$v TRLAT_TIMING=all: every launch has py->driver time" \
        "$(fpk all 'sorted((k["name"], k["launches"] == k["py_to_driver_ns"]["count"]) for k in r["kernels"] if k["name"] != "warm_kernel")')" \
        "[('add_kernel', True), ('cluster_kernel', True), ('scalars_kernel', True)]"
    # a launcher that packs the values of 128 and more differently (the first
    # call of each key, whose block is memoized, passes 64 or 80)
    run skoff 0 FAKE_TRITON_LAUNCH_SKEW=128
    run skver verify FAKE_TRITON_LAUNCH_SKEW=128
    same "py$v verify, a launcher packing other than its block" skoff skver
    expect "py$v verify: the mismatch said once, counted, the key given back" \
        "$(grep -c "launched other than its memoized block" "$WORK/skver.err"):$(( $(k skver add_kernel '["fallbacks"].get("verify_mismatch", 0)') >= 1 )):$(( $(k skver add_kernel '["fallbacks"].get("verify_blocked", 0)') >= 1 ))" "1:1:1"
done
