#!/usr/bin/env bash
# Reports of processes that end without exit's handlers: TRLAT_FLUSH_S=N
# writes the report every N seconds (os._exit, SIGKILL, a forked child's
# os._exit), and the Python API's trlat.flush() writes it on demand.
. "$(dirname "$0")/lib.sh"
PROG=$ROOT/tests/integration/flushprog.py
PY=$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')

run() { # NAME MODE N [env...]: reports as $WORK/NAME-<pid>.json
    local name=$1 mode=$2 n=$3; shift 3
    env "$@" TRLAT_OUTPUT="$WORK/$name-%p.json" LD_PRELOAD=$LIB "$PY" "$PROG" "$mode" "$n" >"$WORK/$name.out" 2>"$WORK/$name.err"
    echo $? >"$WORK/$name.rc"
}
reports() { ls "$WORK/$1"-*.json 2>/dev/null | wc -l; }
count() { rq "$(ls "$WORK/$1"-*.json | head -1)" 'k("'"$2"'")["launches"] if k("'"$2"'") else 0'; }

run exit0 exit 100
expect "os._exit without TRLAT_FLUSH_S: no report (as before)" "$(cat "$WORK/exit0.rc"):$(reports exit0)" "0:0"
run exit1 exit 100 TRLAT_FLUSH_S=1
expect "os._exit with TRLAT_FLUSH_S=1: the last checkpoint's report" "$(cat "$WORK/exit1.rc"):$(reports exit1):$(count exit1 flush_kernel)" "0:1:100"
expect "os._exit: nothing on stderr" "$(cat "$WORK/exit1.err")" ""
{ run kill1 kill 70 TRLAT_FLUSH_S=1; } 2>/dev/null # the shell says "Killed"
expect "SIGKILL with TRLAT_FLUSH_S=1: killed, the report left" "$(cat "$WORK/kill1.rc"):$(reports kill1):$(count kill1 flush_kernel)" "137:1:70"

run fork fork 30 TRLAT_FLUSH_S=1
expect "fork: the parent's report and the child's" "$(reports fork)" 2
expect "fork: the child's (its os._exit) has its launches, the parent's its own" \
    "$(for f in "$WORK"/fork-*.json; do rq "$f" '(k("parent_kernel") or {}).get("launches", 0), (k("child_kernel") or {}).get("launches", 0)'; done | sort | tr '\n' ' ')" \
    "(0, 30) (30, 0) "

run bad exit 10 TRLAT_FLUSH_S=soon
expect "TRLAT_FLUSH_S=soon: said once, no timer" \
    "$(grep -c 'TRLAT_FLUSH_S' "$WORK/bad.err"):$(reports bad)" "1:0"

# trlat.flush(): the report now, at the path the exit's report takes too
run api api 20 TRLAT_SUMMARY=0
path=$(ls "$WORK"/api-*.json)
expect "api: nothing before the first launch" "$(sed -n 's/^before: //p' "$WORK/api.out")" "None None"
expect "api: flush() names the report, report_path() the same" "$(sed -n 's/^flushed: //p' "$WORK/api.out")" "$path True"
expect "api: the exit's report replaced it: 40 launches, none paused" \
    "$(rq "$path" '(k("api_kernel")["launches"], k("paused_kernel"))')" "(40, None)"
expect "api: fastpath() without the fast path: None" "$(sed -n 's/^fastpath: //p' "$WORK/api.out")" None
expect "api: exit 0, nothing on stderr" "$(cat "$WORK/api.rc"):$(cat "$WORK/api.err")" "0:"

"$PY" "$PROG" noload 0 >"$WORK/noload.out" 2>&1
expect "without trlat: NotLoaded says how to start it" "$(grep -c 'start the program with `trlat run -- python' "$WORK/noload.out")" 1
