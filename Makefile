# SPDX-License-Identifier: MIT
#
# blitz: a Kbuild-style build in plain GNU make.
#
# Each directory lists its objects in a `Kbuild` file (obj-y, obj-$(CONFIG_X),
# prog-y for programs, test-y for test programs).  The configuration comes
# from .config (`make defconfig`), or from configs/defconfig when there is no
# .config; it is turned into $(O)/include/generated/autoconf.h.
#
# `make help` lists every target and variable.

VERSION      := 0
PATCHLEVEL   := 1
SUBLEVEL     := 0
KERNELVERSION = $(VERSION).$(PATCHLEVEL).$(SUBLEVEL)

MAKEFLAGS += --no-builtin-rules --no-builtin-variables
.SUFFIXES:
.DEFAULT_GOAL := all

srctree := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))

# ---------------------------------------------------------------------------
# User variables
O        ?= build
V        ?= 0
W        ?= 0
SANITIZE ?=
PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
SOAK_TIME ?= 600
ifeq ($(origin CC),default)
CC       := cc
endif
AR       := ar
OBJCOPY  := objcopy
CLANG    ?= clang
BPFTOOL  ?= bpftool
DTRACE   ?= dtrace

objtree := $(abspath $(O))

ifeq ($(V),1)
Q :=
else
Q := @
endif
# $(call msg,TAG,what): the quiet one-line description of a step.
msg = $(if $(Q),@printf '  %-7s %s\n' '$(1)' '$(2)';)

# ---------------------------------------------------------------------------
# Configuration: KCONFIG_CONFIG=file if given, else .config, else configs/defconfig.
KCONFIG := $(firstword $(KCONFIG_CONFIG) $(wildcard $(srctree)/.config) $(srctree)/configs/defconfig)
ifeq ($(wildcard $(KCONFIG)),)
$(error KCONFIG_CONFIG=$(KCONFIG_CONFIG): no such file)
endif
include $(KCONFIG)

# ---------------------------------------------------------------------------
# Flags
CSTD      := -std=gnu11
WARNINGS  := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
             -Wmissing-prototypes -Wno-unused-parameter
ifeq ($(W),1)
WARNINGS  += -Wpointer-arith -Wcast-align -Wwrite-strings -Wundef \
             -Wformat=2 -Wconversion -Wno-sign-conversion -Wvla
endif
OPT       := $(if $(filter y,$(CONFIG_DEBUG)),-O1 -g3,-O2 -g)
SANFLAGS  := $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer)
# gcc warns that TSan does not model atomic_thread_fence; blitz's fences
# order atomic accesses only (the Dekker patterns in core/sched/idle.h, core/time/driver.c),
# which TSan sees through the atomics themselves.
SANFLAGS  += $(if $(filter thread,$(SANITIZE)),-Wno-tsan)
ifneq ($(filter-out thread address undefined,$(SANITIZE)),)
$(error SANITIZE=$(SANITIZE): accepted values are thread, address, undefined)
endif

BLITZ_CPPFLAGS := -I$(srctree)/include -I$(objtree)/include -D_GNU_SOURCE \
                  -include $(objtree)/include/generated/autoconf.h
BLITZ_CFLAGS   := $(CSTD) $(OPT) $(WARNINGS) -fPIC -pthread $(SANFLAGS) $(EXTRA_CFLAGS)
BLITZ_LDFLAGS  := -pthread $(SANFLAGS) $(EXTRA_LDFLAGS)
LIBS           := $(if $(filter y,$(CONFIG_BACKEND_IO_URING)),-luring)

# ---------------------------------------------------------------------------
# Kbuild: read every directory's Kbuild file.
#   obj-y     objects that go into libblitz
#   prog-y    programs for $(O)/bin/, with <prog>-objs
#   example-y example programs for $(O)/examples/, with <prog>-objs
#   test-y    test programs for $(O)/tests/, with <prog>-objs
# A Kbuild entry ending in '/' descends into that directory.
lib-objs  :=
progs     :=
examples  :=
tests     :=

define kbuild-dir
obj-y  :=
prog-y :=
example-y :=
test-y :=
include $(srctree)/$(1)/Kbuild
lib-objs += $$(addprefix $(1)/,$$(filter %.o,$$(obj-y)))
$$(foreach p,$$(prog-y),$$(eval $$(call kbuild-prog,$(1),$$(p),bin)))
$$(foreach p,$$(example-y),$$(eval $$(call kbuild-prog,$(1),$$(p),examples)))
$$(foreach p,$$(test-y),$$(eval $$(call kbuild-prog,$(1),$$(p),tests)))
$$(foreach d,$$(patsubst %/,%,$$(filter %/,$$(obj-y))),$$(eval $$(call kbuild-dir,$(if $(filter .,$(1)),,$(1)/)$$(d))))
endef

# $(call kbuild-prog,dir,name,bin|examples|tests); <prog>-libs: what it links
# besides the library.
kbuild-list = $(if $(filter bin,$(1)),progs,$(1))
define kbuild-prog
$(3)-$(2)-objs := $$(addprefix $(1)/,$$($(2)-objs))
$(3)-$(2)-libs := $$($(2)-libs)
$(call kbuild-list,$(3)) += $(2)
endef

obj-y :=
include $(srctree)/Kbuild
top-dirs := $(patsubst %/,%,$(filter %/,$(obj-y)))
$(foreach d,$(top-dirs),$(eval $(call kbuild-dir,$(d))))

lib-objs  := $(sort $(lib-objs))
LIB_A     := $(objtree)/lib/libblitz.a
LIB_A_OBJ := $(objtree)/lib/libblitz.o
LIB_INT_A := $(objtree)/lib/libblitz-internal.a
LIB_MAP   := $(srctree)/scripts/blitz.map
SONAME    := libblitz.so.$(VERSION)
LIB_SO_V  := $(objtree)/lib/libblitz.so.$(KERNELVERSION)
LIB_SO    := $(objtree)/lib/libblitz.so
BIN_PROGS := $(addprefix $(objtree)/bin/,$(progs))
EXAMPLE_PROGS := $(addprefix $(objtree)/examples/,$(examples))
TEST_PROGS:= $(addprefix $(objtree)/tests/,$(tests))
LIB_OBJS  := $(addprefix $(objtree)/,$(lib-objs))

# ---------------------------------------------------------------------------
# Generated headers
AUTOCONF   := $(objtree)/include/generated/autoconf.h
PROBES_H   := $(objtree)/include/generated/blitz_probes.h
FLAGS_FILE := $(objtree)/.buildflags
GENERATED  := $(AUTOCONF) $(PROBES_H)

# Objects rebuild when the flags change: the flags are kept in a file that is
# rewritten only when they differ.
flags-now := $(CC) $(BLITZ_CPPFLAGS) $(BLITZ_CFLAGS) $(BLITZ_LDFLAGS)
# (`make tools` alone builds no library object: it leaves the record alone.)
ifneq ($(MAKECMDGOALS),tools)
$(shell mkdir -p $(objtree) && \
  if [ "$$(cat $(FLAGS_FILE) 2>/dev/null)" != '$(flags-now)' ]; then \
    printf '%s' '$(flags-now)' > $(FLAGS_FILE); fi)
endif

# Likewise the libraries relink when the list of their objects changes.
OBJS_FILE := $(objtree)/.lib-objs
$(shell if [ "$$(cat $(OBJS_FILE) 2>/dev/null)" != '$(lib-objs)' ]; then \
    printf '%s' '$(lib-objs)' > $(OBJS_FILE); fi)

$(AUTOCONF): $(KCONFIG) $(srctree)/scripts/gen-autoconf
	$(call msg,GEN,include/generated/autoconf.h)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(srctree)/scripts/gen-autoconf $< > $@.tmp && mv $@.tmp $@

$(PROBES_H): $(srctree)/probes/blitz.d $(srctree)/scripts/gen-probes $(KCONFIG)
	$(call msg,GEN,include/generated/blitz_probes.h)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(srctree)/scripts/gen-probes $(if $(filter y,$(CONFIG_PROBES)),sdt,noop) \
		$< $@ $(objtree)/probes/blitz_semaphores.o

ifeq ($(CONFIG_PROBES),y)
PROBE_OBJ := $(objtree)/probes/blitz_semaphores.o
$(PROBE_OBJ): $(PROBES_H)
	@test -f $@
endif

# ---------------------------------------------------------------------------
# Compile rules
$(objtree)/%.o: $(srctree)/%.c $(FLAGS_FILE) | $(GENERATED)
	$(call msg,CC,$*.o)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(BLITZ_CPPFLAGS) $(BLITZ_CFLAGS) -MMD -MP -c -o $@ $<

-include $(shell find $(objtree) -name '*.d' 2>/dev/null)

# Only the public API (blitz_*, declared in include/) leaves the library:
# libblitz.so exports what scripts/blitz.map lists, and libblitz.a is one
# object, the library linked together (-r) with every other global made
# local, so that a static link brings in no internal name either.
# The USDT semaphores (blitz_*_semaphore, hidden) are made local too; the
# probe notes find them by address.  _.stapsdt.base stays global: sys/sdt.h
# defines it weak and hidden in a COMDAT group that every object with probes
# shares, and the final link keeps one.
# tests/scripts/symbols.sh checks both.  (The objects are not built with
# -fvisibility=hidden: the linker already calls the local symbols directly,
# and sched-bench's instruction counts under callgrind were the same with it.)
$(LIB_A_OBJ): $(LIB_OBJS) $(PROBE_OBJ) $(OBJS_FILE)
	$(call msg,LD,lib/libblitz.o)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -nostdlib -r -o $@.tmp $(filter %.o,$^)
	$(Q)$(OBJCOPY) --wildcard --keep-global-symbol='blitz_*' \
		--keep-global-symbol='_.stapsdt.base' \
		--localize-symbol='blitz_*_semaphore' $@.tmp $@ && rm -f $@.tmp

$(LIB_A): $(LIB_A_OBJ)
	$(call msg,AR,lib/libblitz.a)
	$(Q)rm -f $@ && $(AR) rcs $@ $<

# The unit tests call internal functions: they link the objects as compiled,
# from an archive that is not installed.
$(LIB_INT_A): $(LIB_OBJS) $(PROBE_OBJ) $(OBJS_FILE)
	$(call msg,AR,lib/libblitz-internal.a)
	$(Q)mkdir -p $(dir $@)
	$(Q)rm -f $@ && $(AR) rcs $@ $(filter %.o,$^)

$(LIB_SO_V): $(LIB_OBJS) $(PROBE_OBJ) $(OBJS_FILE) $(LIB_MAP)
	$(call msg,LD,lib/libblitz.so.$(KERNELVERSION))
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=$(LIB_MAP) \
		-o $@ $(filter %.o,$^) $(BLITZ_LDFLAGS) $(LIBS)

$(LIB_SO): $(LIB_SO_V)
	$(Q)ln -sf $(notdir $<) $(objtree)/lib/$(SONAME)
	$(Q)ln -sf $(notdir $<) $@

# Programs and examples link against the shared library (so that probes
# attached to libblitz.so see them), found through the rpath beside them: in
# the build tree $(O)/bin/../lib, once installed PREFIX/libexec/blitz/../../lib.
# Tests link libblitz-internal.a, which also gives them the internal symbols.
# $(call prog-rule,name,bin|examples)
define prog-rule
$(objtree)/$(2)/$(1): $$(addprefix $(objtree)/,$$($(2)-$(1)-objs)) $(LIB_SO)
	$$(call msg,LD,$(2)/$(1))
	$$(Q)mkdir -p $$(dir $$@)
	$$(Q)$$(CC) -o $$@ $$(filter %.o,$$^) -L$(objtree)/lib -lblitz \
		-Wl,-rpath,'$$$$ORIGIN/../lib:$$$$ORIGIN/../../lib' $$(BLITZ_LDFLAGS) $$(LIBS) -lm
endef
define test-rule
$(objtree)/tests/$(1): $$(addprefix $(objtree)/,$$(tests-$(1)-objs)) $(LIB_INT_A)
	$$(call msg,LD,tests/$(1))
	$$(Q)mkdir -p $$(dir $$@)
	$$(Q)$$(CC) -o $$@ $$(filter %.o,$$^) $(LIB_INT_A) $$(BLITZ_LDFLAGS) $$(LIBS) \
		$$(tests-$(1)-libs) $$(shell pkg-config --libs check 2>/dev/null || echo -lcheck) -lm
endef
$(foreach p,$(progs),$(eval $(call prog-rule,$(p),bin)))
$(foreach p,$(examples),$(eval $(call prog-rule,$(p),examples)))
$(foreach p,$(tests),$(eval $(call test-rule,$(p))))

# ---------------------------------------------------------------------------
# Fuzzing (tests/fuzz/, tests/README.md): `make fuzz` builds the library and
# every target of tests/fuzz/Kbuild with clang, libFuzzer, ASan and UBSan in
# $(FUZZ_O), then runs each for FUZZ_TIME seconds (scripts/fuzz-run); a
# crash or a failed property fails it.  fuzz-build is that build's target.
FUZZ_TIME ?= 60
FUZZ_O    ?= build-fuzz
FUZZ_CC   ?= clang
FUZZ_SAN  := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_BINS := $(addprefix $(objtree)/fuzz/,$(fuzz-targets))

# A target's objects are its test program's, but for replay.o: libFuzzer has the main().
define fuzz-rule
$(objtree)/fuzz/$(1): $$(addprefix $(objtree)/,$$(filter-out %/replay.o,$$(tests-fuzz-$(1)-objs))) $(LIB_INT_A)
	$$(call msg,LD,fuzz/$(1))
	$$(Q)mkdir -p $$(dir $$@)
	$$(Q)$$(CC) -fsanitize=fuzzer -o $$@ $$(filter %.o,$$^) $(LIB_INT_A) $$(BLITZ_LDFLAGS) $$(LIBS) \
		$$(tests-fuzz-$(1)-libs) -lm
endef
$(foreach t,$(fuzz-targets),$(eval $(call fuzz-rule,$(t))))

fuzz-build: $(FUZZ_BINS)

fuzz:
	$(Q)$(MAKE) --no-print-directory O=$(FUZZ_O) CC=$(FUZZ_CC) \
		EXTRA_CFLAGS='-fsanitize=fuzzer-no-link $(FUZZ_SAN)' \
		EXTRA_LDFLAGS='$(FUZZ_SAN)' fuzz-build
	$(Q)$(srctree)/scripts/fuzz-run $(abspath $(FUZZ_O)) $(FUZZ_TIME) $(fuzz-targets)

# ---------------------------------------------------------------------------
# Targets
PHONY := all lib progs examples tests check check-faults run tools tools-if-present \
         deps install uninstall clean distclean defconfig help bench paper fuzz \
         fuzz-build soak check-bare

all: lib progs examples tools-if-present

lib: $(LIB_A) $(LIB_SO)

progs: $(BIN_PROGS)

examples: $(EXAMPLE_PROGS)

tests: lib progs examples $(TEST_PROGS)

# deps: the Debian packages the build, the tests and the experiments need
# (scripts/install-deps: silent when all are there, names what it installs,
# and without root prints the one command to run).  `make run`, `check`,
# `paper`, `soak` and `fuzz` take it first, so that on a bare machine the
# two commands are the whole story; every generated header, and so every
# compile, waits for it.  Without root, or off Debian, it says what is
# missing and the build goes on: what needs a missing package then fails
# with its own message or skips, as before.  NO_DEPS=1 leaves it out.
NO_DEPS ?=
deps:
	$(Q)$(srctree)/scripts/install-deps || \
		{ { [ "$$(id -u)" -ne 0 ] || [ ! -x /usr/bin/apt-get ]; } && \
		  echo "make deps: going on without them (what needs them fails or skips)" >&2; }
ifeq ($(NO_DEPS),)
ifneq ($(filter run check paper soak fuzz,$(MAKECMDGOALS)),)
$(GENERATED): | deps
run check paper soak fuzz tools-if-present: | deps
endif
endif

defconfig:
	$(call msg,CONFIG,.config from configs/defconfig)
	$(Q)cp $(srctree)/configs/defconfig $(srctree)/.config

check: tests
	$(Q)BLITZ_SRCTREE=$(srctree) BLITZ_OBJTREE=$(objtree) BLITZ_SANITIZE=$(SANITIZE) \
		$(objtree)/tests/blitz-tests

# check-faults: the fault-injection suite (docs/faults.md) in a build of its
# own, FAULTS_O (default build-faults): this configuration with
# CONFIG_FAULT_INJECTION=y, under AddressSanitizer.  tests/faults/run runs
# every workload under every fault point.
FAULTS_O      ?= build-faults
faults-objtree = $(abspath $(FAULTS_O))
check-faults:
	$(Q)mkdir -p $(faults-objtree)
	$(Q){ grep -v 'CONFIG_FAULT_INJECTION' $(KCONFIG); echo CONFIG_FAULT_INJECTION=y; } \
		> $(faults-objtree)/faults.config.tmp
	$(Q)cmp -s $(faults-objtree)/faults.config.tmp $(faults-objtree)/faults.config || \
		mv $(faults-objtree)/faults.config.tmp $(faults-objtree)/faults.config
	$(Q)rm -f $(faults-objtree)/faults.config.tmp
	$(Q)$(MAKE) --no-print-directory O=$(faults-objtree) SANITIZE=address \
		KCONFIG_CONFIG=$(faults-objtree)/faults.config $(faults-objtree)/tests/fault-workloads
	$(Q)BLITZ_TEST_TIMEOUT_SCALE=$${BLITZ_TEST_TIMEOUT_SCALE:-5} \
		$(srctree)/tests/faults/run $(faults-objtree)/tests/fault-workloads

# check-bare: the two commands on a bare Debian 12 in a debootstrap'd
# chroot (tests/bare/run; root, about 15 minutes; not in check).
check-bare:
	$(Q)$(srctree)/tests/bare/run

run: all
	$(Q)$(srctree)/experiments/run-default $(objtree)

bench: progs
	$(Q)$(objtree)/bin/sched-bench

# The soak (experiments/soak): SOAK_TIME seconds of mixed load; not in CI.
soak: progs
	$(Q)SOAK_TIME=$(SOAK_TIME) $(srctree)/experiments/soak/run --build $(objtree)

# The paper, from results/ (or RESULTS=...), with this build for any
# experiment it has to run: papers/blitz/Makefile.
paper: all
	$(Q)$(MAKE) --no-print-directory -C $(srctree)/papers/blitz BUILD=$(objtree) \
		$(if $(RESULTS),RESULTS="$(foreach r,$(RESULTS),$(abspath $(r)))")

tools:
	$(Q)$(MAKE) --no-print-directory -C $(srctree)/tools O=$(objtree) V=$(V) \
		$(if $(filter y,$(CONFIG_BPF_TOOLS)),all,disabled)

# `make` builds the tools too where what they need is installed; otherwise
# tools/Makefile's if-present says in one line what is missing (`make
# tools` then fails on it).
tools-if-present:
ifeq ($(CONFIG_BPF_TOOLS),y)
	$(Q)$(MAKE) --no-print-directory -C $(srctree)/tools O=$(objtree) V=$(V) if-present
endif

# install: headers, both libraries, programs, pkg-config file.
INSTALL_LIB := $(DESTDIR)$(PREFIX)/lib
INSTALL_INC := $(DESTDIR)$(PREFIX)/include
INSTALL_BIN := $(DESTDIR)$(PREFIX)/bin
INSTALL_LIBEXEC := $(DESTDIR)$(PREFIX)/libexec/blitz
# The workloads are blitz's own programs, not commands a user's PATH wants:
# they go to PREFIX/libexec/blitz/ (their rpath finds ../../lib); the tools,
# already named blitz-*, to PREFIX/bin.
install: all
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(INSTALL_LIB)/pkgconfig $(INSTALL_INC)/blitz/trace $(INSTALL_BIN) $(INSTALL_LIBEXEC)
	$(Q)install -m 644 $(srctree)/include/blitz.h $(INSTALL_INC)/
	$(Q)install -m 644 $(srctree)/include/blitz/*.h $(INSTALL_INC)/blitz/
	$(Q)install -m 644 $(srctree)/include/blitz/trace/*.h $(INSTALL_INC)/blitz/trace/
	$(Q)install -m 644 $(LIB_A) $(INSTALL_LIB)/
	$(Q)install -m 755 $(LIB_SO_V) $(INSTALL_LIB)/
	$(Q)ln -sf libblitz.so.$(KERNELVERSION) $(INSTALL_LIB)/$(SONAME)
	$(Q)ln -sf libblitz.so.$(KERNELVERSION) $(INSTALL_LIB)/libblitz.so
	$(Q)for p in $(BIN_PROGS); do install -m 755 $$p $(INSTALL_LIBEXEC)/; done
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(KERNELVERSION)|' \
		-e 's|@LIBS@|$(LIBS)|' \
		$(srctree)/scripts/blitz.pc.in > $(INSTALL_LIB)/pkgconfig/blitz.pc
	$(Q)if [ -d $(objtree)/tools/bin ]; then install -m 755 $(objtree)/tools/bin/* $(INSTALL_BIN)/; fi

uninstall:
	$(Q)rm -rf $(INSTALL_INC)/blitz $(INSTALL_INC)/blitz.h $(INSTALL_LIB)/libblitz.* \
		$(INSTALL_LIB)/pkgconfig/blitz.pc $(INSTALL_LIBEXEC) \
		$(addprefix $(INSTALL_BIN)/blitz-,$(patsubst %.bpf.c,%,$(notdir $(wildcard $(srctree)/tools/*.bpf.c))))

clean:
	$(call msg,CLEAN,$(O))
	$(Q)rm -rf $(objtree)

distclean: clean
	$(Q)rm -f $(srctree)/.config

help:
	@echo 'blitz $(KERNELVERSION): work-stealing async I/O runtime with USDT probes'
	@echo ''
	@echo 'Targets:'
	@echo '  all        - libblitz.a, libblitz.so, the programs, examples/ and, where clang,'
	@echo '               bpftool and libbpf are installed, the tools (default)'
	@echo '  check      - install what is missing (deps), build and run every test'
	@echo '               (Check summary at the end)'
	@echo '  check-bare - make run and make check on a bare Debian 12 chroot (tests/bare/run)'
	@echo '  deps       - install the Debian packages that are missing (scripts/install-deps;'
	@echo '               run, check, paper, soak and fuzz take it first unless NO_DEPS=1)'
	@echo '  examples   - the example programs of examples/ ($(O)/examples/)'
	@echo '  check-faults - every workload under every fault point, ASan (FAULTS_O=build-faults; docs/faults.md)'
	@echo '  run        - install what is missing (deps), then run the default experiment'
	@echo '               (experiments/run-default)'
	@echo '  bench      - run build/bin/sched-bench with its defaults'
	@echo '  soak       - SOAK_TIME seconds of mixed load, checked for leaks (experiments/soak)'
	@echo '  paper      - papers/blitz/blitz.pdf from results/ (RESULTS=dir... to choose; papers/blitz/Makefile)'
	@echo '  tools      - build the libbpf tools (CONFIG_BPF_TOOLS)'
	@echo '  fuzz       - build the tests/fuzz targets with libFuzzer (FUZZ_O) and run each FUZZ_TIME s'
	@echo '  install    - headers, libraries, blitz.pc and tools; the workloads to libexec/blitz/'
	@echo '  uninstall  - remove what install put in PREFIX'
	@echo '  defconfig  - write .config from configs/defconfig'
	@echo '  clean      - remove the build directory ($(O))'
	@echo '  distclean  - clean, and remove .config'
	@echo '  help       - this text'
	@echo ''
	@echo 'Variables:'
	@echo '  O=dir              build directory (default: build)'
	@echo '  V=1                print full commands'
	@echo '  W=1                extra warnings'
	@echo '  SANITIZE=kind      thread, address or undefined'
	@echo '  PREFIX=/usr/local  install prefix'
	@echo '  DESTDIR=dir        staging root for install'
	@echo '  CC=cc              C compiler'
	@echo '  EXTRA_CFLAGS=...   added to every compile'
	@echo '  EXTRA_LDFLAGS=...  added to every link'
	@echo '  FUZZ_TIME=60       make fuzz: seconds per target'
	@echo '  FUZZ_O=build-fuzz  make fuzz: its build directory'
	@echo '  SOAK_TIME=600      seconds of load for make soak'
	@echo '  KCONFIG_CONFIG=f   configuration file (default: .config, else configs/defconfig)'
	@echo ''
	@echo 'Source tree (the map of every folder and source file: docs/design.md, "Layout"):'
	@echo '  include/ core/ backends/ probes/ tools/ examples/ experiments/ tests/'
	@echo '  papers/ scripts/ configs/ docs/'
	@echo ''
	@echo 'Configuration: $(KCONFIG)'

.PHONY: $(PHONY)
