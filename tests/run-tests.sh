#!/usr/bin/env bash
# Runs every test suite and ends with one line: "N passed, N failed".
# Unit tests count their Check tests; integration and CLI scripts count
# their "ok"/"FAIL" lines.
set -u
# Each suite sets the TRLAT_* options it tests: none may come from the
# caller's environment (an exported TRLAT_FASTPATH=1 changes what they see).
for v in $(compgen -e | grep -E '^(TRLAT_|FAKE_)'); do unset "$v"; done
unset LD_PRELOAD
BUILD=${BUILD:-build}
export BUILD
passed=0 failed=0
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

count_check() { # Check's "100%: Checks: 12, Failures: 0, Errors: 0"
    local line c f e
    line=$(grep -E '^[0-9]+%: Checks: ' "$1" | tail -1)
    c=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
    f=$(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$line")
    e=$(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$line")
    [ -n "$line" ] || { c=1; f=1; e=0; }
    passed=$((passed + c - f - e)); failed=$((failed + f + e))
}

for bin in "$BUILD"/tests/unit/test_* "$BUILD"/tests/unit-san/test_*; do
    [ -x "$bin" ] || continue
    name=${bin#"$BUILD"/tests/}
    if CK_FORK=yes "$bin" >"$log/out" 2>&1; then rc=0; else rc=$?; fi
    count_check "$log/out"
    if [ $rc -ne 0 ]; then
        echo "FAIL $name (exit $rc)"; sed 's/^/    /' "$log/out" | tail -30
        grep -qE '^[0-9]+%: Checks: ' "$log/out" || failed=$((failed + 1))
    else
        echo "ok   $name: $(grep -E '^[0-9]+%: Checks: ' "$log/out" | tail -1)"
    fi
done

for script in tests/integration/test_*.sh tests/cli/run.sh; do
    [ -f "$script" ] || continue
    bash "$script" >"$log/out" 2>&1
    rc=$?
    p=$(grep -cE '^ok ' "$log/out"); f=$(grep -cE '^FAIL ' "$log/out")
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$f" -gt 0 ] || [ $rc -ne 0 ]; then
        echo "FAIL $script ($p ok, $f failed, exit $rc)"; grep -vE '^ok ' "$log/out" | sed 's/^/    /' | tail -40
        [ "$f" -gt 0 ] || failed=$((failed + 1))
    else
        echo "ok   $script: $p tests"
    fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
