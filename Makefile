# trlat: see README.md. `make` builds build/libtrlat.so and build/trlat.
CC        ?= cc
CUDA_HOME ?= /usr/local/cuda
PREFIX    ?= /usr/local
BUILD     ?= build
PKG_CONFIG ?= pkg-config

VERSION := 0.1.0
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
BASE    := -std=c11 -D_GNU_SOURCE -DTRLAT_VERSION=\"$(VERSION)\" -I. -I$(CUDA_HOME)/include -g
OPT     ?= -O2
CFLAGS  ?=
LIBFLAGS := $(BASE) $(WARN) $(OPT) -fPIC -fvisibility=hidden -fno-strict-aliasing $(CFLAGS)
# Link-time optimization of the library (LTO= builds without): a fast-path
# hit crosses a dozen files (launcher, key, memo, replay, driver wrapper,
# record); inlined across them it ran ~6% fewer instructions and ~70 ns less
# per nop_with_args hit on the CPU machine (docs/BENCHMARKS.md, "link-time optimization", 2026-11-30).
# Only where the toolchain can link with it: the GPU machine's gcc has no
# lto-wrapper, and a build there without it beats no build.
ifeq ($(origin LTO),undefined)
LTO := $(shell printf 'int f(void){return 0;}' | $(CC) -flto=auto -fPIC -shared -x c - -o /dev/null 2>/dev/null && echo -flto=auto)
ifeq ($(LTO),)
$(warning trlat: $(CC) cannot link with -flto here: building without link-time optimization)
endif
endif

# libunwind is linked statically (the GPU machine has none) when its archive
# exists; TRLAT_NO_UNWIND=1 builds without native call sites. Only LLVM's
# libunwind.a (Debian: libunwind-14-dev) is built PIC; the libunwind-dev one
# is not and cannot go into a shared object. --exclude-libs hides all of its
# symbols (_Unwind_* included): the process's C++ unwinder stays its own.
UNWIND_A := $(firstword $(wildcard /usr/lib/llvm-*/lib/libunwind.a))
UNWIND_INC := $(firstword $(wildcard $(dir $(UNWIND_A))../include/libunwind.h /usr/include/libunwind/libunwind.h))
ifeq ($(TRLAT_NO_UNWIND),1)
UNWIND_A :=
endif
ifeq ($(UNWIND_INC),)
UNWIND_A :=
endif
ifneq ($(UNWIND_A),)
UNWIND_FLAGS := -DTRLAT_HAVE_UNWIND=1 -isystem $(dir $(UNWIND_INC))
UNWIND_LIBS := -Wl,--exclude-libs,ALL $(UNWIND_A)
endif

# The library's parts and the CLI's (README's layout table).
LIB_DIRS := interpose interpose/cupti interpose/python fastpath fastpath/torch report
LIB_SRCS := $(filter-out $(LIB_EXCLUDE),$(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c)))
LIB_HDRS := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.h))
LIB_ASM  := $(wildcard interpose/*.S)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o) $(LIB_ASM:%.S=$(BUILD)/obj/%.o)
CLI_SRCS := $(wildcard report/cli/*.c)
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/obj/%.o)
CLI_LIBS := $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null || echo -ljansson) -lm
# CLI_STATIC=1 (the wheel's build, pyproject.toml): jansson linked in, so
# that the installed CLI needs nothing beyond libc
ifeq ($(CLI_STATIC),1)
CLI_LIBS := -Wl,-Bstatic -ljansson -Wl,-Bdynamic -lm
endif

all: $(BUILD)/libtrlat.so $(BUILD)/trlat

$(BUILD)/obj/%.o: %.c $(LIB_HDRS) $(wildcard report/cli/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(LIBFLAGS) $(LTO) $(UNWIND_FLAGS) -MMD -MP -c $< -o $@

# It declares the wrappers as data (their addresses only, without cuda.h's
# prototypes), which LTO's symbol merging refuses.
$(BUILD)/obj/interpose/wrapper_table.o: LTO :=

$(BUILD)/obj/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) $(BASE) -fPIC -c $< -o $@

# Only the interposed names and trlat_* are exported (interpose/exports.map).
$(BUILD)/libtrlat.so: $(LIB_OBJS) interpose/exports.map
	$(CC) -shared $(OPT) $(LTO) -o $@ $(LIB_OBJS) -Wl,--version-script=interpose/exports.map \
	  -Wl,-z,now -Wl,-z,nodelete $(UNWIND_LIBS) -ldl -lpthread

# Python that libtrlat.so reads by absolute path from <libdir>/share/trlat:
# the Python hook's installer, the fast path's grid analysis and its LibEntry reference.
SHARE_PY := $(BUILD)/share/trlat/pyhook.py $(BUILD)/share/trlat/gridcheck.py $(BUILD)/share/trlat/libentry_model.py
$(BUILD)/share/trlat/pyhook.py: interpose/python/pyhook.py
	@mkdir -p $(dir $@)
	cp $< $@
$(BUILD)/share/trlat/gridcheck.py: fastpath/gridcheck.py
	@mkdir -p $(dir $@)
	cp $< $@
$(BUILD)/share/trlat/libentry_model.py: fastpath/libentry_model.py
	@mkdir -p $(dir $@)
	cp $< $@
$(BUILD)/libtrlat.so: | $(SHARE_PY)

$(BUILD)/trlat: $(CLI_OBJS)
	$(CC) -o $@ $(CLI_OBJS) $(CLI_LIBS)


# The library built again with GCC's profile feedback from fast-path hits
# on the fake driver (scripts/pgo-build.sh; PGO_PYTHON=<Python 3.12+, with
# torch 2.11 if at hand>): a hit's code in fewer cache lines. The build the
# GPU benchmark measures (docs/BENCHMARKS.md, "the replay block and make pgo", 2026-11-30).
pgo:
	BUILD=$(BUILD) bash scripts/pgo-build.sh
.PHONY: pgo lto-flags

# The flags chosen, for scripts that run make several times (probed once).
lto-flags:
	@echo '$(LTO)'

-include tests/tests.mk

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/trlat
	install -m 0755 $(BUILD)/libtrlat.so $(DESTDIR)$(PREFIX)/lib/libtrlat.so
	install -m 0755 $(BUILD)/trlat $(DESTDIR)$(PREFIX)/bin/trlat
	install -m 0644 $(SHARE_PY) $(DESTDIR)$(PREFIX)/share/trlat/

demo: all $(FAKE) $(TB)/bin/launcher
	bash scripts/demo.sh

gpu-test:
	bash scripts/gpu-test.sh

# The house style (.clang-format): `make format` applies it, and
# tests/integration/test_layers.sh checks it.
FORMAT_SRCS = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
format:
	clang-format -i $(FORMAT_SRCS)

clean:
	rm -rf $(BUILD)

.PHONY: all install demo gpu-test clean test format
-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
