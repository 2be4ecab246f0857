# shellcheck shell=bash
# Sourced by the GPU probes (ab_bisect.sh, gems_check.sh): the carried
# wheels (.whl) installed once under a site-packages path on PYTHONPATH,
# so that trlat counts their files as a library's; FlagGems' carried
# tuned configs (.fgcache) copied where FLAGGEMS_CACHE_DIR points, unless
# it is set already. Run from the repository root.
SITE=${TMPDIR:-/tmp}/trlat-gpu-site/site-packages
if ls .whl/*.whl >/dev/null 2>&1 && [ ! -d "$SITE" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target "$SITE" .whl/*.whl
fi
case ":${PYTHONPATH:-}:" in *":$SITE:"*) ;; *) export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH} ;; esac
if [ -d .fgcache ] && [ -z "${FLAGGEMS_CACHE_DIR:-}" ]; then
    export FLAGGEMS_CACHE_DIR=${TMPDIR:-/tmp}/trlat-gpu-fgcache
    mkdir -p "$FLAGGEMS_CACHE_DIR" && cp -r .fgcache/. "$FLAGGEMS_CACHE_DIR/"
fi
