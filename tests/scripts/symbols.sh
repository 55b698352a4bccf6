#!/usr/bin/env bash
# symbols.sh - the libraries export the public API and nothing else.
#
# The public API is every function and object declared extern in
# include/blitz.h and include/blitz/*.h (static inline functions and macros
# are not symbols).  libblitz.so must export exactly that set (its dynamic
# symbols), and libblitz.a must define exactly that set as globals; then a
# program that defines one of blitz's internal names (queue_push,
# current_worker, ...) links and runs against either library.
set -euo pipefail
. "$(dirname "$0")/api-lib.bash"
src=${BLITZ_SRCTREE:?} obj=${BLITZ_OBJTREE:?}
so="$obj/lib/libblitz.so" a="$obj/lib/libblitz.a" internal="$obj/lib/libblitz-internal.a"
command -v nm >/dev/null || { echo "nm not installed"; exit 77; }
for f in "$so" "$a" "$internal"; do
	[ -f "$f" ] || { echo "not built: $f"; exit 1; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Symbols the toolchain adds, each with its reason.
#  - the version node of scripts/blitz.map: nm -D lists it as an absolute
#    symbol of the shared library.
#  - _.stapsdt.base: sys/sdt.h defines it weak and hidden in a COMDAT group
#    shared by every object with USDT probes; the static archive keeps it
#    global so that the final link keeps one copy (hidden: never exported).
node=$(sed -n 's/^\([A-Z][A-Z0-9_.]*\)[[:space:]]*{.*/\1/p' "$src/scripts/blitz.map")
[ -n "$node" ] || { echo "no version node in scripts/blitz.map"; exit 1; }
so_extra="$node"
a_extra="_.stapsdt.base"

# The API: its functions and objects (api-lib.bash).
api_functions "$src" "$tmp/api.fn"
api_objects "$src" "$tmp/api.obj"
sort -u "$tmp/api.fn" "$tmp/api.obj" > "$tmp/api"
echo "include/ declares $(wc -l < "$tmp/api.fn") functions and $(wc -l < "$tmp/api.obj") objects"

# (nm -D names a versioned symbol NAME@@NODE.)
nm -D --defined-only "$so" | awk '{print $NF}' | sed 's/@.*//' | { grep -vxF "$so_extra" || true; } | sort -u > "$tmp/so"
nm -g --defined-only "$a" | awk 'NF == 3 {print $3}' | { grep -vxF "$a_extra" || true; } | sort -u > "$tmp/a"

fail=0
# $1: what, $2: file of names, $3: the library; every name must be blitz_*.
only_blitz() {
	if grep -v '^blitz_' "$2" > "$tmp/leak"; then
		echo "FAIL $3 $1 $(wc -l < "$tmp/leak") symbols that are not blitz_*:"
		sed -n '1,40s/^/  /p' "$tmp/leak"
		fail=1
	else
		echo "ok   every symbol $3 $1 is blitz_*"
	fi
}
# $1: file of names, $2: the library; the set must equal the API.
same_as_api() {
	comm -23 "$tmp/api" "$1" > "$tmp/missing"
	grep '^blitz_' "$1" | comm -13 "$tmp/api" - > "$tmp/extra" || true
	if [ -s "$tmp/missing" ]; then
		echo "FAIL $2 lacks $(wc -l < "$tmp/missing") symbols declared in include/:"
		sed -n '1,40s/^/  /p' "$tmp/missing"
		fail=1
	fi
	if [ -s "$tmp/extra" ]; then
		echo "FAIL $2 has $(wc -l < "$tmp/extra") blitz_* symbols that include/ does not declare:"
		sed -n '1,40s/^/  /p' "$tmp/extra"
		fail=1
	fi
	[ -s "$tmp/missing" ] || [ -s "$tmp/extra" ] ||
		echo "ok   $2 has every symbol include/ declares, and no other blitz_*"
}
only_blitz exports "$tmp/so" libblitz.so
same_as_api "$tmp/so" libblitz.so
only_blitz defines "$tmp/a" libblitz.a
same_as_api "$tmp/a" libblitz.a

# A program that defines every internal global of the library (from the
# archive the unit tests link) as a function that aborts: it must link
# against both libraries, and the runtime must not call any of them.  (Only
# names a C program can define: ASan adds __odr_asan.NAME for each global.)
nm -g --defined-only "$internal" | awk 'NF == 3 {print $3}' | grep -v '^blitz_' |
	grep -vxF "$a_extra" | grep -x '[A-Za-z_][A-Za-z0-9_]*' | sort -u > "$tmp/internal"
[ -s "$tmp/internal" ] || { echo "no internal symbols in $internal"; exit 1; }
{
	echo '#include <stdlib.h>'
	echo '#include <blitz.h>'
	sed 's/.*/void &(void); void &(void) { abort(); }/' "$tmp/internal"
	cat <<'C'
static int ran;
static enum blitz_poll run(void *arg, struct blitz_cx *cx)
{
	ran = 1;
	return BLITZ_READY;
}
static const struct blitz_task_vtable vt = BLITZ_TASK_VTABLE(run, NULL);
int main(void)
{
	struct blitz_runtime *rt = blitz_runtime_new(NULL);

	if (!rt || blitz_block_on(rt, &vt, NULL, 0) || !ran)
		return 1;
	blitz_runtime_free(rt);
	return 0;
}
C
} > "$tmp/clash.c"
san=${BLITZ_SANITIZE:-}
libs=$(sed -n 's/^CONFIG_BACKEND_IO_URING=y/-luring/p' "$src/.config" 2>/dev/null ||
       sed -n 's/^CONFIG_BACKEND_IO_URING=y/-luring/p' "$src/configs/defconfig")
cc() { command cc ${san:+-fsanitize=$san} -I"$src/include" -pthread "$@"; }
n=$(wc -l < "$tmp/internal")
# $1: the library, then the link arguments that name it.
clash() {
	local lib=$1 rc=0
	shift
	if ! cc -o "$tmp/clash" "$tmp/clash.c" "$@" $libs > "$tmp/ld" 2>&1; then
		echo "FAIL a program defining the $n internal names does not link with $lib:"
		tail -n 5 "$tmp/ld"
		fail=1
		return
	fi
	LD_LIBRARY_PATH="$obj/lib" "$tmp/clash" > "$tmp/run" 2>&1 || rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL a program defining the $n internal names exits $rc with $lib" \
		     "(134: the library called one of its definitions, which abort)"
		tail -n 5 "$tmp/run"
		fail=1
	else
		echo "ok   a program defining the $n internal names links and runs with $lib"
	fi
}
clash libblitz.so -L"$obj/lib" -lblitz
clash libblitz.a "$a"
exit $fail
