#!/usr/bin/env bash
# The launch memo (TRLAT_FASTPATH), on the stand-in Triton 3.6 of
# tests/fastpath and the fake driver: every workload's output and launch
# sequence (TRLAT_FASTPATH_LOG: function, grid, block, shared memory,
# attributes, parameter bytes) are the same with the fast path off, on and
# in verify mode; hits happen; fallbacks are counted by reason. Runs under
# every Python found of python3, python3.12 (dict watchers: 3.12+) and
# python3.13.
. "$(dirname "$0")/lib.sh"
PROG=$ROOT/tests/fastpath/prog.py

mapfile -t pythons < <(find_pythons 9)

run() { fp_run "$@"; } # TAG FASTPATH MODE N [env...]
total() { fpk "$1" 'sum(k["fastpath"]["'"$2"'"] for k in r["kernels"] if k["fastpath"])'; }
reason() { fpk "$1" 'sum(k["fastpath"]["fallbacks"].get("'"$2"'", 0) for k in r["kernels"] if k["fastpath"])'; }

for PY in "${pythons[@]}"; do
    v=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    run off 0 corpus 4
    run on 1 corpus 4
    run ver verify corpus 4
    run ident 1 corpus 4 TRLAT_FASTPATH_MODE=identical
    run nogi 1 corpus 4 TRLAT_FASTPATH_GETITEM=0
    run keep 1 corpus 4 TRLAT_FASTPATH_GIL=keep
    same "py$v corpus on" off on
    same "py$v corpus verify" off ver
    same "py$v corpus identical mode" off ident
    same "py$v corpus through run() only" off nogi
    same "py$v corpus GIL kept" off keep
    expect "py$v corpus: report says on" "$(fpk on 'r["config"]["fastpath"]')" on
    expect "py$v corpus: most calls hit" "$(fpk on 'sum(k["fastpath"]["hits"] for k in r["kernels"]) >= 3 * sum(k["fastpath"]["misses"] for k in r["kernels"])')" True
    # ints annotated int/i64/u64 keyed by Triton's class of them: 4 keys
    # over 9 values a rep (exact values gave a key each, and one more a rep)
    expect "py$v corpus: annotated ints keyed by class" "$(fpk on '[(k["fastpath"]["hits"], k["fastpath"]["misses"]) for k in r["kernels"] if k["name"] == "annint_kernel"]')" "[(32, 4)]"
    expect "py$v corpus: nothing fell back" "$(fpk on '[k["fastpath"]["fallbacks"] for k in r["kernels"] if k["fastpath"]["fallbacks"]]')" "[]"
    expect "py$v verify: zero mismatches, same hits" "$(reason ver verify_mismatch):$(total ver hits)" "0:$(total on hits)"
    expect "py$v run() path hits too" "$(total nogi hits)" "$(total on hits)"
    expect "py$v report off: fastpath null" "$(fpk off '[k["fastpath"] for k in r["kernels"]][:1]')" "[None]"
    expect "py$v nothing on stderr" "$(cat "$WORK/on.err" "$WORK/ver.err")" ""

    # Without TRLAT_FASTPATH_LOG the launch hook is idle and a replay takes
    # the wrapper's common variant (launch.c): the same launches, each recorded with
    # its Python call; with TRLAT_TIMING=none counted, not timed; with
    # sampled (the default under TRLAT_FASTPATH=1) a hit timed 1 in 16.
    for t in direct untimed sampled; do
        env $([ $t = untimed ] && echo TRLAT_TIMING=none) $([ $t = direct ] && echo TRLAT_TIMING=all) \
            TRLAT_FASTPATH=1 TRLAT_OUTPUT="$WORK/$t.json" \
            LD_PRELOAD=$LIB "$PY" "$PROG" corpus 4 >"$WORK/$t.out" 2>"$WORK/$t.err"
        echo $? >>"$WORK/$t.out"
    done
    expect "py$v replays without the launch log: same output" "$(cat "$WORK/direct.out")" "$(cat "$WORK/off.out")"
    expect "py$v timing none: same output" "$(cat "$WORK/untimed.out")" "$(cat "$WORK/off.out")"
    launches='sorted((k["name"], k["launches"]) for k in r["kernels"])'
    expect "py$v replays without the launch log: same launches per kernel" "$(fpk direct "$launches")" "$(fpk off "$launches")"
    expect "py$v timing none: same launches per kernel" "$(fpk untimed "$launches")" "$(fpk off "$launches")"
    profile='sorted((k["name"], k["driver_ns"]["count"] == k["launches"], (k["py_to_driver_ns"] or {}).get("count"), (k["py_return_ns"] or {}).get("count")) for k in r["kernels"])'
    sites='sorted((k["name"], sum(s["launches"] for s in k["call_sites"])) for k in r["kernels"])'
    expect "py$v replays without the launch log: every launch timed, at its site; a time per call" \
        "$(fpk direct "$profile")" "$(fpk off "$profile")"
    expect "py$v replays without the launch log: launches at their sites" "$(fpk direct "$sites")" "$(fpk off "$sites")"
    expect "py$v timing none: launches at their sites" "$(fpk untimed "$sites")" "$(fpk off "$sites")"
    expect "py$v timing none: no times, the same hits and calls" \
        "$(fpk untimed '(sum(k["driver_ns"]["count"] + k["gap_ns"]["count"] for k in r["kernels"]), [k["py_to_driver_ns"] for k in r["kernels"] if k["py_to_driver_ns"]], r["python"]["calls"])'):$(total untimed hits)" \
        "(0, [], $(fpk direct 'r["python"]["calls"]')):$(total direct hits)"
    expect "py$v timing sampled (the default): same output" "$(cat "$WORK/sampled.out")" "$(cat "$WORK/off.out")"
    expect "py$v timing sampled: same launches per kernel, at their sites" \
        "$(fpk sampled "$launches"):$(fpk sampled "$sites")" "$(fpk off "$launches"):$(fpk off "$sites")"
    # every launch but a hit timed at weight 1, a hit timed at weight 16 or
    # counted only: each kernel's three statistics differ from the all-timed
    # run's by the same amount (exact arithmetic on the sample: scripts below)
    expect "py$v timing sampled: config, the same hits and calls" \
        "$(fpk sampled '(r["config"]["timing"], r["python"]["calls"])'):$(total sampled hits)" \
        "('sampled', $(fpk direct 'r["python"]["calls"]')):$(total direct hits)"
    expect "py$v timing sampled: each kernel's driver, py->driver and return counts move together" \
        "$(python3 - "$WORK/direct.json" "$WORK/sampled.json" <<'PY'
import json, sys
a, b = ({k["name"]: k for k in json.load(open(p))["kernels"]} for p in sys.argv[1:])
n = lambda k, m: (k[m] or {"count": 0})["count"]
print(sorted((x, len({n(b[x], m) - n(ka, m) for m in ("driver_ns", "py_to_driver_ns", "py_return_ns")}) == 1)
             for x, ka in a.items()))
PY
)" "$(fpk direct 'sorted((k["name"], True) for k in r["kernels"])')"

    # torch's C++ reads of the device and stream (fastpath/torch/torchcuda.c)
    # through a stand-in libc10_cuda.so kept in step with the stand-in
    # torch: used once both answers agree on a thread, following the
    # corpus's stream switches; an answer that differs turns it off for
    # good (one call), the launches unchanged either way
    C10=$B/tests/fake/c10/libc10_cuda.so
    run c10off 0 corpus 4 FAKE_C10_LIB=$C10
    run c10on 1 corpus 4 FAKE_C10_LIB=$C10 TRLAT_FASTPATH_DEBUG=1
    run c10skew 1 corpus 4 FAKE_C10_LIB=$C10 FAKE_C10_SKEW=1 TRLAT_FASTPATH_DEBUG=1
    same "py$v torch C++ device/stream" c10off c10on
    # where a tensor's own attributes are looked for (fastpath/fp_pyenv.c):
    # the probe object's __dict__ found where this CPython keeps it
    case $v in 3.11) words="the words at -3 and -4" ;; 3.12 | 3.13) words="the word at -3" ;; *) words="_PyObject_GetMethod" ;; esac
    expect "py$v instance attributes: the probe found $words" "$(grep -c "attributes (a data_ptr shadowing torch's) are .*$words" "$WORK/c10on.err")" 1
    same "py$v torch C++ answering differently" c10off c10skew
    c10n() { sed -n 's/^c10_calls=\([0-9]*\).*/\1/p' "$WORK/$1.err"; }
    c10d() { sed -n 's/^c10_calls=.* c10_device_calls=//p' "$WORK/$1.err"; }
    expect "py$v torch C++: said once, read on every later call" \
        "$(grep -c "read through torch's C++ library" "$WORK/c10on.err"):$(c10n c10off):$(( $(c10n c10on) >= $(total c10on hits) ))" "1:0:1"
    expect "py$v torch C++ answering differently: one call, then never" \
        "$(grep -c "disagree with its Python calls" "$WORK/c10skew.err"):$(c10n c10skew):$(total c10skew hits)" "1:1:$(total c10on hits)"
    # the device without GetDevice (torchcuda.c): the target device from the
    # stand-in's .symtab, else the current context's device; GetDevice only
    # on a thread's first read and every 256th (the corpus switches devices,
    # deferred too, with a stream of its own: a wrong device launches on the
    # wrong stream). Stripped (no symbol), or a GetDevice answering other
    # than the context: GetDevice on every read, the launches the same
    run c10strip 1 corpus 4 FAKE_C10_LIB=$B/tests/fake/c10-stripped/libc10_cuda.so TRLAT_FASTPATH_DEBUG=1
    run c10rt 1 corpus 4 FAKE_C10_LIB=$C10 FAKE_C10_RUNTIME_DEVICE=1 FAKE_CUDA_CONTEXT_DEVICE=3 TRLAT_FASTPATH_DEBUG=1
    same "py$v torch C++ device: no target-device symbol" c10off c10strip
    same "py$v torch C++ device: GetDevice not the context's device" c10off c10rt
    expect "py$v torch C++ device: GetDevice on the first read and every 256th, not on every hit" \
        "$(grep -c "the device from its target device and the current context" "$WORK/c10on.err"):$(( $(c10d c10on) >= 1 && $(c10d c10on) * 16 < $(total c10on hits) ))" \
        "1:1"
    expect "py$v torch C++ device: stripped, or not the context's: GetDevice on every hit" \
        "$(grep -c "no c10 target-device symbol" "$WORK/c10strip.err"):$(( $(c10d c10strip) >= $(total c10strip hits) )):$(grep -c "context's device differs from torch's GetDevice" "$WORK/c10rt.err"):$(( $(c10d c10rt) >= $(total c10rt hits) ))" \
        "1:1:1:1"

    # grid functions (gridprog.c): the ones gridcheck.py accepts are not
    # called on hits (prog.py counts calls with sys.setprofile, on stderr),
    # the others are; launches are the same; verify finds a wrong program
    run goff 0 grids 10
    run gon 1 grids 10 TRLAT_FASTPATH_DEBUG=1
    run gver verify grids 10
    run gskew verify grids 10 TRLAT_FASTPATH_GRID=skew
    run gskon 1 grids 10 TRLAT_FASTPATH_GRID=skew
    run gcall 1 grids 10 TRLAT_FASTPATH_GRID=call
    same "py$v grids" goff gon
    same "py$v grids verify" goff gver
    same "py$v grids verify, wrong programs" goff gskew
    same "py$v grids always called" goff gcall
    gcalls() { grep '^grid_' "$WORK/$1.err"; }
    expect "py$v grids: every grid function called on every call with the fast path off" "$(gcalls goff)" \
        "grid_attr=40 grid_big=3 grid_bool=10 grid_cdiv=10 grid_cellfn=10 grid_cellmod=10 grid_cellrebind=40 grid_cellsep=10 grid_effect=10 grid_lambda=10 grid_len=10 grid_mix=10 grid_raise=4 grid_rebind=30 grid_signs=10 grid_tensor=10"
    # accepted: called by Triton on misses only (keys shared between grids:
    # grid_attr, grid_cellmod, grid_cellfn never miss), and where the
    # program cannot say (grid_big past int64, grid_raise dividing by 0,
    # grid_rebind once its global is impure); rejected (a tensor attribute,
    # a side effect, len/str, a bool value): every call. Closure cells
    # holding triton (grid_lambda, grid_cellmod: `import triton` in the
    # function), triton.cdiv, max or a local function (grid_cellfn): not
    # called on hits; grid_cellrebind's cell rebound to another module
    # (analysed again), then to a namespace (called from then on: 2 x 10);
    # grid_cellsep alternating between two closures: analysed again until
    # the 4th try, then called whenever the cell is not the last one's (3)
    expect "py$v grids: accepted grids not called on hits" "$(gcalls gon)" \
        "grid_big=1 grid_bool=10 grid_cdiv=1 grid_cellrebind=20 grid_cellsep=3 grid_effect=10 grid_lambda=1 grid_len=10 grid_mix=1 grid_raise=1 grid_rebind=11 grid_signs=2 grid_tensor=10"
    expect "py$v grids: verify and TRLAT_FASTPATH_GRID=call call them all" "$(gcalls gver):$(gcalls gcall)" "$(gcalls goff):$(gcalls goff)"
    expect "py$v grids: analysis verdicts" "$(grep -o 'grid function grid_[a-z]* ([^)]*): [a-z ]*' "$WORK/gon.err" | sed 's/ (.*)//; s/ *$//' | sort -u | tr '\n' ';')" \
        "grid function grid_attr: evaluated without calling it;grid function grid_big: evaluated without calling it;grid function grid_bool: evaluated without calling it;grid function grid_cdiv: evaluated without calling it;grid function grid_cellfn: evaluated without calling it;grid function grid_cellmod: evaluated without calling it;grid function grid_cellrebind: called on every hit;grid function grid_cellrebind: evaluated without calling it;grid function grid_cellsep: evaluated without calling it;grid function grid_effect: called on every hit;grid function grid_len: called on every hit;grid function grid_mix: evaluated without calling it;grid function grid_raise: evaluated without calling it;grid function grid_rebind: called on every hit;grid function grid_rebind: evaluated without calling it;grid function grid_signs: evaluated without calling it;grid function grid_tensor: called on every hit;"
    expect "py$v grids: fallbacks (the grid that raised)" "$(fpk gon '[(k["name"], k["fastpath"]["fallbacks"]) for k in r["kernels"] if k["fastpath"]["fallbacks"]]')" "[('add_kernel', {'grid': 1})]"
    expect "py$v grids verify: zero mismatches, same hits" "$(reason gver verify_mismatch):$(total gver hits)" "0:$(total gon hits)"
    expect "py$v grids verify: each wrong program reported once" "$(reason gskew verify_mismatch):$(grep -c 'fast path verify: add_kernel: the grid computed from grid function' "$WORK/gskew.err")" "13:13"
    if cmp -s "$WORK/goff.log" "$WORK/gskon.log"; then fail "py$v grids: a wrong program changes launches" "same"; else ok "py$v grids: a wrong program changes launches"; fi

    # miss backoff (fastpath.c): 64 keyed misses in a row, then windows of
    # 8, 16, ... 1024 unkeyed calls between probes; the first hit ends it.
    # 400 calls that cannot be memoized, then 3000 that can: at most 64 + 12
    # probes are keyed misses, and the key hits again within one window
    run bo_off 0 backoff 0
    run bo_on 1 backoff 0
    run bo_zero 1 backoff 0 TRLAT_FASTPATH_MEMO=0
    same "py$v miss backoff" bo_off bo_on
    same "py$v miss backoff, memo of 0" bo_off bo_zero
    bo() { fpk "$1" '[(k["fastpath"]["hits"], k["fastpath"]["misses"], k["fastpath"]["fallbacks"].get("backoff", 0)) for k in r["kernels"] if k["name"] == "add_kernel"][0]'; }
    expect "py$v miss backoff: every call counted once; few keyed misses; hits again" \
        "$(fpk bo_on 'sum([k["fastpath"]["hits"] + k["fastpath"]["misses"] + k["fastpath"]["fallbacks"].get("backoff", 0) for k in r["kernels"] if k["name"] == "add_kernel"]) == 3400 and (lambda h, m, b: m <= 76 and b > 0 and h >= 3000 - 1024)(*'"$(bo bo_on)"')')" True
    expect "py$v miss backoff, memo of 0: no hits, few keyed misses, the rest unkeyed" \
        "$(fpk bo_zero '(lambda h, m, b: h == 0 and m <= 76 and h + m + b == 3400)(*'"$(bo bo_zero)"')')" True

    # consecutive calls that differ in one thing each (fastpath/lastcall.c:
    # a call keyed as the last hit takes its entry without the key): the
    # same launches, verify agrees, also when every insert evicts
    run lcoff 0 lastcall 3
    run lcon 1 lastcall 3
    run lcver verify lastcall 3
    run lcone 1 lastcall 3 TRLAT_FASTPATH_MEMO=1
    run lcgi 1 lastcall 3 TRLAT_FASTPATH_GETITEM=0
    same "py$v one change per call" lcoff lcon
    same "py$v one change per call, verify" lcoff lcver
    same "py$v one change per call, a memo of 1" lcoff lcone
    same "py$v one change per call, through run() only" lcoff lcgi
    expect "py$v one change per call: hits, verify agrees" \
        "$(( $(total lcon hits) > 100 )):$(reason lcver verify_mismatch):$(total lcver hits):$(total lcgi hits)" \
        "1:0:$(total lcon hits):$(total lcon hits)"

    # keys in turn, each served by one of the kernel's last hits
    run altoff 0 alternate 500
    run alton 1 alternate 500 TRLAT_FASTPATH_DEBUG=1
    same "py$v keys in turn" altoff alton
    alt=$(sed -n "s/.*fast path: \([0-9]*\) of \([0-9]*\) hits took.*/\1 \2/p" "$WORK/alton.err")
    if "$PY" -c 'import sys; sys.exit(not (sys.version_info >= (3, 13, 1) or sys.version_info[:2] == (3, 12)))'; then
        expect "py$v keys in turn: all but the first hit of each key take a last hit's entry" \
            "$(echo "$alt" | awk '{ print ($2 >= 990 && $1 >= $2 - 6) ? "yes" : $0 }')" yes
    else # no dict watchers (3.11), or none trusted (3.13.0): every call keyed in full
        expect "py$v keys in turn: no watchers, every hit keyed" "$(echo "$alt" | awk '{ print ($2 >= 990 && $1 == 0) ? "yes" : $0 }')" yes
    fi

    # the kernel's function loaded again: replays launch the new one
    run rloff 0 reload 5
    run rlon 1 reload 5
    run rlver verify reload 5
    same "py$v function loaded again" rloff rlon
    same "py$v function loaded again, verify" rloff rlver
    expect "py$v function loaded again: launches of each, hits after, verify agrees" \
        "$(grep -c 'launch add_kernel_reloaded ' "$WORK/rlon.log"):$(total rlon hits):$(reason rlver verify_mismatch)" "5:8:0"

    # FlagGems' LibEntry.run served in C (fastpath/libentry.c): the same
    # output, launches and returns as its own Python, verify agreeing; a
    # LibEntry whose run differs from the reference is never served
    run leoff 0 libentry 6
    run leon 1 libentry 6 TRLAT_FASTPATH_DEBUG=1
    run lever verify libentry 6 TRLAT_FASTPATH_DEBUG=1
    run lepat 1 libentry 6 TRLAT_FASTPATH_DEBUG=1 FAKE_LIBENTRY_PATCHED=1
    run leno 1 libentry 6 TRLAT_FASTPATH_DEBUG=1 TRLAT_FASTPATH_LIBENTRY=0
    run leskew verify libentry 6 TRLAT_FASTPATH_GRID=skew
    same "py$v LibEntry served in C" leoff leon
    same "py$v LibEntry, verify" leoff lever
    same "py$v LibEntry not the reference" leoff lepat
    expect "py$v LibEntry: calls served in C, with a grid function's program; verify mismatches" \
        "$(grep -o '[0-9]* calls of FlagGems. LibEntry.run were served in C ([0-9]* with' "$WORK/leon.err"):$(reason lever verify_mismatch)" \
        "98 calls of FlagGems' LibEntry.run were served in C (14 with:0"
    # run()'s first-call path (a new key) served in C for a LibEntry around
    # a plain JITFunction or Heuristics around one (fastpath/libentry_first.c,
    # the heuristics' dicts the same: prog.py prints their keys); one whose
    # grid or heuristic raises inside its `with self.lock` releases the lock
    expect "py$v LibEntry: first-call paths served in C" \
        "$(grep -o 'and [0-9]* of its first-call paths' "$WORK/leon.err")" "and 48 of its first-call paths"
    expect "py$v LibEntry: the report counts them per kernel (library_hits)" \
        "$(fpk leon 'sum(k["fastpath"].get("library_hits", 0) for k in r["kernels"] if k["fastpath"])'):$(fpk leno 'sum(k["fastpath"]["library_hits"] for k in r["kernels"] if k["fastpath"])')" "146:0"
    expect "py$v LibEntry: trlat report says how many run() calls ran in C" \
        "$("$B/trlat" report "$WORK/leon.json" 2>&1 | grep -c 'the fast path ran 146 of these run() calls in C')" "1"
    # the entries of a LibEntry's last keys taken again while its cache's
    # version says it did not change: the output is the same with the cache
    # cleared and entries replaced in between, and a str made anew on every
    # call (compared by value: by address, a freed one's successor took its
    # entry) finds its own
    expect "py$v LibEntry: entries found as one of the last keys" \
        "$(grep -o '[0-9]* entries found as one of the last keys' "$WORK/leon.err")" "52 entries found as one of the last keys"
    # a grid function's program made wrong (tests only): verify finds it
    # against the original's launch, and the output stays the same
    same "py$v LibEntry, verify of a wrong grid program" leoff leskew
    expect "py$v LibEntry, verify of a wrong grid program: found, that LibEntry no longer served" \
        "$(grep -c 'LibEntry.run of add_kernel launched other than the model computed' "$WORK/leskew.err"):$(( $(reason leskew verify_mismatch) > 0 ))" "1:1"
    # and of a wrong first-call model (skew: its entry's constexprs one short)
    expect "py$v LibEntry, verify of a wrong first-call model: found once" \
        "$(grep -c 'LibEntry.run of add_kernel stored an entry other than the model computed on its first call' "$WORK/leskew.err")" "1"
    same "py$v LibEntry with TRLAT_FASTPATH_LIBENTRY=0" leoff leno
    expect "py$v LibEntry with TRLAT_FASTPATH_LIBENTRY=0: not served in C" "$(grep -c 'LibEntry' "$WORK/leno.err")" "0"
    expect "py$v LibEntry not the reference: none served, said why" \
        "$(grep -c 'served in C$' "$WORK/lepat.err"):$(grep -c 'never served above its compiled.grid. call: it is not the one' "$WORK/lepat.err")" "0:1"

    # the launch of a served LibEntry call takes the data_ptr() its key read
    # from a StridedBuffer-like object's own attribute where no Python ran
    # between (a tuple grid, no pre-hooks: 5 calls x 2 objects, and 6 whose
    # other object's _data_ptr is a property), never past a grid function
    # or a pre-hook that moves a buffer; properties are read as often as
    # without trlat (verify reads each twice: the model's and the original's);
    # a CompiledKernel.__getitem__ the program wrapped is called as often
    run lroff 0 libentry_reads 6
    run lron 1 libentry_reads 6 TRLAT_FASTPATH_DEBUG=1
    run lrver verify libentry_reads 6
    run lrno 1 libentry_reads 6 TRLAT_FASTPATH_LIBENTRY=0
    same "py$v LibEntry's key reads taken by its launch" lroff lron
    same "py$v LibEntry's key reads, verify" lroff lrver
    expect "py$v LibEntry's key reads: as many property reads as without trlat" \
        "$(grep '^reads' "$WORK/lron.err")" "$(grep '^reads' "$WORK/lroff.err")"
    # a first-call path served in C reads them as FlagGems' own run() does
    # over the same fast path below it (the launch's reads are Triton's
    # layer's: a JIT hit reads fewer than Triton); it read them twice before
    expect "py$v LibEntry's first-call path: as many property reads as its own run()" \
        "$(grep '^first-call reads' "$WORK/lron.err")" "$(grep '^first-call reads' "$WORK/lrno.err")"
    expect "py$v LibEntry's key reads: taken where nothing ran between" \
        "$(grep -o '[0-9]* data_ptr() reads of the key taken by the launch' "$WORK/lron.err")" "16 data_ptr() reads of the key taken by the launch"

    # call sites: the same file:line whether Triton's path or a replay
    # reports the launch, also for launches from functions whose frames are
    # new on every call (read from the running interpreter frame on 3.12
    # and 3.13, pyhook_site.c, once 16 reads agreed with its frame object)
    run woff 0 wrapped 40
    run won 1 wrapped 40 TRLAT_FASTPATH_DEBUG=1
    same "py$v launches from functions" woff won
    texts='sorted((k["name"], s["site"].rsplit("/", 1)[-1], s["launches"]) for k in r["kernels"] for s in k["call_sites"])'
    expect "py$v launches from functions: the same sites" "$(fpk won "$texts")" "$(fpk woff "$texts")"
    expect "py$v launches from functions: hits at prog.py's lines" \
        "$(fpk won '[(s["site"].rsplit("/", 1)[-1], s["launches"]) for k in r["kernels"] if k["name"] == "add_kernel" for s in k["call_sites"]]'):$(total won hits)" \
        "[('prog.py:$(grep -n '^    add_kernel\[(cdiv(n, 128)' "$PROG" | cut -d: -f1)', 40), ('prog.py:$(grep -n 'and from a lambda' "$PROG" | cut -d: -f1)', 40)]:78"
    expect "py$v corpus: the same sites" "$(fpk on "$texts")" "$(fpk off "$texts")"
    case $v in
    3.12 | 3.13) expect "py$v call sites read from the running frame" \
        "$(grep -c 'call sites were read from the running interpreter frame (16 reads agreed' "$WORK/won.err")" 1 ;;
    *) expect "py$v call sites through frame objects (before 3.12)" "$(grep -c 'running interpreter frame' "$WORK/won.err")" 0 ;;
    esac

    # kernel[grid] launchers handed out again for held tuple grids
    run lnoff 0 launchers 20
    run lnon 1 launchers 20
    same "py$v launchers kept" lnoff lnon
    expect "py$v launchers kept: a held one not handed out, grid function freed, hits" \
        "$(grep -c 'again: False\|freed: True' "$WORK/lnon.out"):$(( $(total lnon hits) > 300 ))" "2:1"

    # subclasses of JITFunction: Triton's path (counted "class"); one with
    # its own __getitem__ is called through it
    run suboff 0 subclass 0
    run subon 1 subclass 0
    same "py$v JITFunction subclasses" suboff subon
    expect "py$v JITFunction subclasses: own __getitem__ called, class fallbacks" \
        "$(grep -c 'own getitem' "$WORK/subon.out"):$(reason subon class)" "3:6"
    # another KernelInterface subclass's kernel[grid]: trlat's launcher
    # calls its run as Triton's lambda does (with the fast path only); what
    # the calls raise reads as without trlat (the hook names run by its
    # own __module__ and __qualname__)
    "$PY" "$PROG" subclass 0 >"$WORK/subbare.out" 2>/dev/null
    expect "py$v KernelInterface subclass: launcher, errors as without trlat" \
        "$(grep -o 'subclass launcher .*' "$WORK/suboff.err" "$WORK/subon.err" | sed 's/.*://' | tr '\n' ' ')$(grep raised "$WORK/subon.out" | cmp -s - <(grep raised "$WORK/subbare.out") && echo same)" \
        "subclass launcher function subclass launcher FastLauncher same"

    # a memo smaller than the keys in use: bounded, still right
    run moff 0 memo 20
    run small 1 memo 20 TRLAT_FASTPATH_MEMO=4
    run none 1 memo 20 TRLAT_FASTPATH_MEMO=0
    run big 1 memo 20
    same "py$v memo of 4 entries, 20 keys" moff small
    same "py$v memo of 0 entries" moff none
    expect "py$v memo of 0: every call misses" "$(total none hits):$(total none misses)" "0:60"
    expect "py$v memo of 20+: 20 misses then hits" "$(total big misses):$(total big hits)" "20:40"

    # threads: per-thread captures; launch order between threads varies
    run toff 0 threads 50
    run ton 1 threads 50
    sort "$WORK/toff.log" >"$WORK/toff.s"; sort "$WORK/ton.log" >"$WORK/ton.s"
    if cmp -s "$WORK/toff.s" "$WORK/ton.s"; then ok "py$v threads: same launches"; else fail "py$v threads: same launches" "differ"; fi
    # a key misses once per thread (8), and once more after each miss whose
    # capture could not be stored (a nomemo_* fallback, counted beside its
    # miss: under load, the kernel not yet in Triton's cache while another
    # thread compiled it); any other fallback takes a call's place
    expect "py$v threads: every call counted once, a key missing once per thread or after an unstored capture" \
        "$(fpk ton '(lambda f, nm: (f["hits"] + f["misses"] + sum(f["fallbacks"].values()) - nm, f["misses"] <= 8 + nm))(k("add_kernel")["fastpath"], sum(v for r, v in k("add_kernel")["fastpath"]["fallbacks"].items() if r.startswith("nomemo")))')" \
        "(200, True)"

    # a LibEntry's first calls racing in four threads: the same launches,
    # one entry stored per key
    run ltoff 0 libentry_threads 40
    run lton 1 libentry_threads 40 TRLAT_FASTPATH_DEBUG=1
    sort "$WORK/ltoff.log" >"$WORK/ltoff.s"; sort "$WORK/lton.log" >"$WORK/lton.s"
    if cmp -s "$WORK/ltoff.s" "$WORK/lton.s"; then ok "py$v LibEntry threads: same launches"; else fail "py$v LibEntry threads: same launches" "differ"; fi
    expect "py$v LibEntry threads: same output, first calls served" \
        "$(cat "$WORK/lton.out"):$(( $(grep -o 'and [0-9]* of its first-call paths' "$WORK/lton.err" | tr -dc 0-9) > 0 ))" "$(cat "$WORK/ltoff.out"):1"

    # hooks Triton calls: never replayed while set
    run hoff 0 hooks 20
    run hon 1 hooks 20
    same "py$v hooks" hoff hon
    expect "py$v hooks: called as often" "$(head -1 "$WORK/hon.out")" "pre 20 enter 20"
    expect "py$v hooks: counted by reason" "$(reason hon pre_run_hooks):$(reason hon launch_hooks)" "20:20"
    expect "py$v hooks: hits once they are gone" "$(fpk hon 'k("add_kernel")["fastpath"]["hits"] >= 19')" True
    # the same attributes rebound in a hot loop (3.13.0's watchers miss such
    # stores: the fast path reads them on every call there)
    run rboff 0 rebind 4
    run rbon 1 rebind 4
    same "py$v rebound attributes" rboff rbon
    expect "py$v rebound attributes: hooks run, the debug kernel picked" "$(head -1 "$WORK/rbon.out")" \
        "pre 8 kernels $(printf '00000001%.0s' 1 2 3 4)"

    # what the memo must leave to Triton
    run foff 0 fallbacks 10
    run fon 1 fallbacks 10
    run fver verify fallbacks 10
    same "py$v fallbacks" foff fon
    same "py$v fallbacks verify" foff fver
    expect "py$v scratch kernels never replayed" "$(fpk fon 'k("scratch_kernel")["fastpath"]["hits"]'):$(reason fon nomemo_scratch)" "0:10"
    expect "py$v warmup" "$(reason fon warmup)" 10
    expect "py$v two launches in one call" "$(reason fon nomemo_launches)" 10
    expect "py$v a tuple argument" "$(reason fon argtype)" 1
    expect "py$v changed global raises as Triton does" "$(grep -c '^global: Global variable SCALE has changed' "$WORK/fon.out"):$(reason fon globals)" "3:3"
    expect "py$v an option the key cannot hold" "$(reason fon kwargs)" 10
    expect "py$v a grid function that raises, raised once per call" "$(grep -c '^grid: grid says no' "$WORK/fon.out")" 3
    expect "py$v run()'s keywords in kernel[grid](...): Triton's TypeError, each time" "$(grep -c '^run keyword: .*multiple values' "$WORK/fon.out")" 6

    # a Triton whose specialization the memo's key does not model: verify
    # notices, reports, and leaves the key to Triton
    run aoff 0 align 10 FAKE_TRITON_ALIGN=32
    run aver verify align 10 FAKE_TRITON_ALIGN=32
    same "py$v verify: a key Triton splits" aoff aver
    expect "py$v verify: mismatch counted once, then blocked" "$(reason aver verify_mismatch):$(reason aver verify_blocked)" "1:18"
    expect "py$v verify: mismatch reported" "$(grep -c 'fast path verify: add_kernel: the memo.s kernel' "$WORK/aver.err")" 1

    # objects with data_ptr() that are not tensors (FlagGems' StridedBuffer),
    # through kernel[grid] and compiled[grid]: served, the driver asked once
    # per allocation and again after a free (through cuGetProcAddress's
    # entry point and the export); host memory, which Triton's
    # launcher raises for, never replayed (compiled[grid] asks twice: its
    # runner, then the launcher's memo under Triton's closure)
    run poff 0 ptrobj 20
    run pon 1 ptrobj 20
    run pver verify ptrobj 20
    same "py$v data_ptr objects" poff pon
    same "py$v data_ptr objects, verify" poff pver
    expect "py$v data_ptr objects: all but the classes' first calls hit" "$(total pon hits):$(total pon misses)" "116:5"
    expect "py$v data_ptr objects: verify agrees" "$(reason pver verify_mismatch):$(total pver hits)" "0:116"
    expect "py$v host memory: raised each time, counted" \
        "$(grep -c '^host memory.*: raised' "$WORK/pon.out"):$(reason pon not_device_memory)" "4:4"
    expect "py$v the driver asked once per allocation, again after each free" "$(cat "$WORK/pon.err")" \
        "driver asked: 1 before the frees, 2 after one, 3 after two, 8 with host memory"

    # data_ptr() of objects that are not tensors read as the attribute it
    # returns where the method is `return self.<attribute>` (getter.c):
    # FlagGems' StridedBuffer and TypedPtr, a property behind it; called
    # where it is not (computed, its code replaced); the instance's own
    # data_ptr, a class with __getattr__ and a missing attribute as before
    run goff 0 getters 6
    run gon 1 getters 6 TRLAT_FASTPATH_DEBUG=1
    run gver verify getters 6
    same "py$v data_ptr getters" goff gon
    same "py$v data_ptr getters, verify" goff gver
    expect "py$v data_ptr getters: read as the attribute, called otherwise; verify agrees" \
        "$(grep -c 'data_ptr read as the attribute' "$WORK/gon.err"):$(grep -c 'data_ptr called' "$WORK/gon.err"):$(reason gver verify_mismatch)" "4:2:0"

    # host tensor descriptors through compiled kernels (FlagGems' mm): new
    # descriptors hit, over the same buffers or new ones (the fake encoder
    # keeps the address in a map's first 8 bytes, as the H200's driver
    # does; the capture finds it there), and encode no tensor map: 9 misses
    # encode 3 maps each, and each of the 3 stored misses' maps is encoded
    # 55 times more to find the address (3 * 9 + 3 * 3 * 55 = 522, the
    # fast path off: 45 calls * 3 = 135); the descriptor's fields in the
    # key (a shape, a padding changed); decomposed descriptors served with
    # their other arguments' slots; what the launcher asserts or the encoder
    # refuses (a misaligned base) raised each time, host memory left to the
    # launcher; the JIT layer's calls with descriptors fall back (argtype)
    run toff 0 tmadesc 20
    run ton 1 tmadesc 20
    run tver verify tmadesc 20
    same "py$v tensor descriptors" toff ton
    same "py$v tensor descriptors, verify" toff tver
    # by name: the report's order of kernels is not the order of first launches
    tk() { fpk "$1" 'sorted((k["name"], k["fastpath"]) for k in r["kernels"] if k["name"] != "warm_kernel")'; }
    expect "py$v tensor descriptors: served, and why not" "$(tk ton)" \
        "[('desc_kernel', {'hits': 18, 'misses': 2, 'library_hits': 0, 'fallbacks': {'argtype': 1}}), ('tma_kernel', {'hits': 36, 'misses': 9, 'library_hits': 0, 'fallbacks': {'argtype': 5, 'nomemo_raised': 6}})]"
    expect "py$v tensor descriptors: verify agrees" "$(reason tver verify_mismatch):$(total tver hits)" "0:54"
    expect "py$v tensor descriptors: a hit encodes no tensor map" "$(cat "$WORK/toff.err"):$(cat "$WORK/ton.err")" \
        "encoded 135 tensor maps:encoded 522 tensor maps"
    expect "py$v tensor descriptors: rejected each time" "$(grep -c 'raised' "$WORK/ton.out")" 6
    # an encoder that mixes the address into the whole map (1) or keeps it
    # rotated (2): no place found, that entry identical-only, and the
    # process's descriptors keyed by address from then on (20 misses: the
    # buffer combinations; the first learning costs 2 encodes, 60 + 2)
    for sc in 1 2; do
        run tsc$sc 1 tmadesc 20 FAKE_TMAP_SCRAMBLE=$sc
        run tscv$sc verify tmadesc 20 FAKE_TMAP_SCRAMBLE=$sc
        run tsco$sc 0 tmadesc 20 FAKE_TMAP_SCRAMBLE=$sc
        same "py$v tensor maps scrambled ($sc)" tsco$sc tsc$sc
        same "py$v tensor maps scrambled ($sc), verify" tsco$sc tscv$sc
        expect "py$v tensor maps scrambled ($sc): served by address only" "$(tk tsc$sc)" \
            "[('desc_kernel', {'hits': 18, 'misses': 2, 'library_hits': 0, 'fallbacks': {'argtype': 1}}), ('tma_kernel', {'hits': 25, 'misses': 20, 'library_hits': 0, 'fallbacks': {'argtype': 5, 'nomemo_raised': 6}})]"
        expect "py$v tensor maps scrambled ($sc): verify agrees" "$(reason tscv$sc verify_mismatch):$(total tscv$sc hits)" "0:43"
    done
    expect "py$v tensor maps scrambled: encodes" "$(cat "$WORK/tsc1.err"):$(cat "$WORK/tsc2.err")" \
        "encoded 62 tensor maps:encoded 62 tensor maps"

    # no current context: Triton makes one; the memo leaves it to Triton
    run coff 0 loop 30 FAKE_CUDA_NO_CONTEXT=1
    run con 1 loop 30 FAKE_CUDA_NO_CONTEXT=1
    same "py$v no context" coff con
    expect "py$v no context: counted (all but the 3 first misses)" "$(reason con context)" 27
done
[ ${#pythons[@]} -gt 0 ] || fail "python" "no python3 found"

# real torch tensors (torch's own getters, the type watcher that turns them
# off): only where TRLAT_TORCH_PYTHON names a Python with torch (CPU will do).
# Addresses differ between runs: the logs name each pointer by first use.
norm() { awk '{ n = split($0, f, /[|=]/); o = ""; for (i = 1; i <= n; i++) { v = f[i]
    if (length(v) == 16 && v ~ /^[0-9a-f]+$/ && v != "0000000000000000") { if (!(v in id)) id[v] = "P" (++k); v = id[v] }
    o = o v "|" } print o }' "$WORK/$1.log" >"$WORK/$1.norm"; }
# CUPTI (the fake libcupti) joins every kernel record to its launch by the
# launch's driver entry time, replays (the wrapper's common variant) as Triton's own
PY=${pythons[0]} PROG=$ROOT/tests/fastpath/prog.py
for fp in 0 1; do
    TRLAT_CUPTI=1 TRLAT_CUPTI_LIB=$B/tests/fake/libcupti_fake.so TRLAT_FASTPATH=$fp TRLAT_OUTPUT="$WORK/cupti$fp.json" \
        LD_PRELOAD=$LIB "$PY" "$PROG" corpus 4 >/dev/null 2>&1
done
joined='(r["config"]["cupti"], r["totals"]["launches"], r["gpu"]["kernel_records"], r["gpu"]["joined_by_trlat_id"], r["gpu"]["unjoined_records"])'
expect "CUPTI with replays: every kernel record joined to its launch" "$(fpk cupti1 "$joined")" "$(fpk cupti0 "$joined")"
expect "CUPTI with replays: the records are the launches" "$(fpk cupti1 'r["gpu"]["joined_by_trlat_id"] == r["totals"]["launches"] > 100 and sum(k["fastpath"]["hits"] for k in r["kernels"] if k["fastpath"]) > 100')" True

if [ -n "${TRLAT_TORCH_PYTHON:-}" ]; then
    PY=$TRLAT_TORCH_PYTHON PROG=$ROOT/tests/fastpath/realtorch.py
    run rtoff 0 main 10
    run rton 1 main 10 TRLAT_FASTPATH_DEBUG=1
    run rtver verify main 10
    run rtget 1 main 10 TRLAT_FASTPATH_TENSORS=getters TRLAT_FASTPATH_DEBUG=1
    for t in rtoff rton rtver rtget; do norm $t; done
    expect "torch: same output" "$(cat "$WORK/rton.out"):$(cat "$WORK/rtver.out")" "$(cat "$WORK/rtoff.out"):$(cat "$WORK/rtoff.out")"
    if cmp -s "$WORK/rtoff.norm" "$WORK/rton.norm" && cmp -s "$WORK/rtoff.norm" "$WORK/rtver.norm" && [ -s "$WORK/rtoff.norm" ]; then
        ok "torch: same launches"; else fail "torch: same launches" "$(diff "$WORK/rtoff.norm" "$WORK/rton.norm" | head -4)"; fi
    expect "torch: hits; a subclass falls back" "$(total rton hits):$(reason rton argtype)" "105:10"
    expect "torch verify: zero mismatches, same hits" "$(reason rtver verify_mismatch):$(total rtver hits)" "0:105"
    expect "torch: tensors read from torch's structs once 16 reads agreed" \
        "$(grep -c "tensors are read from torch's TensorImpl (16 reads agreed" "$WORK/rton.err")" 1
    if cmp -s "$WORK/rtoff.norm" "$WORK/rtget.norm"; then ok "torch, getters only: same launches"; else
        fail "torch, getters only: same launches" "$(diff "$WORK/rtoff.norm" "$WORK/rtget.norm" | head -4)"; fi
    expect "torch, getters only: never the structs, same hits" \
        "$(grep -c "TensorImpl" "$WORK/rtget.err"):$(total rtget hits)" "0:105"
fi

# A miss through the fast path's kernel[grid] launcher is timed from the
# launcher's entry: its own device read (made slow here, 5 ms) is in the
# call's py_to_driver_ns beside the one Triton's run() makes (so >= 2 x 5 ms)
PY=${pythons[0]} PROG=$ROOT/tests/fastpath/prog.py
run slowdev 1 loop 20 TRLAT_FASTPATH_MEMO=0 FAKE_DEVICE_DELAY_S=0.005
expect "a miss's py_to_driver includes the launcher's keying" \
    "$(fpk slowdev '(lambda p: p["count"] == 20 and p["sum"] / p["count"] >= 2 * 5e6)(k("add_kernel")["py_to_driver_ns"])')" True

# TRLAT_FASTPATH_PHASES=1: one line at exit, every phase, over the hits
# the report counts (all of this workload's hits come through kernel[grid]).
PY=${pythons[0]} PROG=$ROOT/tests/fastpath/prog.py
# TRLAT_TIMING=sampled (the default under TRLAT_FASTPATH=1) on a loop whose
# every hit launches: each statistic's count is one per launch that was not
# a hit plus 16 per sampled hit, the same number of sampled hits in each
# (the driver's, py->driver's, the return's), about 1 in 16 of the hits
# (binomial: some 1,997 hits, 125 expected, sd 11; the bounds are 4 sd);
# the launches exact. (The weighted sums: tests/unit/test_tstate.c. Times
# are not compared across the two processes: they differ by more than a
# sample's error on a loaded machine.)
run samp 1 loop 2000
run sall 1 loop 2000 TRLAT_TIMING=all
same "timing sampled: loop" sall samp
expect "timing sampled: the loop's counts are its non-hits plus 16 per sampled hit, 1 in 16 of its hits sampled" \
    "$(fpk samp 'next(((k["launches"], [(k[m]["count"] - (k["launches"] - k["fastpath"]["hits"])) % 16 for m in ("driver_ns", "py_to_driver_ns", "py_return_ns")], len({k[m]["count"] for m in ("driver_ns", "py_to_driver_ns", "py_return_ns")}), 80 < (k["driver_ns"]["count"] - (k["launches"] - k["fastpath"]["hits"])) // 16 < 170, k["fastpath"]["hits"] > 1900) for k in r["kernels"] if k["name"] == "add_kernel"))')" \
    "(2000, [0, 0, 0], 1, True, True)"

run ph 1 loop 50 TRLAT_FASTPATH_PHASES=1
expect "phases: one line over the report's hits, 7 phases" \
    "$(sed -n 's/.*fast path phases over \([0-9]*\) hits, ns per hit:\(.*\)/\1 \2/p' "$WORK/ph.err" | awk '{print $1, gsub(/;/, ";")}')" \
    "$(total ph hits) 7"
expect "phases: a second line with the device and key's 6 parts" \
    "$(sed -n 's/.*fast path phases, parts of the two above, ns per hit:\(.*\)/\1/p' "$WORK/ph.err" | awk '{print gsub(/;/, ";")}')" \
    "6"
run noph 1 loop 50
expect "phases: nothing without the option" "$(grep -c 'fast path phases' "$WORK/noph.err")" 0

# A Python without an exported PyObject_Vectorcall (3.9, 3.10; an inline
# there): the fast path stands aside, says so once, the program runs as
# without it.
for p in /root/.pyenv/versions/3.10*/bin/python3.10 /root/.pyenv/versions/3.9*/bin/python3.9 python3.10 python3.9; do
    exe=$(command -v "$p" 2>/dev/null) || continue
    PY=$("$exe" -c 'import sys; print(sys.executable if sys.version_info[:2] in ((3, 9), (3, 10)) else "")' 2>/dev/null)
    [ -n "$PY" ] || continue
    run oldoff 0 loop 20
    run oldon 1 loop 20
    expect "$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])'): fast path on runs as off" \
        "$(cat "$WORK/oldon.out")" "$(cat "$WORK/oldoff.out")"
    expect "old Python: said once" "$(grep -c 'fast path: this Python or Triton is not one it knows' "$WORK/oldon.err")" 1
    break
done
