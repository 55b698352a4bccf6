# bench-lib.bash - sourced by the tests of the benches that run named
# benchmarks (sync-bench.sh, blocking-bench.sh; bench_parse_args in
# experiments/workloads/bench_util.c); not a test itself: the harness runs
# *.sh only.
#
# check_bench_names BIN A B   an unknown --bench is refused (exit 2), and
#                             --bench A,B prints exactly two lines; exits 1
#                             on a failure

check_bench_names() {
	local bin=$1 a=$2 b=$3 n rc=0

	"$bin" --bench no_such_bench > /dev/null 2>&1 || rc=$?
	[ $rc -eq 2 ] || { echo "FAIL --bench no_such_bench: exit $rc"; exit 1; }
	echo "ok   unknown benchmark refused"
	n=$("$bin" --iters 1 --warmup 0 --ops 10 --bench "$a,$b" | wc -l)
	[ "$n" -eq 2 ] || { echo "FAIL --bench $a,$b printed $n lines"; exit 1; }
	echo "ok   --bench A,B"
}
