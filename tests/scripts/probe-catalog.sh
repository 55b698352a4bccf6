#!/usr/bin/env bash
# probe-catalog.sh - docs/probes.md, probes/blitz.d and the stapsdt notes in
# libblitz.so name the same probes, with the same arguments.
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
[ $fail -eq 0 ] && echo "probe catalog: $(wc -l < "$tmp/d.names") probes agree; $sites sites, all 5-byte nops"
exit $fail
