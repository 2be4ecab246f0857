#!/usr/bin/env bash
# The files trlat writes: the report reaches its name whole or not at all
# (a temporary moved into place), a failed write (full disk, I/O error) falls
# back to $TMPDIR and says why, special files are refused, fallback reports
# are private, RANK cannot steer the name, every string is strict UTF-8, the
# fast path's log never follows a symlink, and TRLAT_REPORT_LIST names each
# report. Failing and slow writes come from tests/integration/faultyio.c.
. "$(dirname "$0")/lib.sh"
FAULTY=$B/tests/lib/libfaultyio.so
W=$(realpath "$WORK")
mkdir -p "$W/tmp"
export TMPDIR=$W/tmp
umask 022

"$BIN/launcher" direct 5 >"$W/plain.out" 2>&1
lines() { grep -c "$1" "$2"; } # PATTERN FILE
# the directory holds no file, temporaries included
empty() { [ -z "$(ls -A "$1" 2>/dev/null)" ] && echo empty || ls -A "$1" | tr '\n' ' '; }
mode() { stat -c %a "$1" 2>/dev/null; }

# --- a failed write: the cause said, the temporary removed, the report in $TMPDIR
mkdir -p "$W/full"
FAULTY_PATH=$W/full/ FAULTY_ENOSPC_AFTER=4000 TRLAT_TRACE=500 TRLAT_OUTPUT="$W/full/r.json" \
    LD_PRELOAD="$LIB $FAULTY" "$BIN/launcher" direct 500 >"$W/o" 2>"$W/e"; rc=$?
expect "disk full: program runs on" "$rc" 0
expect "disk full: nothing left where it failed" "$(empty "$W/full")" empty
expect "disk full: whole report in TMPDIR" \
    "$(rq "$W/tmp/r.json" '(k("direct_kernel")["launches"], len(r["events"]))')" "(500, 500)"
NOSPC="No space left on device"
expect "disk full: one line, the cause and where it went" \
    "$(cat "$W/e")" "trlat: cannot write $W/full/r.json ($NOSPC); report written to $W/tmp/r.json instead"
expect "disk full: the fallback report is private (0600)" "$(mode "$W/tmp/r.json")" 600
rm -f "$W/tmp/r.json"

FAULTY_PATH=$W/full/ FAULTY_FSYNC_EIO=1 TRLAT_OUTPUT="$W/full/r.json" LD_PRELOAD="$LIB $FAULTY" \
    "$BIN/launcher" direct 5 >/dev/null 2>"$W/e"
expect "fsync error: said, report in TMPDIR" \
    "$(lines "(fsync: Input/output error); report written to $W/tmp/r.json" "$W/e"):$(
        rq "$W/tmp/r.json" 'k("direct_kernel")["launches"]'):$(empty "$W/full")" "1:5:empty"
rm -f "$W/tmp/r.json"

# both full: lost, said once with both causes
mkdir -p "$W/full2"
FAULTY_PATH=$W/full FAULTY_ENOSPC_AFTER=100 TMPDIR=$W/full2 TRLAT_OUTPUT="$W/full/r.json" \
    LD_PRELOAD="$LIB $FAULTY" "$BIN/launcher" direct 5 >"$W/o" 2>"$W/e"; rc=$?
expect "both full: program runs on, same output" "$rc:$(cat "$W/o")" "0:$(cat "$W/plain.out")"
expect "both full: said once, both causes" "$(cat "$W/e")" \
    "trlat: cannot write the report to $W/full/r.json ($NOSPC) nor to $W/full2/r.json ($NOSPC); no report written"
expect "both full: no file left" "$(empty "$W/full")$(empty "$W/full2")" emptyempty

# a real full filesystem, where one can be mounted (root)
if mkdir -p "$W/small" "$W/small2" && mount -t tmpfs -o size=64k tmpfs "$W/small" 2>/dev/null; then
    mount -t tmpfs -o size=64k tmpfs "$W/small2"
    trap 'umount "$W/small" "$W/small2" 2>/dev/null; rm -rf "$WORK"' EXIT
    TRLAT_TRACE=3000 TRLAT_OUTPUT="$W/small/r.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 3000 >/dev/null 2>"$W/e"
    expect "64k tmpfs: no partial report, no temporary" "$(empty "$W/small")" empty
    expect "64k tmpfs: whole report in TMPDIR" "$(rq "$W/tmp/r.json" 'len(r["events"])')" 3000
    expect "64k tmpfs: says why" \
        "$(lines "cannot write $W/small/r.json ($NOSPC); report written to $W/tmp/r.json instead" "$W/e")" 1
    rm -f "$W/tmp/r.json"
    TMPDIR=$W/small2 TRLAT_TRACE=3000 TRLAT_OUTPUT="$W/small/r.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 3000 \
        >/dev/null 2>"$W/e"; rc=$?
    expect "64k tmpfs, both: runs on, lost, said once" \
        "$rc:$(wc -l <"$W/e"):$(lines "no report written" "$W/e")" "0:1:1"
    expect "64k tmpfs, both: nothing left" "$(empty "$W/small")$(empty "$W/small2")" emptyempty
else
    echo "(no tmpfs mount here: the full-disk cases ran on faultyio.c's ENOSPC only)"
fi

# --- killed while writing: the final name never holds a partial report
mkdir -p "$W/slow"
FAULTY_PATH=$W/slow/ FAULTY_WRITE_MS=300 TRLAT_TRACE=3000 TRLAT_OUTPUT="$W/slow/r.json" \
    LD_PRELOAD="$LIB $FAULTY" "$BIN/launcher" direct 3000 >/dev/null 2>&1 &
pid=$!
seen=
for _ in $(seq 200); do
    t=$(ls "$W"/slow/.trlat-*.json.tmp 2>/dev/null | head -1)
    [ -n "$t" ] && [ -s "$t" ] && seen=1 && break
    sleep 0.05
done
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
expect "kill -9 while writing: it was writing a temporary" "$seen" 1
expect "kill -9 while writing: no file under the final name" "$(ls "$W"/slow/*.json 2>/dev/null | wc -l)" 0
expect "kill -9 while writing: only the temporary, clearly named" \
    "$(ls -A "$W/slow" | grep -cvE "^\.trlat-$pid-[0-9a-f]{8}\.json\.tmp$")" 0

# --- filesystems without renameat2(RENAME_NOREPLACE), or without hard links too
# (FAULTY_CALLS: the calls trlat made, in order, the refused ones included)
for how in "FAULTY_NO_RENAMEAT2=1" "FAULTY_NO_RENAMEAT2=1 FAULTY_NO_LINK=1"; do
    mkdir -p "$W/fs"
    echo '{"other": "report"}' >"$W/fs/r.json"
    rm -f "$W/calls"
    env $how FAULTY_CALLS="$W/calls" TRLAT_OUTPUT="$W/fs/r.json" LD_PRELOAD="$LIB $FAULTY" "$BIN/launcher" direct 2 \
        >/dev/null 2>"$W/e"
    env $how FAULTY_CALLS="$W/calls" TRLAT_OUTPUT="$W/fs/s.json" LD_PRELOAD="$LIB $FAULTY" "$BIN/launcher" direct 3 \
        >/dev/null 2>>"$W/e"
    want="renameat2 refused,link File exists,link 0,renameat2 refused,link 0,"
    [ "$how" = "FAULTY_NO_RENAMEAT2=1" ] || want="renameat2 refused,link refused,renameat2 refused,link refused,"
    expect "$how: the fallbacks taken" "$(tr '\n' , <"$W/calls")" "$want"
    expect "$how: beside a taken name, nothing replaced" \
        "$(cat "$W/fs/r.json"):$(rq "$W/fs/r.1.json" 'k("direct_kernel")["launches"]')" '{"other": "report"}:2'
    expect "$how: at a free name" "$(rq "$W/fs/s.json" 'k("direct_kernel")["launches"]')" 3
    expect "$how: no temporary left, nothing said" \
        "$(ls -A "$W/fs" | tr '\n' ' ')$(cat "$W/e")" "r.1.json r.json s.json "
    rm -rf "$W/fs"
done

# --- special files: refused in one line naming them, never opened, nothing
# written beside them; the report goes to TMPDIR under the default name
mkfifo "$W/fifo"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$W/sock"
specials=(/dev/null /dev/stdout /dev/full "$W/fifo" "$W/sock")
mknod "$W/dev" c 1 3 2>/dev/null && specials+=("$W/dev")
for s in "${specials[@]}"; do
    rm -f "$W"/tmp/*
    TRLAT_OUTPUT=$s LD_PRELOAD=$LIB timeout 20 "$BIN/launcher" direct 5 >"$W/o" 2>"$W/e"; rc=$?
    expect "$s: runs on (not blocked), same output" "$rc:$(cat "$W/o")" "0:$(cat "$W/plain.out")"
    line="^trlat: cannot write $s \(a [A-Za-z /]+: refused\); report written to $W/tmp/trlat-[0-9]+\.json instead$"
    expect "$s: one line naming it and the fallback" "$(wc -l <"$W/e"):$(grep -cE "$line" "$W/e")" "1:1"
    expect "$s: report in TMPDIR, private" \
        "$(rq "$W"/tmp/trlat-*.json 'k("direct_kernel")["launches"]'):$(mode "$W"/tmp/trlat-*.json)" "5:600"
    expect "$s: nothing beside it" "$(ls -d "$s".* "${s%.json}".1* 2>/dev/null | wc -l)" 0
done

# --- a directory: the default name inside it
mkdir -p "$W/d" "$W/d2"
TRLAT_OUTPUT=$W/d LD_PRELOAD=$LIB "$BIN/launcher" direct 2 >/dev/null 2>"$W/e"
TRLAT_OUTPUT=$W/d2/ LD_PRELOAD=$LIB "$BIN/launcher" direct 3 >/dev/null 2>>"$W/e"
expect "an existing directory: trlat-%p.json in it" "$(rq "$W"/d/trlat-*.json 'k("direct_kernel")["launches"]')" 2
expect "a name ending in '/': trlat-%p.json in it" "$(rq "$W"/d2/trlat-*.json 'k("direct_kernel")["launches"]')" 3
expect "a directory: nothing said, report 0644 (umask 022)" "$(cat "$W/e")$(mode "$W"/d/trlat-*.json)" 644

# --- RANK and LOCAL_RANK: a plain decimal or nothing; never a path
mkdir -p "$W/r/a/b"
(cd "$W/r/a/b" && RANK=../../x TRLAT_OUTPUT="r-%r.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 2 >/dev/null 2>"$W/e")
expect "RANK=../../x: stays in the directory, as norank" \
    "$(cd "$W/r" && find . -type f | sort | tr '\n' ' ')" "./a/b/r-norank.json "
expect "RANK=../../x: said once, ignored" "$(cat "$W/e")" \
    "trlat: RANK=../../x is not a number from 0 to 2147483647; ignored"
expect "RANK=../../x: report's rank null" "$(rq "$W/r/a/b/r-norank.json" 'r["rank"]')" None
RANK=" 1" LOCAL_RANK=2 WORLD_SIZE=4 TRLAT_OUTPUT="$W/r/l-%r.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 2 \
    >/dev/null 2>"$W/e"
expect "RANK=' 1' ignored, LOCAL_RANK=2 counts" \
    "$(rq "$W/r/l-2.json" '(r["rank"], r["local_rank"], r["world_size"])')" "(None, 2, 4)"
expect "RANK=' 1': said once" "$(wc -l <"$W/e"):$(lines "RANK= 1 is not a number" "$W/e")" "1:1"

# --- TRLAT_FASTPATH_LOG: a symlink planted at its path is not followed, a FIFO not opened
ln -s "$W/victim" "$W/fp.log"
TRLAT_FASTPATH_LOG=$W/fp.log TRLAT_OUTPUT="$W/fp.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 5 >"$W/o" 2>"$W/e"
expect "fast path log: symlink not followed" "$(ls "$W/victim" 2>/dev/null | wc -l)" 0
NOFOLLOW="a symbolic link, not followed"
expect "fast path log: says why, program runs on" \
    "$(lines "TRLAT_FASTPATH_LOG=$W/fp.log cannot be opened ($NOFOLLOW); no launch log" "$W/e"):$(cat "$W/o")" \
    "1:$(cat "$W/plain.out")"
mkfifo "$W/fp.fifo"
TRLAT_FASTPATH_LOG=$W/fp.fifo TRLAT_OUTPUT="$W/fp2.json" LD_PRELOAD=$LIB timeout 20 "$BIN/launcher" direct 5 \
    >/dev/null 2>"$W/e"; rc=$?
expect "fast path log: a FIFO is not opened" "$rc:$(lines "cannot be opened (a FIFO)" "$W/e")" "0:1"

# --- strict UTF-8: kernels named with invalid bytes; strict parsers accept the report
LD_PRELOAD=$LIB TRLAT_OUTPUT="$W/utf8.json" python3 -c '
import ctypes
c = ctypes.CDLL("libcuda.so.1")
for name in [b"over\xc0\x80long", b"over3\xe0\x80\x80", b"over4\xf0\x80\x80\x80", b"surr\xed\xa0\x80",
             b"big\xf4\x90\x80\x80", b"lead\xf5\xff", b"cut\xe2\x82", b"cut\xe2\x82x", b"lone\x80\xbf",
             b"fine_\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"]:
    f = ctypes.c_void_p()
    c.cuModuleGetFunction(ctypes.byref(f), ctypes.c_void_p(0x1000), name)
    c.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, None, None)' >/dev/null 2>"$W/e"
expect "invalid UTF-8 names: json.load accepts, one U+FFFD per invalid part" "$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))
print(sorted(k["name"].encode("unicode_escape").decode() for k in r["kernels"]))' "$W/utf8.json")" \
    "$(python3 -c '
R = "\ufffd"
n = ["over" + 2*R + "long", "over3" + 3*R, "over4" + 4*R, "surr" + 3*R, "big" + 4*R, "lead" + 2*R, "cut" + R,
     "cut" + R + "x", "lone" + 2*R, "fine_\u00e9\u20ac\U0001f600"]
print(sorted(x.encode("unicode_escape").decode() for x in n))')"
"$B/trlat" report "$W/utf8.json" >"$W/o" 2>"$W/e"; rc=$?
expect "invalid UTF-8 names: trlat report accepts, lists them" "$rc:$(grep -c "$(printf '\357\277\275')" "$W/o")" "0:9"

# --- TRLAT_REPORT_LIST: each report's absolute path, one line each, whatever
# the program did: changed directory, met a taken name, fell back, forked
L=$W/list
mkdir -p "$W/l/elsewhere"
(cd "$W/l" && TRLAT_REPORT_LIST=$L TRLAT_OUTPUT=rel.json LD_PRELOAD=$LIB python3 -c '
import ctypes, os
c = ctypes.CDLL("libcuda.so.1"); f = ctypes.c_void_p()
c.cuModuleGetFunction(ctypes.byref(f), ctypes.c_void_p(0x1000), b"moved_kernel")
c.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, None, None, None)
os.chdir("elsewhere")' >/dev/null 2>"$W/e1")
echo '{"other": "report"}' >"$W/l/taken.json"
TRLAT_REPORT_LIST=$L TRLAT_OUTPUT="$W/l/taken.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 2 >/dev/null 2>"$W/e2"
TRLAT_REPORT_LIST=$L TRLAT_OUTPUT=/proc/none/fb.json LD_PRELOAD=$LIB "$BIN/launcher" direct 3 >/dev/null 2>/dev/null
TRLAT_REPORT_LIST=$L TRLAT_OUTPUT="$W/l/fork-%p.json" LD_PRELOAD=$LIB "$BIN/launcher" fork 4 >"$W/f.out" 2>"$W/e3"
ppid=$(sed -n 's/^parent \([0-9]*\) .*/\1/p' "$W/f.out"); cpid=$(sed -n 's/^child \([0-9]*\) .*/\1/p' "$W/f.out")
expect "report list: one absolute line per report" "$(sort "$L" | tr '\n' ' ')" "$(printf '%s\n' \
    "$W/l/elsewhere/rel.json" "$W/l/taken.1.json" "$W/tmp/fb.json" "$W/l/fork-$ppid.json" "$W/l/fork-$cpid.json" |
    sort | tr '\n' ' ')"
expect "report list: each line names that report" \
    "$(while read -r p; do rq "$p" 'sum(k["launches"] for k in r["kernels"])'; done <"$L" | sort | tr '\n' ' ')" \
    "1 2 3 4 8 "
expect "report list: private, nothing said" "$(mode "$L")$(cat "$W/e1" "$W/e2" "$W/e3")" 600
ln -s "$W/victim" "$W/list-link"
TRLAT_REPORT_LIST=$W/list-link TRLAT_OUTPUT="$W/l/x.json" LD_PRELOAD=$LIB "$BIN/launcher" direct 2 >/dev/null 2>"$W/e"
expect "report list: a symlink there is not followed, said" \
    "$(ls "$W/victim" 2>/dev/null | wc -l):$(
        lines "cannot append to TRLAT_REPORT_LIST=$W/list-link ($NOFOLLOW); the report is $W/l/x.json" "$W/e")" "0:1"
