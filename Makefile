# rk1828: top-level build. `make help` lists the targets.
#
# Userspace binaries and the module land in build/ (build/rk1828.ko).

# The kernel the module is built for: the newest installed one whose
# headers have DRM accel, else the running kernel. `make module KVER=7.3`
# builds for a Debian kernel that is not installed (tools/prepare-kernel).
KVER_DEFAULT := $(shell tools/prepare-kernel --default)
KVER ?= $(KVER_DEFAULT)
KDIR ?= /lib/modules/$(KVER)/build
MODEL ?= ../shared/models/stories260K.gguf
CARDS ?= 2
PROMPT ?= Once upon a time
B := build

CC ?= gcc
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -pthread -MMD -MP \
	  -D_GNU_SOURCE
LDLIBS += -lm -pthread $(shell pkg-config --libs libpcre2-8 jansson)
DRM_CFLAGS := $(shell pkg-config --cflags libdrm 2>/dev/null)

# Include paths per directory: each layer sees only the headers it may use
# (README.md "Layout" lists the arrows; tools/check-layering checks every
# #include against the same rules in `make check`).
INC_common    := -Iinclude -Iuserspace/common
INC_cardmodel := -Icardmodel
INC_lib       := -Iinclude -Iuapi -Iuserspace/lib $(DRM_CFLAGS)
INC_llm       := -Iinclude -Iuserspace/common -Iuserspace/lib -Iuserspace/llm -Icardmodel
INC_server    := $(INC_llm) -Iuserspace/server -Iuserspace/smi
INC_cli       := $(INC_server)
INC_emu       := -Iinclude -Ikernel -Iemulator -Icardmodel
# rk1828-smi: the netlink uapi header and libnl-genl-3 (no librk1828).
NL_CFLAGS     := $(shell pkg-config --cflags libnl-genl-3.0 2>/dev/null)
NL_LIBS       := $(shell pkg-config --libs libnl-genl-3.0 2>/dev/null)
INC_smi       := -Iinclude -Iuapi -Iuserspace/smi $(NL_CFLAGS)
# Host tests, tools and benchmarks exercise every userspace layer. (The
# selftests build with their own Makefile: uapi and include/rk1828 only.)
INC_tests     := -Itests/lib -Iinclude -Iuapi -Ikernel -Iuserspace/common \
		 -Iuserspace/lib -Iuserspace/llm -Iuserspace/server -Iuserspace/smi -Iemulator -Icardmodel \
		 $(DRM_CFLAGS) $(NL_CFLAGS)

$(B)/obj/userspace/common/%.o: INC := $(INC_common)
$(B)/obj/cardmodel/%.o: INC := $(INC_cardmodel)
$(B)/obj/userspace/lib/%.o: INC := $(INC_lib)
$(B)/obj/userspace/llm/%.o: INC := $(INC_llm)
$(B)/obj/userspace/llm/main.o: INC := $(INC_cli)
$(B)/obj/userspace/server/%.o: INC := $(INC_server)
$(B)/obj/emulator/%.o: INC := $(INC_emu)
$(B)/obj/userspace/smi/%.o: INC := $(INC_smi)
$(B)/obj/tests/%.o: INC := $(INC_tests)

COMMON_SRC := $(wildcard userspace/common/*.c)
CARDMODEL_SRC := $(wildcard cardmodel/*.c)
LIB_SRC    := $(wildcard userspace/lib/*.c)
LLM_SRC    := $(filter-out userspace/llm/main.c,$(wildcard userspace/llm/*.c))
EMU_SRC    := $(wildcard emulator/*.c)
SMI_SRC    := $(filter-out userspace/smi/smi_main.c,$(wildcard userspace/smi/*.c))
SERVER_SRC := $(filter-out userspace/server/load.c,$(wildcard userspace/server/*.c))
FAKE_SRC   := $(wildcard tests/server/fake/*.c)
UNIT_SRC   := $(wildcard tests/unit/test_*.c)
TESTLIB_SRC := $(filter-out tests/lib/mock_rk.c,$(wildcard tests/lib/*.c))

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))

PROGS := $(B)/rk1828-llm $(B)/rk1828-emu $(B)/rk1828-smi
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))

.PHONY: all help deps deps-base module userspace tests selftests selftests-install check \
	check-debug check-kernels demo serve bench checkpatch clean dkms-install dkms-uninstall udev-install \
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
	@echo "make bench      benchmarks (ratios measured side by side)"
	@echo "make fit-profile  refit emulator/profiles/rk1828.conf on the vendor figures"
	@echo "make checkpatch checkpatch --strict on kernel/ and uapi/"
	@echo "make selftests-install KTREE=DIR  kselftests into a kernel tree"
	@echo "make dkms-install  install the module with DKMS and the udev rule (real machines)"
	@echo "make udev-install  only the udev rule: accel nodes in group rk1828, mode 0660"

# deps-base is what building and the demo need; deps adds what the test
# suite needs on top (tokenizer vocabularies, npm packages, our QEMU).
deps-base:
	@tools/install-deps
	@tools/unpack-kernel-tools $(B)/linux-src

deps: deps-base
	@if [ -x tools/fetch-vocab ]; then tools/fetch-vocab $(B)/vocab; fi
	@tools/npm-deps $(B)/node
	@tools/build-qemu >/dev/null

userspace: $(PROGS)

$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(INC) -c -o $@ $<

$(B)/libcommon.a: $(call obj,$(COMMON_SRC))
	@mkdir -p $(B); rm -f $@; ar rcs $@ $^
# The card model (profile + cost function), shared by the emulator's
# timing mode and the planner's prediction; profile.o embeds the default
# profile (.incbin).
$(B)/libcardmodel.a: $(call obj,$(CARDMODEL_SRC))
	@mkdir -p $(B); rm -f $@; ar rcs $@ $^
$(B)/obj/cardmodel/profile.o: emulator/profiles/rk1828.conf
$(B)/librk1828.a: $(call obj,$(LIB_SRC))
	@mkdir -p $(B); rm -f $@; ar rcs $@ $^
$(B)/libllm.a: $(call obj,$(LLM_SRC))
	@mkdir -p $(B); rm -f $@; ar rcs $@ $^
$(B)/libemu.a: $(call obj,$(filter-out emulator/main.c,$(EMU_SRC)))
	@mkdir -p $(B); rm -f $@; ar rcs $@ $^
# The HTTP server (userspace/server): libmicrohttpd + jansson; the web UI
# files are embedded by ui.c (.incbin), so ui.o depends on them.
SERVER_CFLAGS := $(shell pkg-config --cflags libmicrohttpd jansson 2>/dev/null)
SERVER_LIBS := $(shell pkg-config --libs libmicrohttpd jansson 2>/dev/null)
$(B)/obj/userspace/server/%.o: CFLAGS += $(SERVER_CFLAGS)
$(B)/obj/tests/server/fake/%.o: CFLAGS += $(SERVER_CFLAGS)
$(B)/obj/userspace/server/ui.o: $(wildcard userspace/server/ui/*)
$(B)/libserver.a: $(call obj,$(SERVER_SRC))
	@mkdir -p $(B); rm -f $@; ar rcs $@ $^
# The server over the scripted test engine: host tests of the HTTP layer.
# It takes from userspace/llm only what the server calls besides the
# engine: --cards, the chat templates and the JSON-schema compiler.
FAKE_LLM := userspace/llm/cardspec.c $(wildcard userspace/llm/chat_*.c) \
	    userspace/llm/jsonschema.c userspace/llm/jsonmatch.c
$(B)/tests/serve-fake: $(call obj,$(FAKE_SRC) $(FAKE_LLM)) $(B)/libserver.a $(B)/libcommon.a $(B)/libsmi.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(SERVER_LIBS) $(NL_LIBS) $(LDLIBS)
$(B)/libtest.a: $(call obj,$(TESTLIB_SRC)) Makefile
	@mkdir -p $(B); rm -f $@; ar rcs $@ $(filter %.o,$^)

# rk1828-llm: the CLI (run, plan, info) and `serve` (userspace/server).
$(B)/obj/userspace/llm/main.o: CFLAGS += $(SERVER_CFLAGS)
LLM_SERVER := $(call obj,userspace/server/load.c) $(B)/libserver.a $(B)/libsmi.a
$(B)/rk1828-llm: $(call obj,userspace/llm/main.c) $(LLM_SERVER) $(B)/libllm.a $(B)/librk1828.a $(B)/libcommon.a $(B)/libcardmodel.a
	$(CC) $(CFLAGS) -o $@ $^ $(shell pkg-config --libs libdrm) $(SERVER_LIBS) $(NL_LIBS) $(LDLIBS)

# rk1828-smi: card table, events and reset over the generic netlink
# family (userspace/smi, libnl-genl-3 + jansson).
$(B)/libsmi.a: $(call obj,$(SMI_SRC))
	@mkdir -p $(B); rm -f $@; ar rcs $@ $^
$(B)/rk1828-smi: $(call obj,userspace/smi/smi_main.c) $(B)/libsmi.a
	$(CC) $(CFLAGS) -o $@ $^ $(NL_LIBS) $(LDLIBS)

$(B)/rk1828-emu: $(call obj,emulator/main.c) $(B)/libemu.a $(B)/libcardmodel.a
	$(CC) $(CFLAGS) -o $@ $^ -lusbredirparser $(LDLIBS)

# Host unit tests: one binary per tests/unit/test_*.c, linked with every library.
# The mock librk1828 (tests/lib/mock_rk.c) comes first: a test that calls
# mock_rk_*() gets the mock's rk_* functions, the others the real ones.
$(B)/libmock.a: $(call obj,tests/lib/mock_rk.c)
	@mkdir -p $(B); rm -f $@; ar rcs $@ $^
$(B)/tests/%: $(B)/obj/tests/unit/%.o $(B)/libmock.a $(B)/libtest.a $(B)/libllm.a $(B)/libemu.a $(B)/librk1828.a $(B)/libcommon.a $(B)/libcardmodel.a $(B)/libsmi.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(shell pkg-config --libs libdrm) -lusbredirparser $(NL_LIBS) $(LDLIBS)

# The server's request parsers have their own unit tests, which need libserver
# (and the JSON-schema compiler of structured outputs).
$(B)/tests/test_api $(B)/tests/test_api_native: $(B)/tests/%: $(B)/obj/tests/unit/%.o $(B)/libtest.a $(B)/libserver.a \
		     $(call obj,userspace/llm/jsonschema.c userspace/llm/jsonmatch.c) $(B)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# Guest (kselftest) tests: tests/selftests is a kselftest directory on
# lib.mk (tools/testing/selftests/drivers/accel/rk1828 in a kernel tree),
# built here with the kselftest files unpacked into $(B)/linux-src and our
# own uapi and program headers. It uses libdrm only (no librk1828).
KSFT_DIR := $(CURDIR)/$(B)/linux-src/tools/testing/selftests
SELFTEST_HDRS := $(CURDIR)/uapi/drm/rk1828_accel.h $(CURDIR)/uapi/drm/rk1828_netlink.h \
	$(wildcard $(CURDIR)/include/rk1828/*.h)
SELFTEST_MAKE = $(MAKE) -C tests/selftests KSFT_DIR=$(KSFT_DIR) \
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

$(B)/linux-src/.stamp $(KSFT_DIR)/lib.mk:
	@tools/unpack-kernel-tools $(B)/linux-src

# Test tools: one binary per tests/tools/*.c (e.g. the reference logits check).
TOOL_SRC := $(wildcard tests/tools/*.c)
TOOL_BINS := $(patsubst tests/tools/%.c,$(B)/tests/%,$(TOOL_SRC))
$(B)/tests/%: $(B)/obj/tests/tools/%.o $(B)/libtest.a $(B)/libserver.a $(B)/libsmi.a $(B)/libllm.a $(B)/libemu.a $(B)/librk1828.a $(B)/libcommon.a $(B)/libcardmodel.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(shell pkg-config --libs libdrm) -lusbredirparser $(SERVER_LIBS) $(NL_LIBS) $(LDLIBS)

# Benchmark helpers (tests/run-bench): build/bench/{mkmodel,latency,cpucal,engine_bench}.
BENCH_SRC := $(wildcard tests/bench/*.c)
BENCH_BINS := $(patsubst tests/bench/%.c,$(B)/bench/%,$(BENCH_SRC))
$(B)/bench/%: $(B)/obj/tests/bench/%.o $(B)/libtest.a $(B)/libllm.a $(B)/libemu.a $(B)/librk1828.a $(B)/libcommon.a $(B)/libcardmodel.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(shell pkg-config --libs libdrm) $(LDLIBS)

tests: $(UNIT_BINS) selftests $(TOOL_BINS) $(BENCH_BINS) $(B)/tests/serve-fake

# The synthetic Qwen-family models of the committed llama.cpp reference
# vectors (tests/vectors/qwen/*.ref), rebuilt by our own writer and
# checked against the sha256 each vector file records. ~1.6 GB in
# $(B)/synth; only rebuilt when mksynth or a vector file changes.
SYNTH_REFS := $(wildcard tests/vectors/qwen/*.ref)
SYNTH_MODELS := $(patsubst tests/vectors/qwen/%.ref,$(B)/synth/%.gguf,$(SYNTH_REFS))
$(B)/synth/%.gguf: tests/vectors/qwen/%.ref $(B)/tests/mksynth tools/mk-synth-model
	@tools/mk-synth-model $< $@
# The hybrid model of the engine tests (test_engine_hybrid, engine_check
# in the guest): tiny qwen35, Q8_0, the byte-level placeholder vocabulary.
$(B)/synth/qwen35-engine.gguf: $(B)/tests/mksynth
	@mkdir -p $(dir $@)
	@$(B)/tests/mksynth -o $@.tmp --arch qwen35 --type q8_0 && mv $@.tmp $@
synth-models: $(SYNTH_MODELS) $(B)/synth/qwen35-engine.gguf

# The module, W=1, for KVER: an installed kernel's headers (KDIR), or a
# Debian kernel tools/prepare-kernel prepares (KVER=7.3, a series, or a
# release such as 7.3.4+deb13-amd64). The default kernel's module is
# built in kernel/ and copied to $(B)/rk1828.ko; another kernel's is built
# from a copy of kernel/ and uapi/ (DKMS's layout) in
# $(B)/kmod/RELEASE/, so the trees' objects never mix, and lands in
# $(B)/kmod/RELEASE/rk1828.ko. A kernel without DRM accel is refused with
# one line.
KMOD_ARGS = CONFIG_DRM_ACCEL_RK1828=m W=1 KCPPFLAGS="-I$(CURDIR)/uapi" modules
KMOD_SAY = $(if $(findstring s,$(firstword -$(MAKEFLAGS))),:,echo)
module:
	@set -e; kdir=$$(tools/prepare-kernel $(if $(wildcard $(KDIR)/.),$(abspath $(KDIR)),$(KVER))); \
	rel=$$(cat "$$kdir/include/config/kernel.release"); \
	if [ "$$rel" = "$(KVER_DEFAULT)" ]; then \
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
	fi

CHECKPATCH := perl $(B)/linux-src/scripts/checkpatch.pl --no-tree --strict --terse
checkpatch: $(B)/linux-src/.stamp
	$(CHECKPATCH) -f $(filter-out %.mod.c,$(wildcard kernel/*.c kernel/*.h uapi/drm/*.h))

# DKMS: lay out /usr/src/rk1828-VER (dkms.conf at the top, kernel/, uapi/)
# and build + install for DKMS_KVER (default: the running kernel).
DKMS_VER := 1.0
DKMS_SRC := /usr/src/rk1828-$(DKMS_VER)
DKMS_KVER ?= $(shell uname -r)
dkms-install:
	-dkms remove rk1828/$(DKMS_VER) --all >/dev/null 2>&1
	rm -rf $(DKMS_SRC)
	mkdir -p $(DKMS_SRC)/kernel $(DKMS_SRC)/uapi/drm
	cp dkms/dkms.conf $(DKMS_SRC)/
	cp kernel/Makefile kernel/Kconfig kernel/*.c kernel/*.h $(DKMS_SRC)/kernel/
	rm -f $(DKMS_SRC)/kernel/*.mod.c
	cp uapi/drm/*.h $(DKMS_SRC)/uapi/drm/
	dkms install rk1828/$(DKMS_VER) -k $(DKMS_KVER)
	$(MAKE) udev-install
dkms-uninstall:
	dkms remove rk1828/$(DKMS_VER) --all
	rm -rf $(DKMS_SRC)
	rm -f $(UDEV_RULE)

# The udev rule: /dev/accel/accelN of rk1828 cards in group rk1828, mode
# 0660 (dkms/70-rk1828.rules); the group is created when missing, the
# nodes of cards already present are changed at once.
UDEV_RULE := /etc/udev/rules.d/70-rk1828.rules
udev-install:
	getent group rk1828 >/dev/null || groupadd --system rk1828
	install -D -m 0644 dkms/70-rk1828.rules $(UDEV_RULE)
	-udevadm control --reload
	-udevadm trigger --subsystem-match=accel --action=change

# The model file is checked before booting; the prompt is printed first
# (rk1828-llm prints only the continuation) so the story reads whole.
demo: deps-base all
	@test -r "$(MODEL)" || { echo "demo: model '$(MODEL)' not found (MODEL=...)"; exit 1; }
	@test -f "$(MODEL)" || { echo "demo: model '$(MODEL)' is not a regular file (MODEL=...)"; exit 1; }
	@echo "booting a guest with $(CARDS) emulated RK1828 cards..."
	@printf '%s' "$(PROMPT)"
	@exec tools/vm-run --cards $(CARDS) -- $(B)/rk1828-llm run -m $(MODEL) -p "$(PROMPT)" -n 200 --temp 0

# The server in a guest with $(CARDS) cards, reachable from the host's
# loopback at http://127.0.0.1:$(PORT)/ until Ctrl-C (tools/vm-serve).
PORT ?= 8080
serve: deps userspace module
	@exec tools/vm-serve "$(MODEL)" $(CARDS) $(PORT)

check: deps all synth-models
	tests/run-all

# Refit the card profile's fitted values on the vendor's single-card
# figures (userspace/doc/timing.rst) and print the residuals.
fit-profile: $(B)/tests/fit_profile
	$(B)/tests/fit_profile --write

# The debug guest: KASAN, PROVE_LOCKING, DEBUG_OBJECTS, kmemleak. The
# kernel is built from linux-source-6.12 once and cached by source
# version and config (build/debug-kernel/); not part of make check.
check-debug: deps all
	tools/build-debug-kernel $(B)/debug
	tests/run-debug

# The module on the other kernels Debian ships: a clean refusal on those
# without DRM accel (6.1), W=1 and DKMS builds on the default kernel and
# on every series of Debian unstable / trixie-backports (prepared by
# tools/prepare-kernel, cached in ~/.cache/rk1828/kernels), then the whole
# guest suite on the newest of them. Not part of make check.
check-kernels: deps all synth-models
	tests/run-kernels

bench: deps all
	tests/run-bench

clean:
	rm -rf $(B)
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/kernel clean >/dev/null 2>&1

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
