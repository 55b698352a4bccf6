#!/usr/bin/env bash
# paper.sh - papers/blitz builds from a results set made in quick mode, and
# the PDF has what the text promises: enough pages, every generated plot
# embedded, every section heading, the appendix naming the results, no
# undefined reference, no line running off the page.
#
# The results set is the smallest that exercises every kind of generated
# output: the backends experiment (tables, macros, tools/plot histograms
# and an experiment's own plot script) and the modes experiment (the
# timelines tools/timeline draws), about a minute and a half in quick
# mode.  All five quick experiments took ten minutes here (make -C
# papers/blitz with no results runs them: 15 pages, 13 plots), too long
# for make check; the paper's other parts then say that their results are
# not in this set (MISSING=skip), and this test checks that they do.
set -euo pipefail
src=${BLITZ_SRCTREE:?} obj=${BLITZ_OBJTREE:?}
for t in pdflatex pdftotext pdfinfo pdfimages; do
	command -v $t > /dev/null || { echo "no $t (scripts/install-deps: texlive-latex-base, poppler-utils)"; exit 77; }
done
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || { echo "no matplotlib for /usr/bin/python3"; exit 77; }
# The experiment rebuilds the tree it is given; a sanitizer tree would be
# rebuilt without its flags.
[ -z "${BLITZ_SANITIZE:-}" ] || { echo "the paper's experiments run in the plain build, not under SANITIZE=$BLITZ_SANITIZE"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fail=1; }
paper=$src/papers/blitz

# The generated-macro check fails, naming the macro, when the text uses one
# the generator did not write.
printf 'resBudget\n' > "$tmp/macros.list"
printf '\\resBudget{} and \\resNoSuchNumber\n' > "$tmp/use.tex"
if "$paper/check-macros" "$tmp/macros.list" "$tmp/use.tex" 2> "$tmp/check.err"; then
	bad "check-macros passed a text using an undefined \\resNoSuchNumber"
else
	grep -q 'resNoSuchNumber' "$tmp/check.err" && ok "check-macros names the missing macro" ||
		bad "check-macros failed without naming the macro: $(cat "$tmp/check.err")"
fi
# ... and when a number is typed into a section's prose.
mkdir -p "$tmp/sections"
printf 'A ring of 256 slots.\n' > "$tmp/sections/typed.tex"
if "$paper/check-macros" "$tmp/macros.list" "$tmp/sections/typed.tex" 2> "$tmp/check.err"; then
	bad "check-macros passed a number typed into the text"
else
	grep -q 'typed.tex:1:' "$tmp/check.err" && ok "check-macros names a number typed into the text" ||
		bad "check-macros failed without naming the typed number: $(cat "$tmp/check.err")"
fi

stamp=$(date -u +%Y%m%dT%H%M%SZ)
"$src/experiments/backends/run" --quick --build "$obj" --out "$tmp/results/backends/$stamp" \
	> "$tmp/backends.log" 2>&1 || { echo "FAIL backends --quick:"; tail -20 "$tmp/backends.log"; exit 1; }
# The modes experiment adds the pictures drawn by tools/timeline (as root)
# and a plot of its own (about 15 s in quick mode).
"$src/experiments/modes/run" --quick --build "$obj" --out "$tmp/results/modes/$stamp" \
	> "$tmp/modes.log" 2>&1 || { echo "FAIL modes --quick:"; tail -20 "$tmp/modes.log"; exit 1; }

make -s -C "$paper" RESULTS="$tmp/results" RESULTS_ROOT="$tmp/empty" MISSING=skip \
	OUT="$tmp/paper" BUILD="$obj" > "$tmp/make.log" 2>&1 ||
	{ echo "FAIL make -C papers/blitz:"; tail -30 "$tmp/make.log"; exit 1; }
pdf=$tmp/paper/blitz.pdf
gen=$tmp/paper/generated
[ -s "$pdf" ] && ok "blitz.pdf built" || { bad "no $pdf"; exit 1; }
grep -q "backends: $tmp/results/backends/$stamp" "$tmp/make.log" &&
	ok "the build says which results it used" || bad "make's output does not name the results used"

pages=$(pdfinfo "$pdf" | awk '/^Pages:/ {print $2}')
[ "$pages" -ge 6 ] && ok "$pages pages (at least 6)" || bad "$pages pages, want at least 6"

# Every plot the generator made is embedded: one image per PNG (an alpha
# channel adds an smask row, not counted).
want=$(grep -c . "$gen/figures.list" || true)
have=$(pdfimages -list "$pdf" | awk 'NR > 2 && $3 == "image"' | wc -l)
# Without root the experiment collects no histograms (it says why): then
# its echo plot is the only one.
# modes adds its placement plot where it has two CPUs to place on (its
# timelines need both kinds of iteration, which a quick run may not have).
least=3
[ ! -e "$tmp/results/backends/$stamp/hist/NOT-COLLECTED" ] || least=1
[ ! -s "$tmp/results/modes/$stamp/raw/placement.jsonl" ] || least=$((least + 1))
[ "$want" -ge $least ] && ok "$want generated plots (at least $least)" || bad "only $want generated plots, want $least"
[ "$have" -eq "$want" ] && ok "$have images in the PDF, one per generated plot" ||
	bad "$have images in the PDF, $want generated plots"
while read -r f; do
	[ -s "$gen/$f" ] || bad "generated plot $f is missing or empty"
	grep -rqF "{$f}" "$gen"/*.tex || bad "generated plot $f is not included by any generated file"
done < "$gen/figures.list"

# Every section heading of the sources is in the text.
pdftotext "$pdf" - | tr -s ' \n' '  ' > "$tmp/text"
headings=0
while read -r h; do
	headings=$((headings + 1))
	grep -qF -- "$h" "$tmp/text" || bad "heading \"$h\" not found by pdftotext"
done < <(grep -ho '\\section\*\?{[^}]*}' "$paper/blitz.tex" "$paper"/sections/*.tex |
	sed -e 's/^\\section\*\?{//' -e 's/}$//' -e 's/\\_/_/g' -e 's/\\[a-z]*{}//g')
[ "$headings" -ge 10 ] && ok "$headings section headings, each found in the PDF's text" ||
	bad "only $headings section headings in the sources"
grep -qF "Placing the two threads by hand" "$tmp/text" && ok "the modes section has its results" ||
	bad "the modes section says its results are missing"
# The two-worker paragraph counts the runs that recorded their CPUs (3 in quick mode).
grep -qE "[0-9]+ of 3 runs were slow" "$tmp/text" && ok "the modes section counts yield_many's runs by CPUs had" ||
	bad "the modes section's two-worker paragraph has no run count: $(grep -o '[^ ]* of [^ ]* runs were' "$tmp/text")"
grep -qF "The results used" "$tmp/text" && grep -qF "$stamp" "$tmp/text" &&
	ok "the appendix cites the results directory" || bad "the appendix does not cite backends/$stamp"
grep -qF "global injection queue" "$tmp/text" && ok "the layout figure is there" ||
	bad "no layout figure text (global injection queue)"
n=$(grep -o 'not in this results set' "$tmp/text" | wc -l)
[ "$n" -ge 4 ] && ok "the $n parts without results say so" || bad "only $n parts say their results are missing"

log=$gen/latex/blitz.log
! grep -q 'There were undefined references' "$log" && ok "no undefined references" || bad "undefined references"
wide=$(awk '/^Overfull \\hbox \(/ { v = $3; sub(/^\(/, "", v); sub(/pt.*/, "", v); if (v + 0 > 10) n++ } END { print n + 0 }' "$log")
[ "$wide" -eq 0 ] && ok "no line more than 10pt too wide" || bad "$wide lines more than 10pt too wide (see the log)"
exit $fail
