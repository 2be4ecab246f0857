#!/usr/bin/env bash
# Every bad value of every variable: one stderr line naming the variable and
# the accepted values; the default stands; the program runs on.
. "$(dirname "$0")/lib.sh"

check_bad() { # VAR VALUE ACCEPTED
    env "$1=$2" TRLAT_OUTPUT="$WORK/c.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 3 >"$WORK/o" 2>"$WORK/e"; rc=$?
    expect "$1=$2: runs on" "$rc" 0
    expect "$1=$2: one line naming it" "$(grep -c "$1=" "$WORK/e")" 1
    expect "$1=$2: names accepted values" "$(grep -cF "expected $3" "$WORK/e")" 1
    rm -f "$WORK/c.json"
}
for v in 2 yes -1 " 1" 1x; do check_bad TRLAT_DISABLE "$v" "0 or 1 (on/off, true/false)"; done
for v in 2 maybe onn; do check_bad TRLAT_SUMMARY "$v" "0, 1 (on/off, true/false) or all"; done
for v in 2 yes automatic; do check_bad TRLAT_CUPTI "$v" "0, 1 (on/off, true/false) or auto"; done
for v in 2 yes verif; do check_bad TRLAT_FASTPATH "$v" "0, 1 (on/off, true/false) or verify"; done
for v in 2 yes; do check_bad TRLAT_STACKS "$v" "0 or 1 (on/off, true/false)"; done
for v in -5 abc 10000001 99999999999999999999 1.5; do check_bad TRLAT_TRACE "$v" "a number"; done
# the fast path's own (read with the others, whether the fast path is on or not)
for v in values ident 1; do check_bad TRLAT_FASTPATH_MODE "$v" "value or identical"; done
for v in -1 1048577 1k " 8"; do check_bad TRLAT_FASTPATH_MEMO "$v" "a number of entries"; done
for v in 0 hold; do check_bad TRLAT_FASTPATH_GIL "$v" "release or keep"; done
for v in 2 no; do check_bad TRLAT_FASTPATH_GETITEM "$v" "0 or 1 (on/off, true/false)"; done
for v in 2 no; do check_bad TRLAT_FASTPATH_LIBENTRY "$v" "0 or 1 (on/off, true/false)"; done
for v in 2 yes; do check_bad TRLAT_FASTPATH_DEBUG "$v" "0 or 1 (on/off, true/false)"; done
for v in 1 evaluate; do check_bad TRLAT_FASTPATH_GRID "$v" "eval or call"; done
for v in 2 yes; do check_bad TRLAT_FASTPATH_PHASES "$v" "0 or 1 (on/off, true/false)"; done

# Every on/off variable takes 0/1, on/off and true/false alike, in any case:
# what ran is the report's config.
good() { # VAR VALUE EXPR EXPECTED
    env "$1=$2" TRLAT_OUTPUT="$WORK/g.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 3 >/dev/null 2>"$WORK/e"
    expect "$1=$2: accepted" "$(grep -c "$1=" "$WORK/e")" 0
    expect "$1=$2: as it says" "$(rq "$WORK/g.json" "$3")" "$4"
    rm -f "$WORK/g.json"
}
for v in on ON true True 1; do good TRLAT_STACKS "$v" 'r["config"]["stacks"]' True; done
for v in off OFF false FALSE 0; do good TRLAT_STACKS "$v" 'r["config"]["stacks"]' False; done
for v in on true; do good TRLAT_FASTPATH "$v" 'r["config"]["fastpath"]' on; done
for v in off false; do good TRLAT_FASTPATH "$v" 'r["config"]["fastpath"]' off; done
good TRLAT_FASTPATH Verify 'r["config"]["fastpath"]' verify
for v in off false; do good TRLAT_CUPTI "$v" 'r["config"]["cupti"]' off; done
good TRLAT_SUMMARY off 'r["config"]["stacks"]' False

# The rank from the common launchers' variables, torchrun's first; the
# report's fields and %r; %q{VAR} in the output path.
ranks() { # ENV... : the report's (rank, local_rank, world_size) and its file name
    rm -f "$WORK"/rk-*.json
    env -u RANK -u LOCAL_RANK -u WORLD_SIZE "$@" TRLAT_OUTPUT="$WORK/rk-%r-%q{JOB_TAG}.json" LD_PRELOAD=$LIB \
        "$BIN/launcher" direct 3 >/dev/null 2>"$WORK/re"
    f=$(ls "$WORK"/rk-*.json 2>/dev/null | head -1)
    echo "$(basename "$f") $(rq "$f" '(r["rank"], r["local_rank"], r["world_size"])')"
}
expect "rank: Slurm" "$(ranks SLURM_PROCID=5 SLURM_LOCALID=1 SLURM_NTASKS=8 JOB_TAG=a/b)" "rk-5-a_b.json (5, 1, 8)"
expect "rank: Open MPI" "$(ranks OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_LOCAL_RANK=0 OMPI_COMM_WORLD_SIZE=4)" \
    "rk-3-.json (3, 0, 4)"
expect "rank: PMI" "$(ranks PMI_RANK=2 PMI_SIZE=6 MPI_LOCALRANKID=2)" "rk-2-.json (2, 2, 6)"
expect "rank: torchrun's first" "$(ranks RANK=1 SLURM_PROCID=7 LOCAL_RANK=1 WORLD_SIZE=2)" "rk-1-.json (1, 1, 2)"
expect "rank: an invalid one is ignored, the next counts" "$(ranks RANK=x1 SLURM_PROCID=4)" "rk-4-.json (4, None, None)"
expect "rank: the invalid one said once" "$(grep -c 'RANK=x1 is not a number' "$WORK/re")" 1

# The exit summary: local rank 0's (or a process's without one); every
# rank's with TRLAT_SUMMARY=all.
summary() { env "$@" TRLAT_OUTPUT="$WORK/sm-%p.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 3 2>&1 >/dev/null |
    grep -c '^trlat: 3 launches'; }
expect "summary: no rank" "$(summary TRLAT_SUMMARY=1)" 1
expect "summary: local rank 0" "$(summary TRLAT_SUMMARY=1 LOCAL_RANK=0)" 1
expect "summary: local rank 1 says nothing" "$(summary TRLAT_SUMMARY=1 SLURM_LOCALID=1)" 0
expect "summary: all ranks with all" "$(summary TRLAT_SUMMARY=all SLURM_LOCALID=1)" 1
expect "summary: off" "$(summary TRLAT_SUMMARY=off)" 0

# The default stands: a bad TRLAT_TRACE keeps 0 events, a bad TRLAT_DISABLE keeps recording.
TRLAT_TRACE=abc TRLAT_DISABLE=maybe TRLAT_OUTPUT="$WORK/d.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 3 >/dev/null 2>&1
expect "bad values: defaults stand" "$(rq "$WORK/d.json" '(len(r["events"]), k("direct_kernel")["launches"])')" "(0, 3)"

# TRLAT_TIMING=none: launches counted exactly, none timed (no clock read on
# the launch path); CUPTI and trace events, which need launch times, stay
# off, said once when asked for.
for v in some 0 nothing sample; do check_bad TRLAT_TIMING "$v" "all, sampled, none or auto"; done
TRLAT_TIMING=none TRLAT_OUTPUT="$WORK/t.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 300 >/dev/null 2>"$WORK/te"
expect "timing none: said nothing" "$(wc -l <"$WORK/te")" 0
expect "timing none: config, launches, no times" \
    "$(rq "$WORK/t.json" '(r["config"]["timing"], k("direct_kernel")["launches"], k("direct_kernel")["driver_ns"]["count"], k("direct_kernel")["gap_ns"]["count"], r["totals"]["launches"])')" \
    "('none', 300, 0, 0, 300)"
TRLAT_OUTPUT="$WORK/t2.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 300 >/dev/null 2>&1
expect "timing all (default): every launch timed" \
    "$(rq "$WORK/t2.json" '(r["config"]["timing"], k("direct_kernel")["driver_ns"]["count"], k("direct_kernel")["gap_ns"]["count"])')" \
    "('all', 300, 299)"
TRLAT_TIMING=none TRLAT_CUPTI=1 TRLAT_TRACE=50 TRLAT_OUTPUT="$WORK/t3.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 3 \
    >/dev/null 2>"$WORK/te"
expect "timing none: CUPTI=1 refused once" "$(grep -c "TRLAT_CUPTI=1 needs launch times" "$WORK/te")" 1
expect "timing none: TRACE refused once" "$(grep -c "TRLAT_TRACE needs launch times" "$WORK/te")" 1
expect "timing none: CUPTI off, no events, launches counted" \
    "$(rq "$WORK/t3.json" '(r["config"]["cupti"], r["config"]["cupti_reason"].startswith("TRLAT_TIMING=none"), len(r["events"]), k("direct_kernel")["launches"])')" "('off', True, 0, 3)"
# ... and the CLI says so (report, merge of a timed and an untimed report)
"$B/trlat" report "$WORK/t.json" >"$WORK/tr" 2>&1
expect "timing none: trlat report names it" "$(grep -c "timing none" "$WORK/tr"):$(grep -c "Launches were counted, not timed (TRLAT_TIMING=none)" "$WORK/tr")" "1:1"
"$B/trlat" merge "$WORK/t.json" "$WORK/t2.json" -o "$WORK/tm.json" >/dev/null 2>&1
expect "timing none: a merge with a timed report says mixed" "$(rq "$WORK/tm.json" 'r["config"]["timing"]')" mixed
TRLAT_SUMMARY=1 TRLAT_TIMING=none TRLAT_OUTPUT="$WORK/t4.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 3 >/dev/null 2>"$WORK/te"
expect "timing none: the exit summary says so" "$(grep -c "^trlat: 3 launches of 1 kernels in .*; not timed (TRLAT_TIMING=none); report:" "$WORK/te")" 1

# TRLAT_TIMING's default (auto) is sampled under TRLAT_FASTPATH=1 (a
# fast-path hit timed 1 in 16; every other launch timed: here all, none
# being a hit), all otherwise and where CUPTI or a trace is asked for; an
# explicit sampled beside them times all, said once.
TRLAT_FASTPATH=1 TRLAT_CUPTI=auto TRLAT_OUTPUT="$WORK/s1.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 300 >/dev/null 2>"$WORK/te"
expect "timing auto, fast path on: sampled, said nothing, every launch not a hit timed" \
    "$(wc -l <"$WORK/te"):$(rq "$WORK/s1.json" '(r["config"]["timing"], k("direct_kernel")["launches"], k("direct_kernel")["driver_ns"]["count"], k("direct_kernel")["gap_ns"]["count"], r["config"]["cupti_reason"].startswith("TRLAT_FASTPATH=1"))')" \
    "0:('sampled', 300, 300, 299, True)"
TRLAT_FASTPATH=verify TRLAT_OUTPUT="$WORK/s2.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 3 >/dev/null 2>&1
TRLAT_FASTPATH=1 TRLAT_CUPTI=1 TRLAT_OUTPUT="$WORK/s3.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 3 >/dev/null 2>"$WORK/te3"
TRLAT_FASTPATH=1 TRLAT_TRACE=50 TRLAT_OUTPUT="$WORK/s4.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 3 >/dev/null 2>"$WORK/te4"
expect "timing auto: all under verify, beside CUPTI=1 or a trace, nothing said about timing" \
    "$(rq "$WORK/s2.json" 'r["config"]["timing"]'):$(rq "$WORK/s3.json" 'r["config"]["timing"]'):$(rq "$WORK/s4.json" '(r["config"]["timing"], len(r["events"]))'):$(cat "$WORK/te3" "$WORK/te4" | grep -c TRLAT_TIMING)" \
    "all:all:('all', 3):0"
TRLAT_TIMING=sampled TRLAT_TRACE=50 TRLAT_OUTPUT="$WORK/s5.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 3 >/dev/null 2>"$WORK/te"
expect "timing sampled with a trace: said once, all timed, the events kept" \
    "$(grep -c "TRLAT_TRACE needs every launch timed; with it, TRLAT_TIMING=sampled times all" "$WORK/te"):$(rq "$WORK/s5.json" '(r["config"]["timing"], len(r["events"]))')" \
    "1:('all', 3)"
TRLAT_TIMING=sampled TRLAT_CUPTI=auto TRLAT_SUMMARY=1 TRLAT_OUTPUT="$WORK/s6.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 3 >/dev/null 2>"$WORK/te"
expect "timing sampled without the fast path: CUPTI's auto off (a hit left out has no entry time to join), the summary says it" \
    "$(rq "$WORK/s6.json" '(r["config"]["timing"], r["config"]["cupti"], r["config"]["cupti_reason"].startswith("TRLAT_TIMING=sampled"))'):$(grep -c "^trlat: 3 launches of 1 kernels in .*; ~.* in the driver (fast-path hits timed 1 in 16: TRLAT_TIMING=sampled); report:" "$WORK/te")" \
    "('sampled', 'off', True):1"

# TRLAT_CUPTI's default (auto) leaves CUPTI off under TRLAT_FASTPATH=1: its
# callback and kernel record would cost each launch as much as a replay.
# Asked for (TRLAT_CUPTI=1), or under verify mode, it runs; the report and
# `trlat report` say why it is off. (lib.sh sets TRLAT_CUPTI=0: unset here.)
FAKE_CUPTI=$B/tests/fake/libcupti_fake.so
cupti_case() { # NAME EXPECTED ENV...
    local name=$1 want=$2; shift 2
    env -u TRLAT_CUPTI "$@" TRLAT_CUPTI_LIB="$FAKE_CUPTI" TRLAT_OUTPUT="$WORK/fc-$name.json" LD_PRELOAD=$LIB \
        "$BIN/launcher" direct 3 \
        >/dev/null 2>"$WORK/fc-$name.err"
    expect "fast path and CUPTI: $name" "$(rq "$WORK/fc-$name.json" '(r["config"]["cupti"], (r["config"]["cupti_reason"] or "")[:17], r["config"]["fastpath"], k("direct_kernel")["launches"])')" "$want"
    expect "fast path and CUPTI: $name, nothing on stderr" "$(wc -l <"$WORK/fc-$name.err")" 0
}
cupti_case auto-fastpath-1 "('off', 'TRLAT_FASTPATH=1:', 'on', 3)" TRLAT_FASTPATH=1
cupti_case asked-fastpath-1 "('on', '', 'on', 3)" TRLAT_FASTPATH=1 TRLAT_CUPTI=1
cupti_case auto-verify "('on', '', 'verify', 3)" TRLAT_FASTPATH=verify
cupti_case auto-no-fastpath "('on', '', 'off', 3)"
cupti_case off-fastpath-1 "('off', '', 'on', 3)" TRLAT_FASTPATH=1 TRLAT_CUPTI=0
"$B/trlat" report "$WORK/fc-auto-fastpath-1.json" >"$WORK/fcr" 2>&1
expect "fast path and CUPTI: trlat report says why it is off" "$(grep -c "cupti off (TRLAT_FASTPATH=1: CUPTI would add" "$WORK/fcr")" 1
