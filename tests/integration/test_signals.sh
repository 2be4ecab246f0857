#!/usr/bin/env bash
# A process that SIGTERM, SIGINT, SIGHUP or SIGQUIT ends, or a Python
# interpreter ending on an uncaught KeyboardInterrupt, writes its report and
# ends exactly as without trlat (interpose/signals.c, interpose/python/pyhook.py).
. "$(dirname "$0")/lib.sh"
SIGRUN=$ROOT/tests/integration/sigrun.py
PROG=$ROOT/tests/integration/sigprog.py
PY=$(python3 -c 'import sys; print(sys.executable)') # not a shim script

# both NAME SIGRUN-ARGS... -- CMD...: the command under sigrun without trlat
# ($WORK/NAME.plain) and with it ($WORK/NAME.out, report $WORK/NAME.json).
both() {
    local name=$1 a=(); shift
    while [ "$1" != "--" ]; do a+=("$1"); shift; done
    shift
    timeout 60 "$PY" "$SIGRUN" "${a[@]}" -- "$@" >"$WORK/$name.plain" 2>"$WORK/$name.plain.err"
    traced "$name" "${a[@]}" -- "$@"
}
traced() { # NAME SIGRUN-ARGS... -- CMD...: with trlat only
    local name=$1; shift
    local a=(); while [ "$1" != "--" ]; do a+=("$1"); shift; done
    shift
    timeout 60 "$PY" "$SIGRUN" "${a[@]}" -- env LD_PRELOAD="$LIB" TRLAT_OUTPUT="$WORK/$name.json" "$@" \
        >"$WORK/$name.out" 2>"$WORK/$name.err"
}
field() { sed -n "s/^$2 //p" "$WORK/$1"; }                       # FILE KEY: its value
lines() { grep -E "$2" "$WORK/$1" | grep -v '^ready' | tr '\n' ';'; } # FILE REGEX: those lines
kernels() { rq "$1" '[(x["name"], x["launches"]) for x in r["kernels"]]'; } # REPORT: (name, launches)

# The default action: the report is written, then the process dies by the
# same signal (and a core for SIGQUIT where the system dumps one: allowed
# here up to the hard limit; the status compared includes the core flag).
for sig in TERM INT HUP QUIT; do
    both "$sig" --core "$sig" -- "$BIN/launcher" wait 37
    expect "SIG$sig: the process dies by it, as without trlat" "$(field "$sig.out" status)" \
        "$(field "$sig.plain" status)"
    expect "SIG$sig: killed by SIG$sig" "$(field "$sig.out" status | cut -d' ' -f1)" "signal=$sig"
    expect "SIG$sig: report with the exact launches, one launching thread" \
        "$(rq "$WORK/$sig.json" '(k("wait_kernel")["launches"], r["totals"]["launches"], r["totals"]["threads"])')" \
        "(37, 37, 1)"
done
expect "the watcher thread is trlat-signal, the program's own thread list otherwise" \
    "$(field TERM.out threads)/$(field TERM.plain threads)" "launcher trlat-signal/launcher"

# The program's own handlers, installed before the first CUDA call: they
# run (same signal, siginfo, mask, SA_RESETHAND) and the program ends as it
# chooses (exit 3); the report is written at that exit.
for how in handler siginfo; do
    for sig in TERM INT HUP QUIT; do
        both "$how-$sig" "$sig" -- "$BIN/launcher" wait_$how 23
        expect "own $how for SIG$sig: it runs, the program exits as it chooses, as without trlat" \
            "$(lines "$how-$sig.out" '^(handled|status)')" "$(lines "$how-$sig.plain" '^(handled|status)')"
        expect "own $how for SIG$sig: report at its exit" \
            "$(rq "$WORK/$how-$sig.json" 'k("wait_kernel")["launches"]')" 23
    done
done
expect "own handler: what it saw" "$(lines handler-TERM.out '^handled')" "handled 15 mask_ok=1 from_parent=-1 reset=0;"
expect "own SA_SIGINFO|SA_RESETHAND handler: what it saw" "$(lines siginfo-HUP.out '^handled')" \
    "handled 1 mask_ok=1 from_parent=1 reset=1;"
expect "own handlers exit 3" "$(field siginfo-QUIT.out status)" "exit=3"

# Ignored signals stay ignored: the process outlives all four, then exits 0.
both ignore --survive 0.3 TERM,INT,HUP,QUIT -- "$BIN/launcher" wait_ignore 11
expect "SIG_IGN kept: survives, exits 0 as without trlat" "$(lines ignore.out '^(alive|status)')" \
    "$(lines ignore.plain '^(alive|status)')"
expect "SIG_IGN kept: survives all four" "$(lines ignore.out '^(alive|status)')" "alive 1;status exit=0;"
expect "SIG_IGN kept: report at exit" "$(rq "$WORK/ignore.json" 'k("wait_kernel")["launches"]')" 11

# A forked child that launches has a watcher of its own: signalled, it
# writes its report and dies by the signal; the parent's report is its own.
timeout 60 "$PY" "$SIGRUN" TERM -- env LD_PRELOAD="$LIB" TRLAT_OUTPUT="$WORK/fork-%p.json" \
    "$BIN/launcher" wait_fork 5 >"$WORK/fork.out" 2>&1
cpid=$(field fork.out ready)
expect "forked child: dies by SIGTERM, promptly" \
    "$(lines fork.out '^child ended')/$(field fork.out elapsed | cut -c1)" "child ended: signal 15;/0"
expect "forked child: its watcher" "$(field fork.out threads)" "launcher trlat-signal"
expect "forked child: its report" "$(kernels "$WORK/fork-$cpid.json")" "[('wait_child_kernel', 5)]"
parent=$(ls "$WORK"/fork-*.json | grep -v "fork-$cpid.json")
expect "forked child: the parent's report" "$(ls "$WORK"/fork-*.json | wc -l)/$(kernels "$parent")" \
    "2/[('wait_kernel', 5)]"

# A signal while the report is written at a normal exit (a 500,000-event
# trace: about a second) is held until the report is out, then ends the
# process by it; a second signal meanwhile changes nothing. No hang. The
# report is written to a temporary beside its final name and moved there
# when complete: its temporary appearing is the write under way.
for sigs in TERM TERM,INT; do
    rm -f "$WORK/slow.json"
    TRLAT_TRACE=500000 TRLAT_OUTPUT="$WORK/slow.json" LD_PRELOAD=$LIB timeout 60 "$PY" "$SIGRUN" \
        --ready-file "$WORK/.trlat-*.json.tmp" "$sigs" -- "$BIN/launcher" direct 500000 >"$WORK/slow.out" 2>&1
    expect "$sigs while the report is written at exit: dies by SIGTERM" "$(field slow.out status)" "signal=TERM core=0"
    expect "$sigs while the report is written at exit: the report is complete" \
        "$(rq "$WORK/slow.json" '(k("direct_kernel")["launches"], len(r["events"]))')" "(500000, 500000)"
done

# The watcher cannot finish (the signalled thread holds stderr's lock, which
# the summary needs): the process still dies by the signal, after the wait's
# bound (5 s), with the report file written before the summary.
TRLAT_SUMMARY=1 traced locked TERM -- "$BIN/launcher" wait_locked 9
expect "watcher stuck: dies by SIGTERM" "$(field locked.out status)" "signal=TERM core=0"
expect "watcher stuck: after the 5 s bound, not much later" \
    "$("$PY" -c "print(4.5 <= $(field locked.out elapsed) < 9)")" True
expect "watcher stuck: the report file" "$(rq "$WORK/locked.json" 'k("wait_kernel")["launches"]')" 9

# Python, launching through ctypes without Triton, each interpreter here.
for py in $(find_pythons 10); do
    v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    p=py$v
    both "$p-term" TERM -- "$py" "$PROG" wait 17
    expect "python $v SIGTERM: dies by it, as without trlat" \
        "$(field "$p-term.out" status)/$(field "$p-term.plain" status)" "signal=TERM core=0/signal=TERM core=0"
    expect "python $v SIGTERM: report" \
        "$(rq "$WORK/$p-term.json" '(k("py_kernel")["launches"], r["totals"]["threads"])')" "(17, 1)"

    both "$p-raise" - -- "$py" "$PROG" raise 17
    expect "python $v uncaught KeyboardInterrupt: dies by SIGINT, as without trlat" \
        "$(field "$p-raise.out" status)/$(field "$p-raise.plain" status)" "signal=INT core=0/signal=INT core=0"
    expect "python $v uncaught KeyboardInterrupt: report" "$(kernels "$WORK/$p-raise.json")" "[('py_kernel', 17)]"
    expect "python $v uncaught KeyboardInterrupt: same traceback" "$(cat "$WORK/$p-raise.err")" \
        "$(cat "$WORK/$p-raise.plain.err")"

    both "$p-sleep" INT -- "$py" "$PROG" sleep 17
    expect "python $v SIGINT in time.sleep: dies by SIGINT, as without trlat" \
        "$(field "$p-sleep.out" status)/$(field "$p-sleep.plain" status)" "signal=INT core=0/signal=INT core=0"
    expect "python $v SIGINT in time.sleep: report" "$(kernels "$WORK/$p-sleep.json")" "[('py_kernel', 17)]"

    # The report is written at the end of finalization: launches of the
    # program's own atexit callbacks count, at a normal exit as before.
    both_launches='(k("py_kernel")["launches"], k("py_atexit_kernel")["launches"])'
    traced "$p-atexit-raise" - -- "$py" "$PROG" atexit_raise 17
    expect "python $v KeyboardInterrupt: the program's atexit launches count" \
        "$(field "$p-atexit-raise.out" status)/$(rq "$WORK/$p-atexit-raise.json" "$both_launches")" \
        "signal=INT core=0/(17, 17)"
    traced "$p-atexit" - -- "$py" "$PROG" atexit 17
    expect "python $v normal exit: unchanged, the program's atexit launches count" \
        "$(field "$p-atexit.out" status)/$(rq "$WORK/$p-atexit.json" "$both_launches")" "exit=0/(17, 17)"

    # os.fork: a child ending on KeyboardInterrupt writes its own report.
    rm -f "$WORK"/pyfork-*.json
    TRLAT_OUTPUT="$WORK/pyfork-%p.json" LD_PRELOAD=$LIB timeout 60 "$py" "$PROG" fork_raise 17 \
        >"$WORK/pyfork.out" 2>/dev/null
    rc=$?
    cpid=$(sed -n 's/^child \([0-9]*\)$/\1/p' "$WORK/pyfork.out")
    expect "python $v os.fork child on KeyboardInterrupt: dies by SIGINT, parent exits 0" \
        "$(grep '^child ended' "$WORK/pyfork.out")/$rc" "child ended: signal 2/0"
    expect "python $v os.fork child on KeyboardInterrupt: its report" "$(kernels "$WORK/pyfork-$cpid.json")" \
        "[('py_child_kernel', 17)]"
    parent=$(ls "$WORK"/pyfork-*.json | grep -v "pyfork-$cpid.json")
    expect "python $v os.fork: the parent's report" "$(ls "$WORK"/pyfork-*.json | wc -l)/$(kernels "$parent")" \
        "2/[('py_kernel', 17)]"
done
