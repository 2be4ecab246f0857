#!/usr/bin/env bash
# The fast path's Inductor layer (fastpath/inductor.c) on the stand-in
# torch._inductor of tests/fastpath: CachingAutotuner.run served above its
# generated launcher while run() would only call it, and left to run
# whenever it would do more (the profiler or a DebugMode on, a launch hook,
# dumps, a stored cubin, coordinate descent, another allocator) or its
# launcher's runner is another class's; torch's static CUDA launcher
# (fastpath/static_launcher.c) served above its launcher and, called
# directly, below it. The same output and launch sequence with the fast
# path off, on and in verify mode; each launch keeps its sites and
# py->driver time; a launcher or static launcher that packs other than its
# memoized block is caught in verify mode. Every Python of 3.11+.
. "$(dirname "$0")/lib.sh"

mapfile -t pythons < <(find_pythons 11)

run() { # TAG FASTPATH [env...]
    local tag=$1 fp=$2; shift 2
    fp_run "$tag" "$fp" inductor 8 "$@"
}
k() { fpk "$1" "k(\"$2\")[\"fastpath\"]$3"; } # TAG KERNEL EXPR
calls() { grep -v '^trlat: ' "$WORK/$1.err" | tail -1; } # each autotuner's launcher calls

for PY in "${pythons[@]}"; do
    v=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    run off 0
    run on 1
    run ver verify
    run all 1 TRLAT_TIMING=all
    same "py$v inductor" off on
    same "py$v inductor, verify" off ver
    expect "py$v inductor: ran to the end" "$(grep -c '^inductor done' "$WORK/on.out")" 1
    expect "py$v inductor: what run() does beside the launch, done as often" "$(grep '^inductor: ' "$WORK/on.out")" \
        "inductor: profiler records 8
inductor: debug mode recorded 8 hook saw 8
inductor: dumped 16 saved 8 tuned ['ind_pointwise_kernel'] 9
inductor: allocators ['cuda', 'xpu'] ['cuda', 'cuda', 'cuda'] ['cuda', 'xpu', 'cuda']"
    all8="2d=8 autotuned=8 coordesc=8 coordesc_none=8 debug=8 dump=8 dump_tensors=8 hook=8 other_runner=8"
    all8="$all8 own_allocator=8 pointwise=16 profiler=8 replaced=8 static=8 static_2d=8 static_direct=8 static_run=24"
    all8="$all8 store_cubin=8 xpu=8"
    expect "py$v fast path off, and verify: every launcher called" "$(calls off):$(calls ver)" "$all8:$all8"
    # served: the first call of each launcher runs it (then the second half
    # of pointwise's calls alternate with another device type's autotuner,
    # whose allocator run() would replace); the rest run it on every call
    expect "py$v served above the launcher only where run() would just call it" "$(calls on)" \
        "2d=1 autotuned=1 coordesc=1 coordesc_none=8 debug=8 dump=8 dump_tensors=8 hook=8 other_runner=8 own_allocator=8 pointwise=9 profiler=8 replaced=1 static=1 static_2d=1 static_direct=8 static_run=4 store_cubin=8 xpu=8"
    # (the static launcher: its first call teaches the layer its class, and
    # is a miss; static_direct, called without run(), alternates two kinds
    # of argument: two misses, then every call served below its launcher)
    expect "py$v nothing on stderr" "$(grep -v '^trlat: ' "$WORK/on.err" "$WORK/ver.err" | grep -v '=')" ""
    expect "py$v hits, at either layer, the same in verify mode" \
        "$(k on ind_pointwise_kernel '["hits"]'):$(k on ind_2d_kernel '["hits"]'):$(k ver ind_pointwise_kernel '["hits"]')" \
        "121:14:121"
    expect "py$v verify: no mismatch" \
        "$(k ver ind_pointwise_kernel '["fallbacks"].get("verify_mismatch", 0)'):$(k ver ind_2d_kernel '["fallbacks"].get("verify_mismatch", 0)')" "0:0"
    expect "py$v the launch hook counted as the reason" "$(k on ind_pointwise_kernel '["fallbacks"]["launch_hooks"]')" 8
    launches='sorted((k["name"], k["launches"], sum(s["launches"] for s in k["call_sites"])) for k in r["kernels"])'
    expect "py$v every launch counted at a site" "$(fpk on "$launches")" "$(fpk off "$launches")"
    # (past each kernel's table of sites: other)
    expect "py$v every launch's site and user site are the program's run() call" \
        "$(fpk all 'sorted({(s["site"].rsplit("/", 1)[-1].split(":")[0], s.get("user_site", s["kind"]).rsplit("/", 1)[-1].split(":")[0]) for k in r["kernels"] if k["name"].startswith("ind_") for s in k["call_sites"]})')" \
        "[('(other)', 'other'), ('prog.py', 'prog.py')]"
    expect "py$v TRLAT_TIMING=all: every launch has py->driver time" \
        "$(fpk all 'sorted((k["name"], k["launches"] == k["py_to_driver_ns"]["count"]) for k in r["kernels"] if k["name"].startswith("ind_"))')" \
        "[('ind_2d_kernel', True), ('ind_pointwise_kernel', True)]"
    run unk 1 FAKE_INDUCTOR_RUN_UNKNOWN=1
    same "py$v inductor: a run() not modelled" off unk
    expect "py$v a run() that reads other names is never served above the launcher (the static one below it)" \
        "$(calls unk)" "${all8/static_run=24/static_run=4}"
    expect "py$v static launches replayed where the program made them (cuLaunchKernel)" \
        "$(grep -c 'fn=cuLaunchKernel ' "$WORK/on.log")" "$(grep -c 'fn=cuLaunchKernel ' "$WORK/off.log")"
    run sunk 1 FAKE_STATIC_RUN_UNKNOWN=1
    same "py$v inductor: a static run() not modelled" off sunk
    expect "py$v a static launcher whose run reads other names is never served" "$(calls sunk)" \
        "2d=1 autotuned=1 coordesc=1 coordesc_none=8 debug=8 dump=8 dump_tensors=8 hook=8 other_runner=8 own_allocator=8 pointwise=9 profiler=8 replaced=1 static=8 static_2d=8 static_direct=8 static_run=48 store_cubin=8 xpu=8"
    # (static_run=48: that run and the modelled one it calls, 24 each)
    run ssoff 0 FAKE_STATIC_LAUNCH_SKEW=128
    run ssver verify FAKE_STATIC_LAUNCH_SKEW=128
    same "py$v inductor: verify, a static launcher packing other than its block" ssoff ssver
    expect "py$v static launcher verify: the mismatch said once, counted" \
        "$(grep -c "static launcher launched other than its memoized block" "$WORK/ssver.err"):$(( $(k ssver ind_2d_kernel '["fallbacks"].get("verify_mismatch", 0)') >= 1 ))" "1:1"
    run skoff 0 FAKE_TRITON_LAUNCH_SKEW=128
    run skver verify FAKE_TRITON_LAUNCH_SKEW=128
    same "py$v inductor: verify, a launcher packing other than its block" skoff skver
    expect "py$v inductor verify: the mismatch said once, counted" \
        "$(grep -c "launched other than its memoized block" "$WORK/skver.err"):$(( $(k skver ind_pointwise_kernel '["fallbacks"].get("verify_mismatch", 0)') >= 1 ))" "1:1"
done
