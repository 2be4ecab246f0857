#!/usr/bin/env bash
# TRLAT_TRACE=N keeps the process's newest N launches, in one ring whatever
# the number of threads: exactly N events, the newest, and peak memory that
# does not grow with the threads (tests/integration/tracemem.c).
. "$(dirname "$0")/lib.sh"
N=50000 M=50000 MARKERS=1000

# run NAME THREADS TRACE: tracemem's peak RSS (kB) in $WORK/NAME.rss
run() {
    TRLAT_TRACE=$3 TRLAT_OUTPUT="$WORK/$1.json" LD_PRELOAD=$LIB timeout 120 "$BIN/tracemem" "$2" $M $MARKERS \
        >"$WORK/$1.out" 2>"$WORK/$1.err"
    sed -n 's/^maxrss_kb //p' "$WORK/$1.out" >"$WORK/$1.rss"
}
# newest JSON THREADS: "events ordered markers-last suffixes" for a run's
# report. A launch whose ring slot an older launch of another thread was
# still writing (that thread preempted for a whole turn of the ring) keeps
# no event and is counted (totals.trace_lost): the events may be that many
# fewer, and each thread's kept launches that many short of a suffix; never
# more, and none out of place.
newest() {
    python3 - "$1" "$2" $M $MARKERS $N <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
nt, m, markers = map(int, sys.argv[2:5])
lost = r["totals"]["trace_lost"]
ev = [e for e in r["events"] if e["kind"] == "launch"]
ordered = all(a["start_ns"] <= b["start_ns"] for a, b in zip(ev, ev[1:]))
last = [e["grid"][0] for e in ev[-markers:] if e["kernel"] == "marker_kernel"]
# each thread's kept launches: its last ones, none missing between but the lost
xs = {}
for e in ev:
    if e["kernel"] == "trace_kernel":
        xs.setdefault(e["grid"][1], []).append(e["grid"][0])
gaps = sum(m - min(v) + 1 - len(v) for v in xs.values())
suffix = all(max(v) == m and len(set(v)) == len(v) for v in xs.values()) and gaps <= lost
n = int(sys.argv[5])  # the ring's size
print(n if n - lost <= len(ev) <= n else len(ev), ordered, last == list(range(1, markers + 1)), suffix)
PY
}

run t1 1 $N
run t8 8 $N
run z8 8 0
expect "1 thread x $M: the newest $N launches" "$(newest "$WORK/t1.json" 1)" "$N True True True"
expect "8 threads x $M: the newest $N launches of the process" "$(newest "$WORK/t8.json" 8)" "$N True True True"
expect "8 threads: every launch still counted" \
    "$(rq "$WORK/t8.json" '(k("trace_kernel")["launches"], r["totals"]["launches"])')" \
    "($((8 * M)), $((8 * M + MARKERS)))"
rss1=$(cat "$WORK/t1.rss") rss8=$(cat "$WORK/t8.rss") rss0=$(cat "$WORK/z8.rss")
# the ring: N events of 88 bytes; the report sorts 16 more per event
ring_kb=$((N * 88 / 1024)) report_kb=$((N * 16 / 1024))
expect "peak memory: 8 threads within a quarter of the ring of 1 thread ($rss8 kB, $rss1 kB)" \
    "$([ -n "$rss1" ] && [ -n "$rss8" ] && [ $((rss8 - rss1)) -lt $((ring_kb / 4)) ] && echo yes)" yes
expect "peak memory: the trace costs about the ring and the report's keys ($((rss8 - rss0)) kB, ring $ring_kb kB)" \
    "$([ -n "$rss0" ] && [ $((rss8 - rss0)) -lt $(((ring_kb + report_kb) * 5 / 4)) ] && echo yes)" yes

# Fewer launches than N: all of them.
TRLAT_TRACE=5000 TRLAT_OUTPUT="$WORK/few.json" LD_PRELOAD=$LIB timeout 60 "$BIN/tracemem" 2 1000 10 >/dev/null 2>&1
expect "fewer launches than TRLAT_TRACE: every one an event" \
    "$(rq "$WORK/few.json" 'len([e for e in r["events"] if e["kind"] == "launch"])')" 2010
expect "events carry their thread's id" \
    "$(rq "$WORK/few.json" 'len({e["tid"] for e in r["events"] if e["kernel"] == "trace_kernel"})')" 2

# A forked child's report holds its own launches only, its parent's its own.
TRLAT_TRACE=1000 TRLAT_OUTPUT="$WORK/fork-%p.json" LD_PRELOAD=$LIB timeout 60 "$BIN/launcher" fork 25 \
    >"$WORK/f.out" 2>&1
ppid=$(sed -n 's/^parent \([0-9]*\) .*/\1/p' "$WORK/f.out"); cpid=$(sed -n 's/^child \([0-9]*\) .*/\1/p' "$WORK/f.out")
expect "fork: the child's events are its own" \
    "$(rq "$WORK/fork-$cpid.json" 'sorted({(e["kernel"], e["tid"]) for e in r["events"]}), len(r["events"])')" \
    "([('child_kernel', $cpid)], 50)"
expect "fork: the parent's events are its own" \
    "$(rq "$WORK/fork-$ppid.json" 'sorted({(e["kernel"], e["tid"]) for e in r["events"]}), len(r["events"])')" \
    "([('parent_kernel', $ppid)], 25)"
