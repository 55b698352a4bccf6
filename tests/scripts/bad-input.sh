#!/usr/bin/env bash
# bad-input.sh - every public function has a bad-input test: its name is
# called in tests/unit/test_bad_input*.c (include/blitz.h, "Bad input":
# NULL, zero and out-of-range arguments, each with its documented
# answer), or it is below, in the exceptions, with the reason.  An
# exception that is no longer needed (the function is gone, or now
# called there) fails too, so the list stays true.
set -euo pipefail
. "$(dirname "$0")/api-lib.bash"
src=${BLITZ_SRCTREE:?}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# NAME: reason.  Functions whose every argument is the object they act
# on (a primitive, its waiter node, the poll context): there is no value
# to pass out of range, and those pointers are not checked (the
# convention's last rule); the two the runtime alone calls; and the one
# BLITZ_CO_END alone calls.
exceptions='
blitz_task_schedule: the vtable'"'"'s; only the runtime calls it, with its own task (explicit_schedule_functions runs a vtable naming it)
blitz_task_reschedule: likewise
blitz_mutex_lock_poll: only the mutex, its waiter and cx
blitz_rwlock_read_poll: only the lock, its waiter and cx
blitz_rwlock_write_poll: only the lock, its waiter and cx
blitz_notify_notified_poll: only the Notify, its waiter and cx
blitz_signals_recv_poll: only the stream, the receive and cx
blitz_xfer_cancel_poll: only the transfer and cx
blitz_serve_stats: only the loop'"'"'s handle and the output
blitz_co_bad_resume: only BLITZ_CO_END calls it, and it aborts by design (tests/scripts/task-macros.sh runs it)
'

api_functions "$src" "$tmp/api"
files=("$src"/tests/unit/test_bad_input*.c)
[ -f "${files[0]}" ] || { echo "no tests/unit/test_bad_input*.c"; exit 1; }
# A name counts where it is called: NAME( outside a comment line.
grep -vh '^\s*\(/\?\*\|//\)' "${files[@]}" | grep -o 'blitz_[a-z0-9_]*(' | tr -d '(' |
	sort -u > "$tmp/called"
sed -n 's/^\(blitz_[a-z0-9_]*\): .*/\1/p' <<< "$exceptions" | sort > "$tmp/except"

fail=0
comm -23 "$tmp/api" "$tmp/called" | comm -23 - "$tmp/except" > "$tmp/untested"
if [ -s "$tmp/untested" ]; then
	echo "FAIL $(wc -l < "$tmp/untested") public functions have no bad-input test" \
	     "(call each in tests/unit/test_bad_input*.c, or add it to this script's exceptions with the reason):"
	sed 's/^/  /' "$tmp/untested"
	fail=1
fi
comm -12 "$tmp/except" "$tmp/called" > "$tmp/stale"
comm -23 "$tmp/except" "$tmp/api" >> "$tmp/stale"
if [ -s "$tmp/stale" ]; then
	echo "FAIL exceptions that are tested or no longer public (drop them):"
	sed 's/^/  /' "$tmp/stale"
	fail=1
fi
[ $fail -eq 1 ] || echo "ok   each of the $(wc -l < "$tmp/api") public functions is called in" \
	"tests/unit/test_bad_input*.c or excepted with a reason ($(wc -l < "$tmp/except") exceptions)"
exit $fail
