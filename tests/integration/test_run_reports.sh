#!/usr/bin/env bash
# trlat run with the library itself (not a stand-in): it names the report
# wherever the library wrote it (TRLAT_REPORT_LIST), and ends as its
# command did.
source "$(dirname "$0")/lib.sh"
TRLAT=$B/trlat
export TRLAT_SUMMARY=0

# runs trlat run ARGS... in $WORK; sets rc and out (stdout and stderr)
run() {
    out=$(cd "$WORK" && timeout 60 "$TRLAT" run "$@" 2>&1)
    rc=$?
}

# the name taken: the report goes to X.1.json
echo '{}' >"$WORK/taken.json"
run -o taken.json -- "$BIN/launcher" direct 7
expect "taken name: exit 0" "$rc" 0
case "$out" in *"taken.1.json"*) ok "taken name: trlat run names taken.1.json" ;;
    *) fail "taken name: trlat run names taken.1.json" "$out" ;; esac
expect "taken name: the report it names" "$(rq "$WORK/taken.1.json" 'r["totals"]["launches"]')" 7

# an unwritable directory: the report falls back to $TMPDIR
mkdir -p "$WORK/tmp"
out=$(cd "$WORK" && TMPDIR=$WORK/tmp timeout 60 "$TRLAT" run -o /nonexistent-dir/fb.json -- "$BIN/launcher" direct 4 2>&1)
expect "fallback: the report is in TMPDIR" "$(rq "$WORK/tmp/fb.json" 'r["totals"]["launches"]')" 4
case "$out" in *"tmp/fb.json"*) ok "fallback: trlat run names it" ;; *) fail "fallback: trlat run names it" "$out" ;; esac
case "$out" in *"no report"*) fail "fallback: no 'no report' line" "$out" ;; *) ok "fallback: no 'no report' line" ;; esac

# the command changed directory before it launched
mkdir -p "$WORK/sub"
run -- sh -c "cd sub && exec '$BIN/launcher' direct 3"
r=$(ls "$WORK"/sub/trlat-*.json 2>/dev/null | head -1)
expect "chdir: the report is in the command's directory" "$(rq "$r" 'r["totals"]["launches"]')" 3
case "$out" in *"sub/trlat-"*) ok "chdir: trlat run names it" ;; *) fail "chdir: trlat run names it" "$out" ;; esac

# the command's status is trlat run's
run -- sh -c "'$BIN/launcher' direct 2; exit 5"
expect "exit status passed on" "$rc" 5
