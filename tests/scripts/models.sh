#!/usr/bin/env bash
# models.sh - the spin models of the ring, the idle protocol and the I/O watch
# (tests/model/run: every check exhaustive, bug variants must fail).
# They do not depend on the build: run them in the plain pass only, not
# again under each sanitizer.  Skips (77) without spin or gcc.
set -u

src=${BLITZ_SRCTREE:-$(cd "$(dirname "$0")/../.." && pwd)}

if [ -n "${BLITZ_SANITIZE:-}" ]; then
	echo "models: build-independent, checked in the plain run (BLITZ_SANITIZE=$BLITZ_SANITIZE)"
	exit 77
fi
if ! command -v spin >/dev/null 2>&1; then
	echo "models: spin not installed (scripts/install-deps)"
	exit 77
fi

"$src/tests/model/run" -j "$(nproc 2>/dev/null || echo 1)"
rc=$?
[ "$rc" = 77 ] && echo "models: tests/model/run skipped (spin or gcc missing)"
exit "$rc"
