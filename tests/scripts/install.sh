#!/usr/bin/env bash
# install.sh - `make install` with PREFIX and DESTDIR, then build and run a
# program against the installed tree using only `pkg-config --cflags --libs blitz`:
# a minimal one, and examples/hello.c built out of tree as the README says.
# The workloads land in libexec/blitz/ (nothing generic on PATH) and run
# from there; uninstall removes what install put.
set -euo pipefail
src=${BLITZ_SRCTREE:?} obj=${BLITZ_OBJTREE:?}
command -v pkg-config >/dev/null || { echo "pkg-config not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
prefix=/opt/blitz-test
# The same build the tests run on (a sanitizer build installs sanitized libraries).
san=${BLITZ_SANITIZE:-}
make -s -C "$src" O="$obj" SANITIZE="$san" install PREFIX=$prefix DESTDIR="$tmp/stage"
cc() { command cc ${san:+-fsanitize=$san} "$@"; }
root="$tmp/stage$prefix"
for f in include/blitz.h include/blitz/task.h include/blitz/trace/events.h \
	 include/blitz/trace/histograms.h lib/libblitz.a lib/libblitz.so \
	 lib/libblitz.so.0 lib/pkgconfig/blitz.pc libexec/blitz/sched-bench; do
	[ -e "$root/$f" ] || { echo "not installed: $f"; exit 1; }
done
readelf -d "$root/lib/libblitz.so" | grep -q 'SONAME.*libblitz.so.0' || { echo "no soname"; exit 1; }
for p in sched-bench sync-bench echo-bench; do
	[ ! -e "$root/bin/$p" ] || { echo "bin/$p installed: the workloads belong in libexec/blitz/"; exit 1; }
done
# An installed workload finds the installed library through its rpath alone.
env -u LD_LIBRARY_PATH "$root/libexec/blitz/sched-bench" --help > /dev/null ||
	{ echo "libexec/blitz/sched-bench does not run from the install"; exit 1; }
deps=$(ldd "$root/libexec/blitz/sched-bench")
grep -qF "$root/libexec/blitz/../../lib/libblitz.so" <<< "$deps" ||
	{ echo "$deps"; echo "sched-bench does not load the installed libblitz.so"; exit 1; }
cat > "$tmp/hello.c" <<'C'
#include <stdio.h>
#include <blitz.h>
struct st { int x; };
static enum blitz_poll p(void *a, struct blitz_cx *cx) { ((struct st *)a)->x = 42; return BLITZ_READY; }
static const struct blitz_task_vtable vt = BLITZ_TASK_VTABLE(p, NULL);
int main(void)
{
	struct blitz_runtime *rt = blitz_runtime_new(NULL);
	struct st s = { 0 };
	if (!rt || blitz_block_on(rt, &vt, &s, sizeof(s)) || s.x != 42)
		return 1;
	blitz_runtime_free(rt);
	puts("hello from blitz");
	return 0;
}
C
flags=$(PKG_CONFIG_SYSROOT_DIR="$tmp/stage" PKG_CONFIG_PATH="$root/lib/pkgconfig" \
	pkg-config --cflags --libs blitz)
echo "pkg-config: $flags"
cc -o "$tmp/hello" "$tmp/hello.c" $flags
LD_LIBRARY_PATH="$root/lib" "$tmp/hello" | grep -q "hello from blitz"
# And against the static archive, with the private libraries from --static.
pc() { PKG_CONFIG_SYSROOT_DIR="$tmp/stage" PKG_CONFIG_PATH="$root/lib/pkgconfig" pkg-config "$@"; }
cc -o "$tmp/hello-static" "$tmp/hello.c" $(pc --cflags blitz) "$root/lib/libblitz.a" \
	$(pc --static --libs-only-other --libs-only-l blitz | sed 's/-lblitz//')
env -u LD_LIBRARY_PATH "$tmp/hello-static" | grep -q "hello from blitz"
[ "$(pc --variable=libexecdir blitz)" = "$root/libexec/blitz" ] ||
	{ echo "blitz.pc: libexecdir is '$(pc --variable=libexecdir blitz)'"; exit 1; }
# The first example, built out of tree as examples/README.md says, with the
# library found through an rpath to pkg-config's libdir.
if [ -f "$src/examples/hello.c" ]; then
	cc -o "$tmp/ex-hello" "$src/examples/hello.c" $flags -Wl,-rpath,"$root/lib"
	env -u LD_LIBRARY_PATH "$tmp/ex-hello" > "$tmp/ex-hello.out" ||
		{ cat "$tmp/ex-hello.out"; echo "examples/hello.c built out of tree failed"; exit 1; }
	echo "examples/hello.c out of tree: $(head -n 1 "$tmp/ex-hello.out")"
fi
make -s -C "$src" O="$obj" SANITIZE="$san" uninstall PREFIX=$prefix DESTDIR="$tmp/stage"
left=$(cd "$root" && find . ! -type d | sort)
[ -z "$left" ] || { echo "uninstall left:"; echo "$left"; exit 1; }
echo ok
