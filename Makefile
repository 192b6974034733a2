# rk1828: top-level build. `make help` lists the targets.
#
# Userspace binaries and the module land in build/ (build/rk1828.ko).
#
# The targets that install what they need (deps, demo, serve, check, bench,
# check-debug, deb) run tools/install-deps first and build in a second make
# that starts after it; no variable here is read from a package when make
# starts (pkg-config runs when a recipe first needs its flags), so a fresh
# machine gets through `make demo` and `make check` on the first try. A
# plain `make` on a machine without the packages stops at once, naming
# them (check-build-deps).

# The kernel the module is built for: the newest installed one whose
# headers have DRM accel, else the running kernel. `make module KVER=7.3`
# builds for a Debian kernel that is not installed (tools/prepare-kernel).
# (Read when first used, as the pkg-config flags are.)
KVER_DEFAULT = $(eval KVER_DEFAULT := $$(shell tools/prepare-kernel $(PREPARE_ARCH) --default))$(KVER_DEFAULT)
KVER ?= $(KVER_DEFAULT)
KDIR ?= /lib/modules/$(KVER)/build
MODEL ?= ../shared/models/stories260K.gguf
CARDS ?= 2
PROMPT ?= Once upon a time
B := build
# ARCH=arm64 on a host that is not arm64 cross-builds everything (the
# userspace, the tests, the module) with CROSS=aarch64-linux-gnu- into
# build/arm64/: Debian's gcc-aarch64-linux-gnu and the arm64 multiarch
# -dev packages (tools/install-deps --arm64); pkg-config then reads the
# arm64 .pc files only. CROSS=aarch64-linux-gnu- alone does the same. The
# module is built for Debian's arm64 kernel of the host's newest release
# (6.12.117+deb12-amd64 -> 6.12.117+deb12-arm64; tools/prepare-kernel
# --arch arm64 prepares it). Arch-neutral inputs (the unpacked kernel
# tools in build/linux-src) stay in build/.
HOST_ARCH := $(patsubst aarch64,arm64,$(shell uname -m))
ifneq ($(filter arm64 aarch64,$(ARCH)),)
override ARCH := arm64
ifneq ($(HOST_ARCH),arm64)
CROSS ?= aarch64-linux-gnu-
endif
endif
ifneq ($(CROSS),)
ifeq ($(filter aarch64-%,$(CROSS)),)
$(error CROSS=$(CROSS): only aarch64-linux-gnu- (ARCH=arm64) is supported)
endif
override ARCH := arm64
TRIPLET := $(patsubst %-,%,$(CROSS))
B := build/$(ARCH)
ifeq ($(origin CC),default)
CC := $(CROSS)gcc
endif
AR := $(CROSS)ar
export PKG_CONFIG_LIBDIR := /usr/lib/$(TRIPLET)/pkgconfig:/usr/share/pkgconfig
KMOD_CROSS := ARCH=$(ARCH) CROSS_COMPILE=$(CROSS)
PREPARE_ARCH := --arch $(ARCH)
endif
LINUX_SRC := build/linux-src
# One version for the module (DKMS), the library and the packages: the
# newest entry of debian/changelog.
VERSION := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
# V=1 prints every command; by default one line per file built.
ifeq ($(V),1)
Q :=
quiet = @:
else ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
Q := @
quiet = @:
else
Q := @
quiet = @printf '  %-7s %s\n'
endif

CC ?= gcc
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -pthread -MMD -MP \
	  -D_GNU_SOURCE -DRK1828_VERSION='"$(VERSION)"'

# Canned recipe: a static library of the objects among the prerequisites.
define archive
$(quiet) AR $@
@mkdir -p $(dir $@); rm -f $@; $(AR) rcs $@ $(filter %.o,$^)
endef

# $(eval $(call pkgconf,VAR,ARGS)): VAR is `pkg-config ARGS`, run when VAR
# is first used and kept from then on.
define pkgconf
$(1) = $$(eval $(1) := $$$$(shell pkg-config $(2) 2>/dev/null))$$($(1))
endef
$(eval $(call pkgconf,BASE_LIBS,--libs libpcre2-8 jansson))
$(eval $(call pkgconf,DRM_CFLAGS,--cflags libdrm))
$(eval $(call pkgconf,DRM_LIBS,--libs libdrm))
$(eval $(call pkgconf,NL_CFLAGS,--cflags libnl-genl-3.0))
$(eval $(call pkgconf,NL_LIBS,--libs libnl-genl-3.0))
$(eval $(call pkgconf,SERVER_CFLAGS,--cflags libmicrohttpd jansson))
$(eval $(call pkgconf,SERVER_LIBS,--libs libmicrohttpd jansson))
$(eval $(call pkgconf,USBREDIR_LIBS,--libs libusbredirparser-0.5))
LDLIBS += -lm -pthread $(BASE_LIBS)

# The pkg-config modules the build needs, with the Debian package of each
# (tools/install-deps installs them).
BUILD_PKGS := libdrm:libdrm-dev libnl-genl-3.0:libnl-genl-3-dev \
	libmicrohttpd:libmicrohttpd-dev jansson:libjansson-dev \
	libpcre2-8:libpcre2-dev libusbredirparser-0.5:libusbredirparser-dev

# Include paths per directory: each layer sees only the headers it may use
# (README.md "Layout" lists the arrows; tools/check-layering checks every
# #include against the same rules in `make check`).
INC_common    := -Iinclude -Iuserspace/common
INC_cardmodel := -Icardmodel
INC_lib        = -Iinclude -Iuapi -Iuserspace/lib $(DRM_CFLAGS)
# The runtime (userspace/llm: model, planner, prediction, pipeline, --cards).
INC_llm       := -Iinclude -Iuserspace/common -Iuserspace/lib -Iuserspace/llm -Icardmodel
# Chat templates, tool-call parsing, the JSON-schema matcher (userspace/chat).
INC_chat      := -Iinclude -Iuserspace/common -Iuserspace/chat
# The engine (userspace/engine): sessions, scheduler, text out, over the
# pipeline and the matcher.
INC_engine    := $(INC_llm) -Iuserspace/chat -Iuserspace/engine
INC_server     = $(INC_engine) -Iuserspace/server -Iuserspace/smi
# The CLI (userspace/cli: rk1828-llm's main, commands, bench) starts the
# server through its public header.
INC_cli        = $(INC_server) -Iuserspace/cli
INC_emu       := -Iinclude -Ikernel -Iemulator -Icardmodel
# rk1828-smi: the netlink uapi header and libnl-genl-3 (no librk1828).
INC_smi        = -Iinclude -Iuapi -Iuserspace/smi $(NL_CFLAGS)
# Host tests, tools and benchmarks exercise every userspace layer. (The
# selftests build with their own Makefile: uapi and include/rk1828 only.)
INC_tests      = -Itests/lib -Iinclude -Iuapi -Ikernel -Iuserspace/common \
		 -Iuserspace/lib -Iuserspace/llm -Iuserspace/chat -Iuserspace/engine -Iuserspace/cli \
		 -Iuserspace/server -Iuserspace/smi -Iemulator -Icardmodel \
		 $(DRM_CFLAGS) $(NL_CFLAGS)
# The user-facing tools of tools/*.c: the test library's model writer and
# profile fit (which predicts with the runtime's planner), over the runtime.
INC_tools     := -Itests/lib $(INC_llm)

$(B)/obj/userspace/common/%.o: INC = $(INC_common)
$(B)/obj/cardmodel/%.o: INC = $(INC_cardmodel)
$(B)/obj/userspace/lib/%.o: INC = $(INC_lib)
$(B)/obj/userspace/llm/%.o: INC = $(INC_llm)
$(B)/obj/userspace/chat/%.o: INC = $(INC_chat)
$(B)/obj/userspace/engine/%.o: INC = $(INC_engine)
$(B)/obj/userspace/cli/%.o: INC = $(INC_cli)
$(B)/obj/userspace/server/%.o: INC = $(INC_server)
$(B)/obj/emulator/%.o: INC = $(INC_emu)
$(B)/obj/userspace/smi/%.o: INC = $(INC_smi)
$(B)/obj/tests/%.o: INC = $(INC_tests)
$(B)/obj/tools/%.o: INC = $(INC_tools)

COMMON_SRC := $(wildcard userspace/common/*.c)
CARDMODEL_SRC := $(wildcard cardmodel/*.c)
LIB_SRC    := $(wildcard userspace/lib/*.c)
LLM_SRC    := $(wildcard userspace/llm/*.c)
CHAT_SRC   := $(wildcard userspace/chat/*.c)
ENGINE_SRC := $(wildcard userspace/engine/*.c)
CLI_SRC    := $(wildcard userspace/cli/*.c)
EMU_SRC    := $(wildcard emulator/*.c)
SMI_SRC    := $(filter-out userspace/smi/smi_main.c,$(wildcard userspace/smi/*.c))
SERVER_SRC := $(filter-out userspace/server/load.c,$(wildcard userspace/server/*.c))
FAKE_SRC   := $(wildcard tests/server/fake/*.c)
UNIT_SRC   := $(wildcard tests/unit/test_*.c)
TESTLIB_SRC := $(filter-out tests/lib/mock_rk.c,$(wildcard tests/lib/*.c))

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))

PROGS := $(B)/rk1828-llm $(B)/rk1828-emu $(B)/rk1828-smi
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))

.PHONY: all help deps deps-base check-build-deps lib install install-lib install-dev \
	install-tools install-server install-dkms install-paths deb check-packages check-fresh examples module userspace tests selftests selftests-install check \
	check-debug check-kernels check-arm64 demo serve bench checkpatch clean dkms-install dkms-uninstall udev-install \
	fit-profile synth-models
# Keep intermediate objects (no relink of every test on the next build).
.SECONDARY:
all: userspace module tests

help:
	@echo "make deps       install Debian packages, unpack kernel tools, build"
	@echo "                the QEMU with the PCIe card (tools/build-qemu)"
	@echo "make            build userspace, emulator, tests and the module"
	@echo "make demo       generate a story on $(CARDS) emulated cards"
	@echo "make serve      OpenAI-compatible server + web UI on $(CARDS) emulated cards"
	@echo "make check      run every test (host + guest)"
	@echo "make check-debug  the guest tests on a KASAN/lockdep/kmemleak kernel"
	@echo "make check-kernels  build on Debian's newer kernels, guest tests on the newest"
	@echo "make check-arm64  the arm64 guest (TCG): kselftests, the demo, the server"
	@echo "make ARCH=arm64   cross-build everything for arm64 into build/arm64/"
	@echo "make bench      benchmarks (ratios measured side by side)"
	@echo "make fit-profile  refit emulator/profiles/rk1828.conf on the vendor figures"
	@echo "make module     only rk1828.ko (KVER=... for another kernel)"
	@echo "make checkpatch checkpatch --strict on kernel/ and uapi/"
	@echo "make selftests-install KTREE=DIR  kselftests into a kernel tree"
	@echo "make install    programs, librk1828 (.so, header, rk1828.pc), unit, DKMS source"
	@echo "                (PREFIX=/usr/local, DESTDIR=)"
	@echo "make deb        Debian packages into $(B)/deb (debhelper, lintian)"
	@echo "make check-packages  the packages installed in a guest: DKMS, udev, run, serve, purge"
	@echo "make check-fresh  make demo and make check on a clean Debian 12 (../shared/tools/fresh-machine)"
	@echo "make dkms-install  install the module with DKMS and the udev rule (real machines)"
	@echo "make udev-install  only the udev rule: accel nodes in group rk1828, mode 0660"

# deps-base is what building and the demo need; deps adds what the test
# suite needs on top (its packages, the kernel's tools, tokenizer
# vocabularies, npm packages, our QEMU).
deps-base:
	@tools/install-deps --base

deps: deps-base
	@tools/install-deps
	@tools/unpack-kernel-tools $(LINUX_SRC)
	@if [ -x tools/fetch-vocab ]; then tools/fetch-vocab $(B)/vocab; fi
	@tools/npm-deps $(B)/node
	@tools/build-qemu >/dev/null

userspace: $(PROGS) lib

# The compiler and its flags as this run has them, kept in
# $(B)/flags.stamp (rewritten only when they change): every object depends
# on it, so `make CFLAGS=-O0` after a -O2 build recompiles everything
# rather than linking stale objects.
FLAGS_NOW := $(CC) | $(CPPFLAGS) | $(CFLAGS) | $(LDFLAGS) | $(LDLIBS)
ifneq ($(FLAGS_NOW),$(file <$(B)/flags.stamp))
$(shell mkdir -p $(B))
$(file >$(B)/flags.stamp,$(FLAGS_NOW))
endif
$(B)/flags.stamp:
	@:

$(B)/obj/%.o: %.c $(B)/flags.stamp | check-build-deps
	$(quiet) CC $<
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(INC) -c -o $@ $<

# Stop before the first compile when a build package is missing, naming
# the Debian packages to install (a fresh machine: `make deps` first).
check-build-deps:
	@missing=; command -v pkg-config >/dev/null || missing=pkg-config; \
	$(if $(CROSS),command -v $(CC) >/dev/null || missing="$$missing gcc-$(TRIPLET)";) \
	for p in $(BUILD_PKGS); do \
		pkg-config --exists $${p%%:*} 2>/dev/null || missing="$$missing $${p#*:}$(if $(CROSS),:$(ARCH))"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "make: missing build packages:$$missing"; \
		echo "make: run $(if $(CROSS),'tools/install-deps --$(ARCH)','make deps' (or tools/install-deps)) first"; exit 1; \
	fi

$(B)/libcommon.a: $(call obj,$(COMMON_SRC))
	$(archive)
# The card model (profile + cost function), shared by the emulator's
# timing mode and the planner's prediction; profile.o embeds the default
# profile (.incbin).
$(B)/libcardmodel.a: $(call obj,$(CARDMODEL_SRC))
	$(archive)
$(B)/obj/cardmodel/profile.o: emulator/profiles/rk1828.conf
$(B)/librk1828.a: $(call obj,$(LIB_SRC))
	$(archive)
# librk1828 for other runtimes: a shared library with the soname
# librk1828.so.1 that exports only the rk_* API (librk1828.map), installed
# with <rk1828/rk1828.h> and rk1828.pc. LIB_SOVERSION follows the ABI rule
# of userspace/doc/librk1828.rst; LIB_MINOR counts compatible additions.
LIB_SOVERSION := 1
LIB_MINOR := 1.0
LIB_SONAME := librk1828.so.$(LIB_SOVERSION)
LIB_SO := $(B)/$(LIB_SONAME).$(LIB_MINOR)
$(B)/obj-pic/userspace/lib/%.o: userspace/lib/%.c $(B)/flags.stamp | check-build-deps
	$(quiet) CC '$< (-fPIC)'
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC $(INC_lib) -c -o $@ $<
$(LIB_SO): $(patsubst %.c,$(B)/obj-pic/%.o,$(LIB_SRC)) userspace/lib/librk1828.map
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -shared -Wl,-soname,$(LIB_SONAME) \
		-Wl,--version-script=userspace/lib/librk1828.map -Wl,--no-undefined \
		-o $@ $(filter %.o,$^) $(DRM_LIBS)
	@ln -sf $(notdir $@) $(B)/$(LIB_SONAME); ln -sf $(LIB_SONAME) $(B)/librk1828.so
lib: $(LIB_SO)
# A staged install of the library ($(B)/stage, its own prefix) and the
# example outside the library's tree built against it through pkg-config
# only, as another runtime would (tests/abi/run checks the ABI, and
# tests/e2e/example-copy.sh runs the example on every card).
STAGE := $(B)/stage
$(STAGE)/.stamp: $(LIB_SO) userspace/lib/rk1828.h userspace/lib/rk1828.pc.in $(wildcard uapi/drm/*.h)
	@rm -rf $(STAGE)
	$(Q)+$(SUBMAKE) -s install-lib install-dev PREFIX=$(CURDIR)/$(STAGE) DESTDIR= \
		LIBDIR=$(CURDIR)/$(STAGE)/lib INSTALL="install -p" LDCONFIG=
	@touch $@
$(B)/examples/card-copy: examples/card-copy.c examples/Makefile $(STAGE)/.stamp
	$(quiet) CC '$@ (pkg-config rk1828)'
	@mkdir -p $(dir $@)
	$(Q)+PKG_CONFIG_PATH=$(CURDIR)/$(STAGE)/lib/pkgconfig $(MAKE) -s -C examples \
		O=$(CURDIR)/$(B)/examples CC="$(CC)" CFLAGS="-O2 -g -Wall -Wextra -Werror"
examples: $(B)/examples/card-copy
# The programs link librk1828 statically (the tests swap in the mock
# library, tests/lib/mock_rk.c); LINK_LIBRK1828=shared links the shared
# one, as the Debian packages do.
ifeq ($(LINK_LIBRK1828),shared)
LIBRK1828 := $(LIB_SO)
else
LIBRK1828 := $(B)/librk1828.a
endif
$(B)/libllm.a: $(call obj,$(LLM_SRC))
	$(archive)
$(B)/libchat.a: $(call obj,$(CHAT_SRC))
	$(archive)
$(B)/libengine.a: $(call obj,$(ENGINE_SRC))
	$(archive)
# The runtime's layers, in link order (each library before those it uses).
RUNTIME_LIBS := $(B)/libengine.a $(B)/libchat.a $(B)/libllm.a
$(B)/libemu.a: $(call obj,$(filter-out emulator/main.c,$(EMU_SRC)))
	$(archive)
# The HTTP server (userspace/server): libmicrohttpd + jansson; the web UI
# files are embedded by ui.c (.incbin), so ui.o depends on them.
$(B)/obj/userspace/server/%.o: CFLAGS += $(SERVER_CFLAGS)
$(B)/obj/tests/server/fake/%.o: CFLAGS += $(SERVER_CFLAGS)
$(B)/obj/userspace/server/ui.o: $(wildcard userspace/server/ui/*)
$(B)/libserver.a: $(call obj,$(SERVER_SRC))
	$(archive)
# The server over the scripted test engine: host tests of the HTTP layer.
# It takes from the runtime only what the server calls besides the
# engine: --cards (cardspec.c), --parallel, --ctx and --bucket
# (engine_opts.c), the drafters' names (spec.c), the chat templates and the
# JSON-schema compiler (libchat).
$(B)/tests/serve-fake: $(call obj,$(FAKE_SRC) userspace/llm/cardspec.c userspace/engine/engine_opts.c userspace/engine/spec.c) $(B)/libserver.a $(B)/libchat.a $(B)/libcommon.a $(B)/libsmi.a
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(SERVER_LIBS) $(NL_LIBS) $(LDLIBS)
# gcc 12's aarch64 vectorizer stops with an internal compiler error on
# the tests' max-error loops (a double fmax() reduction over float
# differences: vect_transform_reduction, Debian 12's gcc 12.2, in
# test_emu_quant_types and nnbench); test code needs no vectorizing.
$(B)/obj/tests/%.o: CFLAGS += $(if $(filter arm64,$(ARCH) $(HOST_ARCH)),-fno-tree-vectorize)
$(B)/libtest.a: $(call obj,$(TESTLIB_SRC)) Makefile
	$(archive)

# rk1828-llm: the CLI (userspace/cli: run, plan, info, bench...) and
# `serve` (userspace/server).
$(B)/obj/userspace/cli/%.o: CFLAGS += $(SERVER_CFLAGS)
LLM_SERVER := $(call obj,userspace/server/load.c) $(B)/libserver.a $(B)/libsmi.a
$(B)/rk1828-llm: $(call obj,$(CLI_SRC)) $(LLM_SERVER) $(RUNTIME_LIBS) $(LIBRK1828) $(B)/libcommon.a $(B)/libcardmodel.a
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(DRM_LIBS) $(SERVER_LIBS) $(NL_LIBS) $(LDLIBS)

# rk1828-smi: card table, events and reset over the generic netlink
# family (userspace/smi, libnl-genl-3 + jansson).
$(B)/libsmi.a: $(call obj,$(SMI_SRC))
	$(archive)
$(B)/rk1828-smi: $(call obj,userspace/smi/smi_main.c) $(B)/libsmi.a
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(NL_LIBS) $(LDLIBS)

$(B)/rk1828-emu: $(call obj,emulator/main.c) $(B)/libemu.a $(B)/libcardmodel.a
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(USBREDIR_LIBS) $(LDLIBS)

# Host unit tests: one binary per tests/unit/test_*.c, linked with every library.
# The mock librk1828 (tests/lib/mock_rk.c) comes first: a test that calls
# mock_rk_*() gets the mock's rk_* functions, the others the real ones.
$(B)/libmock.a: $(call obj,tests/lib/mock_rk.c)
	$(archive)
$(B)/tests/%: $(B)/obj/tests/unit/%.o $(B)/libmock.a $(B)/libtest.a $(RUNTIME_LIBS) $(B)/libemu.a $(B)/librk1828.a $(B)/libcommon.a $(B)/libcardmodel.a $(B)/libsmi.a
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(DRM_LIBS) $(USBREDIR_LIBS) $(NL_LIBS) $(LDLIBS)

# The server's request parsers and guards have their own unit tests, which need libserver
# (and the JSON-schema compiler of structured outputs).
$(filter $(B)/tests/test_api% $(B)/tests/test_http_guard,$(UNIT_BINS)): $(B)/tests/%: $(B)/obj/tests/unit/%.o $(B)/libtest.a $(B)/libserver.a \
		     $(B)/libchat.a $(B)/libcommon.a
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The agent check's and the route table's unit tests: libserver (the route table's
# handlers reach the engine, the agent's listener too) and the engine.
$(B)/tests/test_agent $(B)/tests/test_http_route: $(B)/tests/%: $(B)/obj/tests/unit/%.o $(B)/libtest.a $(B)/libserver.a $(B)/libsmi.a \
		       $(RUNTIME_LIBS) $(B)/libemu.a $(B)/librk1828.a $(B)/libcommon.a $(B)/libcardmodel.a
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(DRM_LIBS) $(USBREDIR_LIBS) $(SERVER_LIBS) $(NL_LIBS) $(LDLIBS)

# /metrics of speculative decoding: libserver's metrics.c over the real
# engine and the mock librk1828.
$(B)/tests/test_metrics_spec: $(B)/obj/tests/unit/test_metrics_spec.o $(B)/libmock.a $(B)/libtest.a \
			      $(B)/libserver.a $(B)/libsmi.a $(RUNTIME_LIBS) $(B)/libemu.a $(B)/librk1828.a \
			      $(B)/libcommon.a $(B)/libcardmodel.a
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(DRM_LIBS) $(USBREDIR_LIBS) $(SERVER_LIBS) $(NL_LIBS) $(LDLIBS)

# Guest (kselftest) tests: tests/selftests is a kselftest directory on
# lib.mk (tools/testing/selftests/drivers/accel/rk1828 in a kernel tree),
# built here with the kselftest files unpacked into $(LINUX_SRC) and our
# own uapi and program headers. It uses libdrm only (no librk1828).
KSFT_DIR := $(CURDIR)/$(LINUX_SRC)/tools/testing/selftests
SELFTEST_HDRS := $(CURDIR)/uapi/drm/rk1828_accel.h $(CURDIR)/uapi/drm/rk1828_netlink.h \
	$(wildcard $(CURDIR)/include/rk1828/*.h)
SELFTEST_MAKE = $(MAKE) -C tests/selftests KSFT_DIR=$(KSFT_DIR) $(if $(CROSS),CROSS_COMPILE=$(CROSS)) \
	OUTPUT=$(CURDIR)/$(B)/tests RK1828_HDRS="$(SELFTEST_HDRS)" \
	RK1828_INCLUDES="-I$(CURDIR)/uapi -I$(CURDIR)/include"
selftests: $(KSFT_DIR)/lib.mk
	@mkdir -p $(B)/tests
	+@$(SELFTEST_MAKE)

# Install the selftests into a kernel source tree KTREE (an unpacked
# linux-source, `tools/unpack-kernel-source DIR` makes one) the way they
# would live upstream: the tests in
# tools/testing/selftests/drivers/accel/rk1828/ with the segment-program
# headers next to them, the uapi header in include/uapi/drm/. Then
#   make -C $(KTREE)/tools/testing/selftests TARGETS=drivers/accel/rk1828 run_tests
KSFT_RK1828 = $(KTREE)/tools/testing/selftests/drivers/accel/rk1828
selftests-install:
	@test -n "$(KTREE)" -a -f "$(KTREE)/tools/testing/selftests/lib.mk" || \
		{ echo "KTREE=... must be a kernel source tree"; exit 1; }
	rm -rf $(KSFT_RK1828)
	mkdir -p $(KSFT_RK1828) $(KTREE)/include/uapi/drm
	cp tests/selftests/Makefile tests/selftests/config tests/selftests/settings \
		tests/selftests/*.c tests/selftests/*.h $(KSFT_RK1828)/
	mkdir -p $(KSFT_RK1828)/rk1828
	cp include/rk1828/*.h $(KSFT_RK1828)/rk1828/
	cp uapi/drm/rk1828_accel.h uapi/drm/rk1828_netlink.h $(KTREE)/include/uapi/drm/

$(LINUX_SRC)/.stamp $(KSFT_DIR)/lib.mk:
	@tools/unpack-kernel-tools $(LINUX_SRC)

# Test tools: one binary per tests/tools/*.c (e.g. the reference logits check).
TOOL_SRC := $(wildcard tests/tools/*.c)
TOOL_BINS := $(patsubst tests/tools/%.c,$(B)/tests/%,$(TOOL_SRC))
$(B)/tests/%: $(B)/obj/tests/tools/%.o $(B)/libtest.a $(B)/libserver.a $(B)/libsmi.a $(RUNTIME_LIBS) $(B)/libemu.a $(B)/librk1828.a $(B)/libcommon.a $(B)/libcardmodel.a
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(DRM_LIBS) $(USBREDIR_LIBS) $(SERVER_LIBS) $(NL_LIBS) $(LDLIBS)

# User-facing tools the README runs, one binary per tools/*.c in
# $(B)/tools/: mksynth (synthetic GGUF models, tests/lib/synth_model.h)
# and fit_profile (the card profile's fit, tests/lib/profile_fit.h).
# tools/llama-ref-dump.c is not one: tools/gen-ref-vectors builds it
# against llama.cpp.
USERTOOL_SRC := tools/mksynth.c tools/fit_profile.c
USERTOOL_BINS := $(patsubst tools/%.c,$(B)/tools/%,$(USERTOOL_SRC))
$(USERTOOL_BINS): $(B)/tools/%: $(B)/obj/tools/%.o $(B)/libtest.a $(B)/libllm.a $(B)/librk1828.a \
		  $(B)/libcommon.a $(B)/libcardmodel.a
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(DRM_LIBS) $(LDLIBS)

# rk1828-llm's main over the mock cards (tests/tools/host_story.c): the
# demo's greedy text on this host without a driver (tests/arm64/run).
$(B)/tests/host_story: $(B)/obj/tests/tools/host_story.o $(call obj,$(CLI_SRC)) $(LLM_SERVER) $(RUNTIME_LIBS) \
		      $(B)/libmock.a $(B)/libemu.a $(B)/librk1828.a $(B)/libcommon.a $(B)/libcardmodel.a
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(DRM_LIBS) $(USBREDIR_LIBS) $(SERVER_LIBS) $(NL_LIBS) $(LDLIBS)

# Benchmark helpers (tests/run-bench): build/bench/{mkmodel,latency,cpucal,engine_bench}.
BENCH_SRC := $(wildcard tests/bench/*.c)
BENCH_BINS := $(patsubst tests/bench/%.c,$(B)/bench/%,$(BENCH_SRC))
$(B)/bench/%: $(B)/obj/tests/bench/%.o $(B)/libtest.a $(RUNTIME_LIBS) $(B)/libemu.a $(B)/librk1828.a $(B)/libcommon.a $(B)/libcardmodel.a
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(DRM_LIBS) $(LDLIBS)

# host_overhead runs on the mock cards (host), so it links the mock librk1828 first.
$(B)/bench/host_overhead: $(B)/obj/tests/bench/host_overhead.o $(B)/libmock.a $(B)/libtest.a $(RUNTIME_LIBS) $(B)/libemu.a $(B)/librk1828.a $(B)/libcommon.a $(B)/libcardmodel.a
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(DRM_LIBS) $(LDLIBS)

# host_timing runs bench_run() (the CLI's bench.c) over the mock cards.
$(B)/bench/host_timing: $(B)/obj/tests/bench/host_timing.o $(B)/obj/userspace/cli/bench.o $(B)/obj/userspace/cli/bench_passes.o $(B)/libmock.a $(B)/libtest.a $(RUNTIME_LIBS) $(B)/libemu.a $(B)/librk1828.a $(B)/libcommon.a $(B)/libcardmodel.a
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(DRM_LIBS) $(LDLIBS)

# spec_bench and kv_bench run on the mock cards (host), so they link the mock librk1828 first.
$(B)/bench/spec_bench $(B)/bench/kv_bench: $(B)/bench/%: $(B)/obj/tests/bench/%.o $(B)/libmock.a $(B)/libtest.a $(RUNTIME_LIBS) $(B)/libemu.a $(B)/librk1828.a $(B)/libcommon.a $(B)/libcardmodel.a
	@mkdir -p $(dir $@)
	$(quiet) LD $@
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(DRM_LIBS) $(LDLIBS)

tests: $(UNIT_BINS) examples selftests $(TOOL_BINS) $(USERTOOL_BINS) $(BENCH_BINS) $(B)/tests/serve-fake

# The synthetic Qwen-family models of the committed llama.cpp reference
# vectors (tests/vectors/qwen/*.ref), rebuilt by our own writer and
# checked against the sha256 each vector file records. ~1.6 GB in
# $(B)/synth; only rebuilt when mksynth or a vector file changes.
SYNTH_REFS := $(wildcard tests/vectors/qwen/*.ref)
SYNTH_MODELS := $(patsubst tests/vectors/qwen/%.ref,$(B)/synth/%.gguf,$(SYNTH_REFS))
$(B)/synth/%.gguf: tests/vectors/qwen/%.ref $(B)/tools/mksynth tools/mk-synth-model
	@tools/mk-synth-model $< $@
# The hybrid model of the engine tests (test_engine_hybrid, engine_check
# in the guest): tiny qwen35, Q8_0, the byte-level placeholder vocabulary.
$(B)/synth/qwen35-engine.gguf: $(B)/tools/mksynth
	@mkdir -p $(dir $@)
	@$(B)/tools/mksynth -o $@.tmp --arch qwen35 --type q8_0 && mv $@.tmp $@
# The same with one multi-token-prediction block (llama.cpp's nextn
# tensors): the --spec mtp tests (test_engine_spec_mtp).
$(B)/synth/qwen35-mtp.gguf: $(B)/tools/mksynth
	@mkdir -p $(dir $@)
	@$(B)/tools/mksynth -o $@.tmp --arch qwen35 --type q8_0 --mtp 1 && mv $@.tmp $@
synth-models: $(SYNTH_MODELS) $(B)/synth/qwen35-engine.gguf $(B)/synth/qwen35-mtp.gguf

# The module, W=1, for KVER: an installed kernel's headers (KDIR), or a
# Debian kernel tools/prepare-kernel prepares (KVER=7.3, a series, or a
# release such as 7.3.4+deb13-amd64). The default kernel's module is
# built in kernel/ and copied to $(B)/rk1828.ko; another kernel's is built
# from a copy of kernel/ and uapi/ (DKMS's layout) in
# $(B)/kmod/RELEASE/, so the trees' objects never mix, and lands in
# $(B)/kmod/RELEASE/rk1828.ko. A kernel without DRM accel is refused with
# one line.
# A cross build (ARCH=arm64) always takes the second way, its default
# kernel's module copied to $(B)/rk1828.ko too (build/arm64/rk1828.ko).
KMOD_ARGS = $(KMOD_CROSS) CONFIG_DRM_ACCEL_RK1828=m W=1 KCPPFLAGS="-I$(CURDIR)/uapi" modules
KMOD_SAY = $(if $(findstring s,$(firstword -$(MAKEFLAGS))),:,echo)
module:
	@set -e; kdir=$$(tools/prepare-kernel $(PREPARE_ARCH) $(if $(wildcard $(KDIR)/.),$(abspath $(KDIR)),$(KVER))); \
	rel=$$(cat "$$kdir/include/config/kernel.release"); \
	if [ "$$rel" = "$(KVER_DEFAULT)" ] && [ -z "$(CROSS)" ]; then \
		$(KMOD_SAY) "$(MAKE) -C $$kdir M=$(CURDIR)/kernel $(KMOD_ARGS)"; \
		$(MAKE) -C "$$kdir" M=$(CURDIR)/kernel $(KMOD_ARGS); \
		mkdir -p $(B); cp kernel/rk1828.ko $(B)/rk1828.ko; \
	else \
		out=$(CURDIR)/$(B)/kmod/$$rel; mkdir -p "$$out/kernel" "$$out/uapi/drm"; \
		cp -p kernel/Makefile kernel/Kconfig $$(ls kernel/*.[ch] | grep -v '\.mod\.c$$') "$$out/kernel/"; \
		cp -p uapi/drm/*.h "$$out/uapi/drm/"; \
		$(KMOD_SAY) "$(MAKE) -C $$kdir M=$$out/kernel $(KMOD_ARGS)"; \
		$(MAKE) -C "$$kdir" M="$$out/kernel" $(KMOD_ARGS); \
		cp "$$out/kernel/rk1828.ko" "$$out/rk1828.ko"; \
		if [ -n "$(CROSS)" ] && [ "$$rel" = "$(KVER_DEFAULT)" ]; then cp "$$out/rk1828.ko" $(B)/rk1828.ko; fi; \
	fi

CHECKPATCH := perl $(LINUX_SRC)/scripts/checkpatch.pl --no-tree --strict --terse
checkpatch: $(LINUX_SRC)/.stamp
	$(CHECKPATCH) -f $(filter-out %.mod.c,$(wildcard kernel/*.c kernel/*.h uapi/drm/*.h))

# Installing (what the Debian packages of `make deb` hold, and what
# `make install` puts on any machine): PREFIX for programs and the library,
# the system paths for the udev rule, the unit and the DKMS source.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
SYSCONFDIR ?= /etc
UDEVRULESDIR ?= /etc/udev/rules.d
UNITDIR ?= /etc/systemd/system
DKMS_SRC = /usr/src/rk1828-$(VERSION)
INSTALL ?= install

install: install-lib install-dev install-tools install-server install-dkms

# The install paths go through make's and the shell's word splitting
# unquoted: one with whitespace would install into other directories (a
# PREFIX of "/opt/my rk" wrote ./rk/lib into the tree), so each install
# target refuses it first.
INSTALL_PATHS = DESTDIR PREFIX BINDIR LIBDIR INCLUDEDIR PKGCONFIGDIR MANDIR SYSCONFDIR \
	UDEVRULESDIR UNITDIR
install-paths:
	@bad=; $(foreach v,$(INSTALL_PATHS),$(if $(word 2,$($(v))),bad="$$bad $(v)";)) \
	if [ -n "$$bad" ]; then echo "make install: whitespace in$$bad is not supported"; exit 1; fi

# Installed on this machine (no DESTDIR), the loader's cache is rebuilt:
# /usr/local/lib is not searched without it, so a program built against
# the library would not start ("librk1828.so.1: cannot open shared object
# file") until someone ran ldconfig (LDCONFIG= skips it: the staged
# install of the tests).
LDCONFIG ?= ldconfig
install-lib: $(LIB_SO) | install-paths
	$(INSTALL) -d $(DESTDIR)$(LIBDIR)
	$(INSTALL) -m 0644 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(LIB_SO)) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	$(if $(LDCONFIG),@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && \
	    command -v $(LDCONFIG) >/dev/null; then echo $(LDCONFIG); $(LDCONFIG); fi)

# The public header as <rk1828/rk1828.h>, the ioctl and netlink uapi as
# <drm/rk1828_accel.h> and <drm/rk1828_netlink.h> under the same directory
# (rk1828.pc's Cflags), and the development symlink.
install-dev: $(LIB_SO) | install-paths
	$(INSTALL) -d $(DESTDIR)$(INCLUDEDIR)/rk1828/drm $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(LIBDIR)
	$(INSTALL) -m 0644 userspace/lib/rk1828.h $(DESTDIR)$(INCLUDEDIR)/rk1828/rk1828.h
	$(INSTALL) -m 0644 uapi/drm/rk1828_accel.h uapi/drm/rk1828_netlink.h \
		$(DESTDIR)$(INCLUDEDIR)/rk1828/drm/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@VERSION@|$(VERSION)|' \
		userspace/lib/rk1828.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/rk1828.pc
	ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/librk1828.so

MANDIR ?= $(PREFIX)/share/man
install-tools: $(PROGS) | install-paths
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 0755 $(PROGS) $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 0644 userspace/doc/man/*.1 $(DESTDIR)$(MANDIR)/man1/

# rk1828-llm serve as a system service (deploy/systemd): the unit and its
# options file.
install-server: | install-paths
	$(INSTALL) -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/rk1828
	sed 's|@BINDIR@|$(BINDIR)|' deploy/systemd/rk1828-server.service \
		>$(DESTDIR)$(UNITDIR)/rk1828-server.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/rk1828-server.service
	@if [ -e $(DESTDIR)$(SYSCONFDIR)/rk1828/server.conf ]; then \
		echo "install-server: $(DESTDIR)$(SYSCONFDIR)/rk1828/server.conf exists: kept (the new one is deploy/systemd/server.conf)"; \
	else \
		echo "$(INSTALL) -m 0644 deploy/systemd/server.conf $(DESTDIR)$(SYSCONFDIR)/rk1828/server.conf"; \
		$(INSTALL) -m 0644 deploy/systemd/server.conf $(DESTDIR)$(SYSCONFDIR)/rk1828/server.conf; \
	fi
	@[ -n "$(DESTDIR)" ] || getent passwd rk1828-server >/dev/null || \
		echo "install-server: the unit runs as the system user rk1828-server in the group rk1828 (the" \
		"Debian package makes them); without it: groupadd --system rk1828; useradd --system" \
		"--home-dir /var/lib/rk1828-server --shell /usr/sbin/nologin --user-group --groups rk1828" \
		"rk1828-server; then systemctl daemon-reload"

# The module's DKMS source tree: /usr/src/rk1828-VERSION with dkms.conf at
# the top, kernel/ and uapi/ (the layout dkms.conf's MAKE line builds),
# and the udev rule.
install-dkms: | install-paths
	$(INSTALL) -d $(DESTDIR)$(DKMS_SRC)/kernel $(DESTDIR)$(DKMS_SRC)/uapi/drm $(DESTDIR)$(UDEVRULESDIR)
	sed 's/#MODULE_VERSION#/$(VERSION)/' dkms/dkms.conf >$(DESTDIR)$(DKMS_SRC)/dkms.conf
	$(INSTALL) -m 0644 kernel/Makefile kernel/Kconfig $(filter-out %.mod.c,$(wildcard kernel/*.c)) \
		$(wildcard kernel/*.h) $(DESTDIR)$(DKMS_SRC)/kernel/
	$(INSTALL) -m 0644 uapi/drm/*.h $(DESTDIR)$(DKMS_SRC)/uapi/drm/
	$(INSTALL) -m 0644 dkms/70-rk1828.rules $(DESTDIR)$(UDEVRULESDIR)/70-rk1828.rules

# DKMS on this machine from the checkout (without packages): the source
# tree above, then dkms install for DKMS_KVER (default: the running
# kernel), the group and the udev rule.
DKMS_KVER ?= $(shell uname -r)
dkms-install:
	-dkms remove rk1828/$(VERSION) --all >/dev/null 2>&1
	rm -rf $(DKMS_SRC)
	$(SUBMAKE) install-dkms DESTDIR= UDEVRULESDIR=/etc/udev/rules.d
	dkms install rk1828/$(VERSION) -k $(DKMS_KVER)
	$(SUBMAKE) udev-install
dkms-uninstall:
	dkms remove rk1828/$(VERSION) --all
	rm -rf $(DKMS_SRC)
	rm -f $(UDEV_RULE)

# Debian packages (debian/, debhelper): rk1828-dkms, librk1828-1,
# librk1828-dev, rk1828-tools, rk1828-server into $(B)/deb/, checked by
# lintian. check-packages installs them into a Debian root booted as the
# guest (tests/packages/run).
deb: deps-base
	@tools/install-deps --packaging
	tools/build-deb $(B)/deb
# Both README commands on a clean Debian 12 (a debootstrap minbase with
# git, make and sudo, a fresh clone of HEAD and ../shared beside it), with
# ../shared/tools/fresh-machine; each one's time from nothing, installs
# included, is printed. FRESH_ROOT is removed first (never while anything
# is mounted under it).
FRESH_ROOT ?= ../fresh-root
FRESH_TOOL ?= ../shared/tools/fresh-machine
check-fresh:
	@test -x $(FRESH_TOOL) || { echo "check-fresh: no $(FRESH_TOOL)"; exit 1; }
	@for cmd in "make demo" "make check"; do \
		if [ -d $(FRESH_ROOT) ] && grep -q " $$(cd $(FRESH_ROOT) && pwd)/" /proc/mounts; then \
			echo "check-fresh: something is still mounted under $(FRESH_ROOT)"; exit 1; fi; \
		rm -rf $(FRESH_ROOT); t0=$$(date +%s); \
		$(FRESH_TOOL) . ../shared $(FRESH_ROOT) -- $$cmd >$(B)/fresh-$${cmd#make }.log 2>&1; rc=$$?; \
		tail -n 3 $(B)/fresh-$${cmd#make }.log; \
		echo "check-fresh: '$$cmd' on a clean Debian 12: exit $$rc in $$(( $$(date +%s) - t0 )) s (log: $(B)/fresh-$${cmd#make }.log)"; \
		[ $$rc = 0 ] || exit 1; \
	done

check-packages: deps deb
	@$(SUBMAKE) userspace
	tests/packages/run $(B)/deb

# The udev rule: /dev/accel/accelN of rk1828 cards in group rk1828, mode
# 0660 (dkms/70-rk1828.rules); the group is created when missing, the
# nodes of cards already present are changed at once.
UDEV_RULE := /etc/udev/rules.d/70-rk1828.rules
udev-install:
	getent group rk1828 >/dev/null || groupadd --system rk1828
	$(INSTALL) -D -m 0644 dkms/70-rk1828.rules $(UDEV_RULE)
	-udevadm control --reload
	-udevadm trigger --subsystem-match=accel --action=change

# The targets that install packages build in a second make ($(SUBMAKE)),
# which reads this file again once the packages are there.
SUBMAKE = $(MAKE) --no-print-directory

# The model file is checked before booting; the prompt is printed first
# (rk1828-llm prints only the continuation) so the story reads whole.
# With ARCH=arm64 the guest is the arm64 one (tools/vm-run --arch arm64:
# TCG, Debian's arm64 kernel, the root of tools/mk-arm64-root) running
# the arm64 build; the emulators are this host's own build.
demo: deps-base
	@test -r "$(MODEL)" || { echo "demo: model '$(MODEL)' not found (MODEL=...)"; exit 1; }
	@test -f "$(MODEL)" || { echo "demo: model '$(MODEL)' is not a regular file (MODEL=...)"; exit 1; }
	$(if $(CROSS),@tools/install-deps --$(ARCH))
	@echo "building rk1828 (userspace, emulator, module)..."
	@$(SUBMAKE) -s userspace module
	$(if $(CROSS),@$(SUBMAKE) -s ARCH= CROSS= build/rk1828-emu)
	@echo "booting a$(if $(CROSS),n $(ARCH)) guest with $(CARDS) emulated RK1828 cards..."
	@printf '%s' "$(PROMPT)"
	@exec tools/vm-run $(if $(CROSS),--arch $(ARCH)) --cards $(CARDS) -- $(B)/rk1828-llm run -m $(MODEL) -p "$(PROMPT)" -n 200 --temp 0

# The arm64 checks in one arm64 guest (tests/arm64/run): the demo's story
# against this host's x86_64 one, the server through a forwarded port,
# the kselftests; then the arm64 unit tests under qemu-user against this
# host's (tests/arm64/unit). Not part of make check.
check-arm64: deps-base
	@tools/install-deps --arm64
	@$(SUBMAKE) ARCH=arm64 userspace module tests
	@$(SUBMAKE) ARCH= CROSS= userspace tests build/tests/host_story
	tests/arm64/run

# The server in a guest with $(CARDS) cards, reachable from the host's
# loopback at http://127.0.0.1:$(PORT)/ until Ctrl-C (tools/vm-serve).
PORT ?= 8080
serve: deps-base
	@$(SUBMAKE) userspace module
	@exec tools/vm-serve "$(MODEL)" $(CARDS) $(PORT)

check: deps
	@$(SUBMAKE) all synth-models
	tests/run-all

# Refit the card profile's eight timing parameters, all at once, on the
# vendor's single-card figures and the published multi-card ones
# (userspace/doc/timing.rst) and print the residuals.
fit-profile: $(B)/tools/fit_profile
	$(B)/tools/fit_profile --write

# The debug guest: KASAN, PROVE_LOCKING, DEBUG_OBJECTS, kmemleak. The
# kernel is built from linux-source-6.12 once and cached by source
# version and config (build/debug-kernel/); not part of make check.
check-debug: deps
	@$(SUBMAKE) all
	tools/build-debug-kernel $(B)/debug
	tests/run-debug

# The module on the other kernels Debian ships: a clean refusal on those
# without DRM accel (6.1), W=1 and DKMS builds on the default kernel and
# on every series of Debian unstable / trixie-backports (prepared by
# tools/prepare-kernel, cached in ~/.cache/rk1828/kernels), then the whole
# guest suite on the newest of them. Not part of make check.
check-kernels: deps
	@$(SUBMAKE) all synth-models
	tests/run-kernels

bench: deps
	@$(SUBMAKE) all
	tests/run-bench

clean:
	rm -rf $(B)
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/kernel clean >/dev/null 2>&1

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
