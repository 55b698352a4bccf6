# api-lib.bash - sourced by symbols.sh and bad-input.sh (not a test itself:
# the harness runs *.sh only).
#
# api_functions SRC OUT   the name of every function include/blitz.h and
#                         include/blitz/*.h declare, one a line, sorted, into
#                         OUT: gcc -aux-info lists each declaration; those
#                         made in include/ with a prototype ("NC") are the
#                         API (static inline functions and macros are not).
# api_objects SRC OUT     the objects they declare extern, likewise.

api_headers() {
	printf '%s\n' "$1/include/blitz.h" "$1"/include/blitz/*.h
}

api_functions() {
	local src=$1 out=$2 c
	command -v gcc > /dev/null || { echo "gcc not installed (its -aux-info lists the headers' declarations)"; exit 77; }
	c=$(mktemp -d)
	api_headers "$src" | sed 's/.*/#include "&"/' > "$c/api.c"
	gcc -std=gnu11 -D_GNU_SOURCE -I"$src/include" -fsyntax-only -aux-info "$c/aux" "$c/api.c"
	grep -F "/* $src/include/" "$c/aux" | grep ':NC \*/ extern ' |
		sed 's/ *(.*//; s/.*[ *]//' | sort -u > "$out"
	rm -rf "$c"
	[ "$(wc -l < "$out")" -gt 100 ] || { echo "found only $(wc -l < "$out") functions in include/"; exit 1; }
}

api_objects() {
	mapfile -t hs < <(api_headers "$1")
	grep -h '^extern [^(]*;' "${hs[@]}" | sed 's/[[;].*//; s/.*[ *]//' | sort -u > "$2"
}
