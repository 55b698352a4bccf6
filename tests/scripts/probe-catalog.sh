#!/usr/bin/env bash
# probe-catalog.sh - docs/probes.md, probes/blitz.d and the stapsdt notes in
# libblitz.so name the same probes, with the same arguments; docs/probes.md's
# "Argument codes" lists the codes of probes/blitz_probe_codes.h, which is
# the only place that defines them, and no bpftrace twin compares a code
# argument to a bare number.
set -euo pipefail
src=${BLITZ_SRCTREE:?} obj=${BLITZ_OBJTREE:?}
lib="$obj/lib/libblitz.so"
config=$( [ -f "$src/.config" ] && echo "$src/.config" || echo "$src/configs/defconfig")
grep -q '^CONFIG_PROBES=y' "$config" || { echo "CONFIG_PROBES is off in $config"; exit 77; }
command -v readelf >/dev/null || { echo "readelf not installed"; exit 77; }

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# probe name and argument names, from blitz.d: "steal thief victim count"
sed -n 's/^[[:space:]]*probe[[:space:]]*\([a-z0-9_]*\)(\(.*\));.*/\1 \2/p' "$src/probes/blitz.d" |
	while read -r name args; do
		printf '%s' "$name"
		echo "$args" | tr ',' '\n' | awk '{print $NF}' | tr -d '*' | tr '\n' ' ' | sed 's/^/ /'
		echo
	done | sed 's/ *$//' | sort > "$tmp/d"
cut -d' ' -f1 "$tmp/d" > "$tmp/d.names"
# catalog rows: | `name` | `arg` (..), `arg` (..) | when |
grep -E '^\| `[a-z0-9_]+` \|' "$src/docs/probes.md" | sort > "$tmp/doc.rows"
sed -E 's/^\| `([a-z0-9_]+)`.*/\1/' "$tmp/doc.rows" | sort > "$tmp/doc.names"
# probes in the library
readelf -n "$lib" > "$tmp/notes"
awk '/Provider: blitz/{getline; print $2}' "$tmp/notes" | sort -u > "$tmp/elf.names"

fail=0
if ! diff -u "$tmp/d.names" "$tmp/doc.names" > "$tmp/diff1"; then
	echo "probes/blitz.d and docs/probes.md disagree:"; cat "$tmp/diff1"; fail=1
fi
if ! diff -u "$tmp/d.names" "$tmp/elf.names" > "$tmp/diff2"; then
	echo "probes/blitz.d and the probes in $lib disagree:"; cat "$tmp/diff2"; fail=1
fi
# every argument of blitz.d is documented, in order
while read -r name args; do
	row=$(grep -E "^\| \`$name\` \|" "$tmp/doc.rows" | cut -d'|' -f3)
	documented=$(echo "$row" | grep -oE '`[a-z_]+`' | tr -d '`' | tr '\n' ' ' | sed 's/ *$//')
	if [ "$documented" != "$args" ]; then
		echo "$name: blitz.d has arguments '$args', docs/probes.md has '$documented'"; fail=1
	fi
	# and the library's note carries that many arguments
	n=$(echo "$args" | wc -w)
	got=$(awk -v p="$name" '/Provider: blitz/{getline; if ($2==p) {getline; getline; print NF-1; exit}}' "$tmp/notes")
	if [ "$got" != "$n" ]; then
		echo "$name: $n arguments in blitz.d, $got in $lib"; fail=1
	fi
done < "$tmp/d"
# The argument codes: "enum value name" from the header, a name being the
# enumerator without the prefix all of its enum's enumerators share.
codes_h="$src/probes/blitz_probe_codes.h"
awk '
	/^enum probe_[a-z_]+ \{/ { e = $2; n = 0; next }
	e && /^[[:space:]]*[A-Z][A-Z0-9_]* = -?[0-9]+,/ {
		name[n] = $1; val[n] = $3; sub(",", "", val[n]); n++; next }
	e && /^};/ {
		pre = name[0]
		for (i = 1; i < n; i++)
			while (index(name[i], pre) != 1)
				pre = substr(pre, 1, length(pre) - 1)
		sub("[^_]*$", "", pre)
		for (i = 0; i < n; i++)
			print e, val[i], tolower(substr(name[i], length(pre) + 1))
		e = ""
	}' "$codes_h" | sort > "$tmp/codes.h"
# ...and from the docs: | `enum probe_X` | probe.arg, ... | 0 `name` ..., 1 `name` ... |
grep -E '^\| `enum probe_[a-z_]+` \|' "$src/docs/probes.md" > "$tmp/codes.rows" || true
while IFS='|' read -r _ e _ codes _; do
	e=$(echo "$e" | sed -E 's/.*`enum (probe_[a-z_]+)`.*/\1/')
	echo "$codes" | grep -oE '(^|[ ,])-?[0-9]+ `[a-z_]+`' | tr -d '`,' |
		awk -v e="$e" '{ print e, $1, $2 }'
done < "$tmp/codes.rows" | sort > "$tmp/codes.doc"
if [ ! -s "$tmp/codes.h" ]; then
	echo "no enum probe_* read from $codes_h"; fail=1
elif ! diff -u "$tmp/codes.h" "$tmp/codes.doc" > "$tmp/diff3"; then
	echo "probes/blitz_probe_codes.h (-) and docs/probes.md's argument codes (+) disagree:"
	cat "$tmp/diff3"; fail=1
fi
# Defined in the header only: no #define or enumerator of the same name elsewhere.
names=$(awk '/^[[:space:]]*[A-Z][A-Z0-9_]* = -?[0-9]+,/ { print $1 }' "$codes_h" | paste -sd'|')
if grep -rnE "(#define[[:space:]]+($names)\b|^[[:space:]]*($names)[[:space:]]*=[^=])" \
	"$src/core" "$src/backends" "$src/tools" "$src/tests/unit" "$src/include" "$src/experiments" \
	--include='*.[ch]' --include='*.bt' > "$tmp/redefined"; then
	echo "argument codes of probes/blitz_probe_codes.h defined again:"; cat "$tmp/redefined"; fail=1
fi
# The twins compare code arguments by name: for each probe.arg the docs give
# a code enum, its argN is not compared to a number in that probe's block.
for row in $(cut -d'|' -f3 "$tmp/codes.rows" | grep -oE '(^|[ ,])[a-z0-9_]+\.[a-z_]+' | tr -d ' ,' | sort -u); do
	probe=${row%.*} arg=${row#*.}
	idx=$(awk -v p="$probe" -v a="$arg" '$1 == p { for (i = 2; i <= NF; i++) if ($i == a) print i - 2 }' "$tmp/d")
	[ -n "$idx" ] || { echo "docs/probes.md: argument codes of $row, which blitz.d does not have"; fail=1; continue; }
	for bt in "$src"/tools/bpftrace/*.bt; do
		awk -v p="$probe" -v i="$idx" -v f="${bt#"$src"/}" -v r="$row" '
			/^usdt:/ { inside = ($0 ~ ("blitz:" p "([ ,{]|$)")) }
			/^(BEGIN|END|interval|kprobe|uprobe|tracepoint)/ { inside = 0 }
			inside && ($0 ~ ("arg" i "[[:space:]]*[!=<>]=?[[:space:]]*-?[0-9]") ||
				   $0 ~ ("-?[0-9]+[[:space:]]*[!=<>]=?[[:space:]]*arg" i "([^0-9]|$)")) {
				printf "%s:%d: %s compared to a number: use its name in probes/blitz_probe_codes.h\n", f, NR, r
				bad = 1 }
			END { exit bad }' "$bt" || fail=1
	done
done
# every probe site is a 5-byte nop (an attached uprobe on it can be optimized)
sites=0
while read -r loc; do
	sites=$((sites + 1))
	insn=$(objdump -d --start-address="$loc" --stop-address=$((loc + 5)) "$lib" |
	       grep -E '^ +[0-9a-f]+:' | head -n 1)
	case "$insn" in
	*"0f 1f 44 00 00"*) ;;
	*) echo "probe site $loc is not a 5-byte nop: $insn"; fail=1 ;;
	esac
done < <(awk '/Location:/{sub(",", "", $2); print $2}' "$tmp/notes")
[ "$sites" -gt 0 ] || { echo "no probe sites in $lib"; fail=1; }
[ $fail -eq 0 ] && echo "probe catalog: $(wc -l < "$tmp/d.names") probes agree; $(wc -l < "$tmp/codes.h") argument codes agree; $sites sites, all 5-byte nops"
exit $fail
