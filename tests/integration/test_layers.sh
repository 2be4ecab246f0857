#!/usr/bin/env bash
# README's layout rule: each part includes and calls only itself and the
# parts below it (scripts/check_layers.py, over the sources and the
# sanitizer build's objects), and the check finds a breach; the sources
# are formatted as .clang-format says (make format).
source "$(dirname "$0")/lib.sh"
CHECK=$ROOT/scripts/check_layers.py

python3 "$CHECK" "$B"

# a lower part including a higher one's header, and the CLI the library's
mkdir -p tree/interpose tree/report/cli tree/fastpath
printf '#include "report/fold.h"\n' >tree/interpose/bad.c
printf '#include "interpose/config.h"\n#include "interpose/hist.h"\n' >tree/report/cli/bad.c
printf '#include "interpose/tstate.h"\n' >tree/fastpath/good.c
out=$(python3 "$CHECK" --root tree --includes-only 2>&1)
rc=$?
expect "a breach fails the check" "$rc" 1
expect "the breaches named" "$(grep -c '^FAIL' <<<"$out")" 2
case "$out" in *"interpose/bad.c (interpose) includes report/fold.h (report)"*) ok "upward include named" ;;
    *) fail "upward include named" "$out" ;; esac
case "$out" in *"report/cli/bad.c (cli) includes interpose/config.h"*) ok "CLI include named" ;;
    *) fail "CLI include named" "$out" ;; esac

if command -v clang-format >/dev/null; then
    files=$(cd "$ROOT" && git ls-files '*.c' '*.h' 2>/dev/null)
    if [ -n "$files" ]; then
        bad=$(cd "$ROOT" && for f in $files; do clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || echo "$f"; done)
        expect "sources formatted (make format)" "$bad" ""
    fi
else
    fail "sources formatted" "clang-format not installed (scripts/install-deps.sh installs it)"
fi
