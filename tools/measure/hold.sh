# SPDX-License-Identifier: MIT
#
# tools/measure/hold.sh - sourced by tools/measure-instructions and
# tools/measure-modes: what a run needs to hold one probe's USDT semaphore
# without a tracer (hold_semaphore.c says how).
#
#   hold_env LIB PROBE DIR - builds DIR/hold.so and sets the array HOLD_ENV
#   to the environment that raises PROBE's semaphore in LIB at startup.
#   Fails with a message if PROBE has no semaphore in LIB.
#
# A run given HOLD_ENV prints "$HOLD_RAISED at ..." on stderr:
# a caller that discards stderr cannot tell a held run from an untraced one,
# so it should check for that line (hold_checked does).

hold_env() {
	local lib=$1 probe=$2 dir=$3 here sem rt
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	# (awk reads to the end: an early exit would kill readelf with SIGPIPE, and pipefail the script.)
	sem=$(readelf -n "$lib" | awk -v p="$probe" '$1 == "Name:" { n = $2 }
		n == p && /Semaphore:/ && !s { s = $NF } END { print s }')
	case ${sem:-0x0} in
	0x0 | 0x0000000000000000) echo "$probe: no such probe with a semaphore in $lib" >&2; return 1 ;;
	esac
	cc -O2 -shared -fPIC -o "$dir/hold.so" "$here/hold_semaphore.c" || return 1
	# A sanitizer build's runtime must come first among the preloaded objects.
	rt=$(ldd "$lib" 2> /dev/null | awk '$1 ~ /^lib[at]san/ { print $3 }')
	HOLD_ENV=(LD_PRELOAD="${rt:+$rt:}$dir/hold.so" BLITZ_HOLD_SEMAPHORE="$sem")
}

# What a run's stderr says once hold_semaphore.c has raised the semaphore.
HOLD_RAISED='hold_semaphore: raised'

# hold_checked ERRFILE WHAT - fail unless ERRFILE shows the semaphore raised.
hold_checked() {
	grep -q "^$HOLD_RAISED" "$1" && return 0
	echo "$2: the semaphore was not raised (see $1)" >&2
	return 1
}
