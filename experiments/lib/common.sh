# experiments/lib/common.sh - what every experiment's run script shares.
#
#   . "$(dirname "$0")/../lib/common.sh"
#   exp_init NAME "$@"        # parses --quick, --out DIR, --build DIR; makes $OUT
#   step "what is running"    # a progress line: [12:03:04] (2/7) what is running
#   write_meta KEY=VALUE...   # $OUT/meta.json: kernel, CPU, commit, .config, tools, knobs
#
# Results go to results/NAME/<timestamp>/ (git-ignored) unless --out is given.

EXP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
QUICK=0
STEP=0
STEPS=${STEPS:-0}

exp_usage() {
	echo "usage: $0 [--quick] [--out DIR] [--build DIR]"
	echo "  --quick      tiny parameters (for tests): seconds, not minutes"
	echo "  --out DIR    write results to DIR (default results/$EXP_NAME/<timestamp>)"
	echo "  --build DIR  the build directory to use (default build)"
}

# header_help FILE ARG: if ARG asks for help (-h, --help), print FILE's
# leading comment (its usage) and exit 0; for the scripts that take their
# options from the environment and pass the rest on to a benchmark.
header_help() {
	case ${2:-} in
	-h|--help) sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$1"; exit 0 ;;
	esac
}

# exp_die MESSAGE: a bad command line, in one line, and exit 2.
exp_die() {
	echo "$0: $*" >&2
	exit 2
}

exp_init() {
	EXP_NAME=$1; shift
	OBJ=$EXP_ROOT/build
	OUT=
	while [ $# -gt 0 ]; do
		case $1 in
		--quick) QUICK=1 ;;
		--out|--build)
			[ $# -ge 2 ] && [ -n "$2" ] || exp_die "$1 needs a value (a directory)"
			if [ "$1" = --out ]; then
				OUT=$2
			else
				[ -d "$2" ] || exp_die "--build $2: no such directory"
				OBJ=$(cd "$2" && pwd)
			fi
			shift ;;
		-h|--help) exp_usage; exit 0 ;;
		-*) exp_die "unknown option '$1' (--help lists them)" ;;
		*) exp_die "unexpected argument '$1' (--help lists the options)" ;;
		esac
		shift
	done
	[ -n "$OUT" ] || OUT=$EXP_ROOT/results/$EXP_NAME/$(date -u +%Y%m%dT%H%M%SZ)
	mkdir -p "$OUT"
	OUT=$(cd "$OUT" && pwd)
}

step() {
	STEP=$((STEP + 1))
	if [ "$STEPS" -gt 0 ]; then
		printf '[%s] (%d/%d) %s\n' "$(date +%H:%M:%S)" "$STEP" "$STEPS" "$*" >&2
	else
		printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2
	fi
}

# version_of CMD ARGS...: the first line a tool prints of its version, or "missing".
version_of() {
	command -v "$1" >/dev/null 2>&1 || { echo missing; return; }
	"$@" 2>&1 | head -n 1
}

# peer_builds: {"tokio": {...}, "go": {...}, "libuv": {...}}, how each peer
# is built (experiments/peers/NAME/build --flags); a peer that cannot be
# built here is {"skipped": "<its reason>"}.
peer_builds() {
	local p flags sep= err
	err=$(mktemp)
	printf '{'
	for p in tokio go libuv; do
		if flags=$("$EXP_ROOT/experiments/peers/$p/build" --flags 2> "$err"); then
			printf '%s"%s": %s' "$sep" "$p" "$flags"
		else
			printf '%s"%s": {"skipped": %s}' "$sep" "$p" \
				"$(tail -n 1 "$err" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read().strip()))')"
		fi
		sep=', '
	done
	rm -f "$err"
	printf '}\n'
}

write_meta() {
	local config=$EXP_ROOT/.config
	[ -f "$config" ] || config=$EXP_ROOT/configs/defconfig
	local commit dirty
	commit=$(git -C "$EXP_ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
	dirty=$(git -C "$EXP_ROOT" status --porcelain 2>/dev/null | grep -qv '^??' && echo true || echo false)
	EXP_NAME="$EXP_NAME" CONFIG_FILE="$config" COMMIT="$commit" DIRTY="$dirty" QUICK="$QUICK" \
	GCC_V="$(version_of gcc --version)" CLANG_V="$(version_of clang --version)" \
	BPFTRACE_V="$(version_of bpftrace --version)" BPFTOOL_V="$(version_of bpftool version)" \
	CARGO_V="$(version_of "${HOME:-/root}/.cargo/bin/cargo" --version)" GO_V="$(version_of go version)" \
	PEER_BUILDS="$(peer_builds)" \
	python3 - "$OUT/meta.json" "$@" <<'PY'
import json, os, platform, sys
out, extra = sys.argv[1], sys.argv[2:]
cpu = "unknown"
try:
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
except OSError:
    pass
meta = {
    "experiment": os.environ["EXP_NAME"],
    "kernel": platform.release(),
    "machine": platform.machine(),
    "cpu_model": cpu,
    "cores": os.cpu_count(),
    "commit": os.environ["COMMIT"],
    "dirty": os.environ["DIRTY"] == "true",
    "quick": os.environ["QUICK"] == "1",
    "config": open(os.environ["CONFIG_FILE"]).read(),
    "knobs": {k: v for k, v in os.environ.items() if k.startswith("BLITZ_")},
    "tools": {
        "gcc": os.environ["GCC_V"], "clang": os.environ["CLANG_V"],
        "bpftrace": os.environ["BPFTRACE_V"], "bpftool": os.environ["BPFTOOL_V"],
        "cargo": os.environ["CARGO_V"], "go": os.environ["GO_V"],
    },
    "peer_builds": json.loads(os.environ["PEER_BUILDS"]),
}
for kv in extra:
    k, _, v = kv.partition("=")
    meta[k] = v
json.dump(meta, open(out, "w"), indent=2)
PY
}

# ---------------------------------------------------------------------------
# Histograms from the libbpf tools (sched-baseline, ablation, ...), and what
# collecting them cost.
#
#   hist_init TOOL...            builds the tools; sets WHY_NO_HIST to the
#                                reason they cannot be used (empty if they can)
#   tool_mode TOOL               "summary" where blitz-TOOL has --summary (the
#                                runtime's own histograms: the least perturbing
#                                mode), else "per-event"
#   traced_run TAG CMD...        one pair: CMD untraced and CMD with every tool
#                                attached, back to back; the first of the pair
#                                alternates from one pair of TAG to the next
#                                (and between tags).  Each call appends:
#                                $OUT/hist/TOOL-TAG.json (raw buckets), CMD's
#                                stdout in $OUT/raw/{traced,untraced}-TAG.jsonl
#                                (each line tagged with its "pair"), its stderr
#                                (--stats) in $OUT/raw/{traced,untraced}-TAG.stats,
#                                its CPU time (bash's `times` after "pair N")
#                                in $OUT/raw/{traced,untraced}-TAG.times
#   write_perturbation           adds "perturbation" to $OUT/meta.json: per
#                                tag, traced / untraced time (results.py)
#   plot_tools TITLE TAG...      one plot per tool, one series per TAG, each
#                                labelled with its slowdown:
#                                $OUT/plots/TOOL.{png,svg}; appends to PLOTS
PY=/usr/bin/python3
HIST_TOOLS=()
WHY_NO_HIST=""
PLOTS=()

hist_init() {
	HIST_TOOLS=("$@")
	mkdir -p "$OUT/raw" "$OUT/hist" "$OUT/plots"
	if [ "$(id -u)" -ne 0 ]; then
		WHY_NO_HIST="not root: loading BPF programs needs root (CAP_BPF, CAP_PERFMON)"
	elif ! make -s -C "$EXP_ROOT" O="$OBJ" tools > "$OUT/tools-build.log" 2>&1; then
		WHY_NO_HIST="the tools did not build (see $OUT/tools-build.log)"
	elif [ ! -x "$PY" ] || ! "$PY" -c 'import matplotlib' 2>/dev/null; then
		WHY_NO_HIST="no matplotlib for /usr/bin/python3 (apt-get install python3-matplotlib)"
	fi
	if [ -n "$WHY_NO_HIST" ]; then
		echo "$EXP_NAME: histograms not collected: $WHY_NO_HIST" | tee "$OUT/hist/NOT-COLLECTED" >&2
	fi
}

tool_mode() {
	if "$OBJ/tools/bin/blitz-$1" --help 2>&1 | grep -q -- '--summary'; then
		echo summary
	else
		echo per-event
	fi
}

# attach TAG: starts every tool of ATTACH_TOOLS (when set; else HIST_TOOLS)
# in its least perturbing mode, appending to $OUT/hist/TOOL-TAG.json; waits
# until each has attached.  TOOL_PIDS: their pids.
ATTACH_TOOLS=()
attach() {
	local tag=$1 t flag
	local -a list=("${HIST_TOOLS[@]}")
	[ ${#ATTACH_TOOLS[@]} = 0 ] || list=("${ATTACH_TOOLS[@]}")
	TOOL_PIDS=()
	[ -d /sys/kernel/tracing/events ] || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
	ulimit -l unlimited 2>/dev/null || true
	for t in "${list[@]}"; do
		flag=; [ "$(tool_mode "$t")" = summary ] && flag=--summary
		# Emptied here, before the tool starts: a previous pair's
		# "Hit Ctrl-C" must not pass for this one's.
		: > "$OUT/hist/$t-$tag.err"
		"$OBJ/tools/bin/blitz-$t" -b "$OBJ/lib/libblitz.so" -j $flag \
			>> "$OUT/hist/$t-$tag.json" 2> "$OUT/hist/$t-$tag.err" &
		TOOL_PIDS+=($!)
	done
	for t in "${list[@]}"; do
		for _ in $(seq 300); do
			grep -qs 'Hit Ctrl-C' "$OUT/hist/$t-$tag.err" && break
			sleep 0.1
		done
		grep -qs 'Hit Ctrl-C' "$OUT/hist/$t-$tag.err" ||
			echo "$EXP_NAME: blitz-$t did not attach: $(head -n 1 "$OUT/hist/$t-$tag.err")" >&2
	done
}

detach() {
	local p
	# The tools poll their exit flag every 0.2 s: one SIGINT is enough.
	for p in "${TOOL_PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; done
	for p in "${TOOL_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}

# pair_run KIND TAG PAIR CMD...: CMD once, KIND traced or untraced.
pair_run() {
	local kind=$1 tag=$2 pair=$3
	shift 3
	[ "$kind" = untraced ] || attach "$tag"
	# The group is a subshell of its own (a pipeline's element): its
	# children's CPU time, the second line of `times`, is CMD's alone.
	{ "$@" 2>> "$OUT/raw/$kind-$tag.stats" ||
		echo "$EXP_NAME: $kind run $tag failed: $(tail -n 1 "$OUT/raw/$kind-$tag.stats")" >&2
	  echo "pair $pair" >> "$OUT/raw/$kind-$tag.times"
	  times >> "$OUT/raw/$kind-$tag.times"; } |
		sed "s/^{/{\"pair\":$pair,/" >> "$OUT/raw/$kind-$tag.jsonl"
	[ "$kind" = untraced ] || detach
}

declare -A PAIRS_OF=()
traced_run() {
	local tag=$1 pair
	shift
	[ -n "${PAIRS_OF[$tag]:-}" ] || PAIRS_OF[$tag]=0
	PAIRS_OF[$tag]=$((PAIRS_OF[$tag] + 1))
	pair=${PAIRS_OF[$tag]}
	# Alternate within a tag, and start the tags alternately, so that
	# neither side of the pairs always runs first (on a warm or a cold machine).
	if [ $(((pair + ${#PAIRS_OF[@]}) % 2)) = 0 ]; then
		pair_run untraced "$tag" "$pair" "$@"
		pair_run traced "$tag" "$pair" "$@"
	else
		pair_run traced "$tag" "$pair" "$@"
		pair_run untraced "$tag" "$pair" "$@"
	fi
}

write_perturbation() {
	local modes=() t
	for t in "${HIST_TOOLS[@]}"; do modes+=("$t=$(tool_mode "$t")"); done
	PYTHONPATH="$EXP_ROOT/experiments/lib" python3 -c \
		'import sys, results; results.write_perturbation(sys.argv[1], sys.argv[2:])' "$OUT" "${modes[@]}"
}

# slowdown_label TAG: "TAG, traced 12.3x slower than untraced" (as meta.json says).
slowdown_label() {
	PYTHONPATH="$EXP_ROOT/experiments/lib" python3 -c \
		'import sys, results; print(results.slowdown_label(sys.argv[1], sys.argv[2]))' "$OUT" "$1"
}

plot_tools() {
	local title=$1 t tag files labels
	shift
	for t in "${HIST_TOOLS[@]}"; do
		files=() labels=()
		for tag in "$@"; do
			[ -s "$OUT/hist/$t-$tag.json" ] || continue
			files+=("$OUT/hist/$t-$tag.json")
			labels+=(--label "$(slowdown_label "$tag")")
		done
		[ ${#files[@]} -gt 0 ] || continue
		if "$PY" "$EXP_ROOT/tools/plot" -o "$OUT/plots/$t" --title "$t ($(tool_mode "$t") mode): $title" \
			"${labels[@]}" "${files[@]}" 2> "$OUT/plots/$t.err"; then
			PLOTS+=("$OUT/plots/$t.png")
		else
			echo "$EXP_NAME: plot of $t failed: $(tail -n 1 "$OUT/plots/$t.err")" >&2
		fi
	done
}
