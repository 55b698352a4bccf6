# echo-lib.bash - sourced by the tests of the echo programs (echo-bench.sh,
# echo-loadgen.sh); not a test itself: the harness runs *.sh only.
#
# After sourcing: $bench (echo-bench, or skip with 77 if it is not built,
# or if python3 is missing), $tmp (removed at exit), pids (killed at exit:
# add the servers started), fail (0; the test's exit status), and
# ok WHAT / bad WHAT (print a result line; bad sets fail=1).

bench="${BLITZ_OBJTREE:?}/bin/echo-bench"
[ -x "$bench" ] || { echo "no $bench (make progs)"; exit 77; }
command -v python3 > /dev/null || { echo "python3 not installed"; exit 77; }
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
