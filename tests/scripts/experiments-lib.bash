# experiments-lib.bash - what the experiments-*.sh scripts share: each runs
# one experiment in quick mode and checks what it wrote (meta.json, raw
# JSON, summary, plots, and for a traced experiment the slowdown it
# states).  One script per experiment, so that each stays well inside the
# scripts' timeout on a machine several times slower or busier than a
# quiet one (one script for all of them took 200 s quiet and more than
# 600 s beside a busy loop on each core and two other make checks).
src=${BLITZ_SRCTREE:?} obj=${BLITZ_OBJTREE:?}
# Experiments rebuild the tree they are given; a sanitizer tree would be
# rebuilt without its flags.  The plain build runs them.
[ -z "${BLITZ_SANITIZE:-}" ] || { echo "experiments run in the plain build, not under SANITIZE=$BLITZ_SANITIZE"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
need() { [ -s "$1" ] && echo "ok   $2" || { echo "FAIL $2: no $1"; fail=1; }; }
# perturbed DIR TAG...: meta.json has each TAG's slowdown (traced / untraced,
# above 0, per benchmark too, and in CPU time), and the summary and plots say it.
perturbed() {
	local dir=$1
	shift
	python3 - "$dir/meta.json" "$@" <<'PY' && echo "ok   $(basename "$dir"): slowdown of every traced run in meta.json" || fail=1
import json, sys
p = json.load(open(sys.argv[1]))["perturbation"]
assert p["modes"] and all(m in ("summary", "per-event") for m in p["modes"].values()), p["modes"]
for tag in sys.argv[2:]:
    r = p["runs"][tag]
    assert r["slowdown"] > 0 and r["pairs"] >= 1 and r["benches"], (tag, r)
    assert r["cpu_slowdown"] > 0 and len(r["cpu_pair_range"]) == 2, (tag, r)
    assert all(b["slowdown"] > 0 and b["untraced_ns"] > 0 for b in r["benches"].values()), (tag, r)
PY
	grep -q '^## What tracing cost' "$dir/summary.md" && grep -q '| traced / untraced |' "$dir/summary.md" &&
		echo "ok   $(basename "$dir"): summary states the slowdown" ||
		{ echo "FAIL $(basename "$dir"): summary does not state the slowdown"; fail=1; }
	grep -q 'traced [0-9.]*x slower than untraced' "$dir"/plots/*.svg &&
		echo "ok   $(basename "$dir"): plots state the slowdown" ||
		{ echo "FAIL $(basename "$dir"): no slowdown in the plots"; fail=1; }
}

# run_quick NAME DIR: experiments/NAME in quick mode into $tmp/DIR (its
# output in $tmp/DIR.log, the tail of which a failure shows), and its
# meta.json there.
run_quick() {
	"$src/experiments/$1/run" --quick --build "$obj" --out "$tmp/$2" > "$tmp/$2.log" 2>&1 ||
		{ echo "FAIL $1:"; tail -20 "$tmp/$2.log"; exit 1; }
	need "$tmp/$2/meta.json" "$1 meta.json"
}

# The sched-bench benchmarks (sched-bench --list: the one list of them).
nb=$("$obj/bin/sched-bench" --list | wc -w)
