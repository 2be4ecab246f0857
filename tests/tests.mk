# Tests: `make test` builds everything below and runs tests/run-tests.sh.
TB       := $(BUILD)/tests
FAKE_DIR := $(abspath $(TB)/fake)
FAKE     := $(TB)/fake/libcuda.so.1
TEST_CFLAGS := -std=c11 -D_GNU_SOURCE -I. -I$(CUDA_HOME)/include -g -O1 -Wall -Wextra -Werror -Wno-unused-parameter
SAN      := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
CHECK_LIBS := $(shell $(PKG_CONFIG) --libs check 2>/dev/null || echo -lcheck -lsubunit -lm -lrt)

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(TB)/unit/%) $(UNIT_SRCS:tests/unit/%.c=$(TB)/unit-san/%)
LIB_C_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
SAN_OBJS := $(LIB_SRCS:%.c=$(BUILD)/san/obj/%.o)
BINS     := $(TB)/bin/launcher $(TB)/bin/scale $(TB)/bin/nocuda $(TB)/bin/cxx_throw $(TB)/lib/libmallocwrap.so
BINS     += $(TB)/lib/libfaultyio.so
BINS     += $(TB)/bin/tracemem $(TB)/lib/libdlsymwrap.so $(TB)/bin/nvtxprog

$(FAKE): tests/fake/fake_cuda.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -fPIC -shared -fvisibility=hidden -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic-functions -o $@ $< -lpthread
	ln -sf libcuda.so.1 $(TB)/fake/libcuda.so

# NVTX v3's header-only loader, from the CUDA toolkit's headers
$(TB)/bin/nvtxprog: tests/integration/nvtxprog.c $(FAKE)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -Wno-missing-field-initializers -o $@ $< -L$(FAKE_DIR) -Wl,-rpath,$(FAKE_DIR) -lcuda -ldl

$(TB)/bin/launcher: tests/integration/launcher.c $(FAKE)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -L$(FAKE_DIR) -Wl,-rpath,$(FAKE_DIR) -lcuda -lpthread -ldl

$(TB)/bin/tracemem: tests/integration/tracemem.c $(FAKE)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -L$(FAKE_DIR) -Wl,-rpath,$(FAKE_DIR) -lcuda -lpthread

$(TB)/bin/scale: tests/integration/scale.c $(FAKE)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -L$(FAKE_DIR) -Wl,-rpath,$(FAKE_DIR) -lcuda -lpthread

$(TB)/bin/nocuda: tests/integration/nocuda.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< -ldl

$(TB)/bin/cxx_throw: tests/integration/cxx_throw.cpp $(FAKE)
	@mkdir -p $(dir $@)
	$(CXX) -O1 -g -I$(CUDA_HOME)/include -o $@ $< -L$(FAKE_DIR) -Wl,-rpath,$(FAKE_DIR) -lcuda

$(TB)/lib/libmallocwrap.so: tests/integration/mallocwrap.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -fPIC -shared -o $@ $< -ldl

# failing and slow file writes, for test_output_safety.sh
$(TB)/lib/libfaultyio.so: tests/integration/faultyio.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -fPIC -shared -o $@ $<

# -O2: its RTLD_NEXT lookups are tail calls (the caller's return address stays)
$(TB)/lib/libdlsymwrap.so: tests/integration/dlsymwrap.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -O2 -fPIC -shared -o $@ $< -ldl -lpthread

# Unit tests link the library's objects directly (hidden symbols included),
# once as built and once with ASan and UBSan.
$(BUILD)/san/obj/%.o: %.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIBFLAGS) $(UNWIND_FLAGS) $(SAN) -c $< -o $@

$(BUILD)/san/libtrlat.so: $(SAN_OBJS) $(LIB_ASM:%.S=$(BUILD)/obj/%.o)
	$(CC) -shared $(SAN) -o $@ $^ -Wl,--version-script=interpose/exports.map $(UNWIND_LIBS) -ldl -lpthread

$(TB)/unit/%: tests/unit/%.c $(LIB_C_OBJS) tests/unit/check_main.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(LIB_C_OBJS) $(UNWIND_LIBS) $(CHECK_LIBS) -ldl -lpthread

$(TB)/unit-san/%: tests/unit/%.c $(SAN_OBJS) tests/unit/check_main.h
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(SAN) -o $@ $< $(SAN_OBJS) $(UNWIND_LIBS) $(CHECK_LIBS) -ldl -lpthread

test-build: all $(FAKE) $(BINS) $(UNIT_BINS) $(BUILD)/san/libtrlat.so

test: test-build
	BUILD=$(BUILD) bash tests/run-tests.sh

.PHONY: test-build

# GPU programs, built here and carried to the GPU machine (scripts/gpu-test.sh).
CUDA_STUBS := $(CUDA_HOME)/lib64/stubs
$(TB)/gpu/bench_launch: tests/gpu/bench_launch.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I$(CUDA_HOME)/include -o $@ $< -L$(CUDA_STUBS) -lcuda

gpu-build: all $(TB)/gpu/bench_launch
.PHONY: gpu-build
# the raw C loop and the Python-level floor (pyfloor.c: Python's symbols
# resolve in the Python process that loads it with ctypes)
$(TB)/gpu/librawloop.so: tests/gpu/rawloop.c tests/gpu/pyfloor.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I$(CUDA_HOME)/include -fPIC -shared -fvisibility=hidden -o $@ $^
gpu-build: $(TB)/gpu/librawloop.so
$(TB)/gpu/clockbench: tests/gpu/clockbench.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -o $@ $<
gpu-build: $(TB)/gpu/clockbench

# CUPTI (issue 3): a fake libcupti for the CUPTI-on path without a GPU, and
# the minimal CUPTI client the GPU benchmark compares trlat with.
$(TB)/fake/libcupti_fake.so: tests/fake/fake_cupti.c $(FAKE)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -fPIC -shared -fvisibility=hidden -o $@ $< -L$(FAKE_DIR) -Wl,-rpath,$(FAKE_DIR) -lcuda -lpthread
test-build: $(TB)/fake/libcupti_fake.so
# torch's libc10_cuda.so as the fast path calls it (fastpath/torch/torchcuda.c);
# in a directory of its own: only the stand-in torch loads it, by path
$(TB)/fake/c10/libc10_cuda.so: tests/fake/fake_c10.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -fPIC -shared -fvisibility=hidden -Wl,-soname,libc10_cuda.so -o $@ $< -ldl
# the same, stripped: no .symtab, so no target-device symbol to find
$(TB)/fake/c10-stripped/libc10_cuda.so: $(TB)/fake/c10/libc10_cuda.so
	@mkdir -p $(dir $@)
	strip --strip-all -o $@ $<
test-build: $(TB)/fake/c10/libc10_cuda.so $(TB)/fake/c10-stripped/libc10_cuda.so
$(TB)/gpu/libcupti_min.so: tests/gpu/cupti_min.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Wno-unused-parameter -I. -I$(CUDA_HOME)/include -fPIC -shared -o $@ $< -ldl -lpthread
gpu-build: $(TB)/gpu/libcupti_min.so
# Driver shims whose launch entry point calls another one by name
# (tests/integration/nestshim.c): preloaded after trlat, and installed as
# libcuda.so.1 in front of the fake driver (renamed libfakecuda.so).
NEST := $(TB)/nestshim
NEST_LIBS := $(TB)/lib/libnestshim_ptsz.so $(TB)/lib/libnestshim_legacy.so
NEST_CUDA := $(NEST)/ptsz/libcuda.so.1 $(NEST)/legacy/libcuda.so.1
$(NEST_LIBS): $(TB)/lib/libnestshim_%.so: tests/integration/nestshim.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(if $(filter ptsz,$*),-DNEST_PTSZ) -fPIC -shared -o $@ $<
$(NEST)/libfakecuda.so: tests/fake/fake_cuda.c
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) -fPIC -shared -fvisibility=hidden -Wl,-soname,libfakecuda.so -Wl,-Bsymbolic-functions \
	  -o $@ $< -lpthread
$(NEST_CUDA): $(NEST)/%/libcuda.so.1: tests/integration/nestshim.c $(NEST)/libfakecuda.so
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CFLAGS) $(if $(filter ptsz,$*),-DNEST_PTSZ) -fPIC -shared -Wl,-soname,libcuda.so.1 -o $@ $< \
	  -L$(abspath $(NEST)) -Wl,-rpath,$(abspath $(NEST)) -Wl,--no-as-needed -lfakecuda
test-build: $(NEST_LIBS) $(NEST_CUDA)
