# mcpping: `make demo` pings the bundled demo server; `make test` runs every
# suite (C, C under ASan+UBSan, C under valgrind, Python, Node). Both install
# what they need first (`make deps`).

CC ?= cc
SOURCES := $(shell cat csrc/sources.txt)
HEADERS := $(wildcard csrc/include/*.h csrc/include/mcpping/*.h csrc/src/*/*.h)
PKG_CFLAGS := $(shell pkg-config --cflags libuv libcjson 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs libuv libcjson 2>/dev/null || echo -luv -lcjson)
PKG_LIBS += -lm
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -Icsrc/include -Icsrc/src $(PKG_CFLAGS) $(WARN)
CFLAGS ?= -O2 -g
SAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
TEST_SOURCES := tests/c/runner.c $(wildcard tests/c/test_*.c)
BENCH_SOURCES := $(wildcard bench/engine/*.c)
PYTHON ?= python3
# The second Python environment, with mcp 1.x (see test-python-mcp1).
MCP1_VENV := build/venv-mcp1
MCP1_TESTS := test_sdk.py test_guard.py test_instrument.py test_sdk_majors.py test_frameworks_mcp1.py
# The Python suite runs in host mode (the asyncio loop runs the runtime);
# this core runs again in thread mode, the fallback (MCPPING_HOST_MODE=0), ~40 s.
THREAD_MODE_TESTS := test_ping.py test_requests.py test_backpressure.py test_keepalive.py \
  test_isolation.py test_hosts.py::test_one_host_loop \
  test_hosts.py::test_two_loops_on_two_threads_each_get_their_own_items \
  test_hosts.py::test_children_forked_while_connections_are_busy_work_and_spare_the_parent \
  test_sdk.py::test_server_pings_are_answered_while_the_client_loop_is_blocked \
  test_host_mode.py::test_mcpping_host_mode_0_keeps_the_runtime_on_its_thread_and_says_why
export PIP_ROOT_USER_ACTION := ignore
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: all deps demo test test-c check-layers test-asan test-tsan test-valgrind test-python test-python-mcp1 test-node \
        bench bench-engine bench-detector clean format examples fuzz fuzz-build failmalloc wheel test-packaging install \
        test-prebuild portability

all: build/libmcpping.a build/test-c

build/libmcpping.a: $(SOURCES) $(HEADERS) csrc/sources.txt
	@mkdir -p build/obj
	@rm -f $@
	for s in $(SOURCES); do \
	  $(CC) $(BASE_CFLAGS) $(CFLAGS) -fPIC -c $$s -o build/obj/$$(basename $$s .c).o || exit 1; \
	done
	ar rcs $@ $(addprefix build/obj/,$(notdir $(SOURCES:.c=.o)))

# The tests' own copy of the library, with the hooks of csrc/src/engine/test_hooks.h
# (their variables are in tests/c/test_hooks.c); libmcpping.a has none.
TEST_HOOKS := -DMCPP_TEST_HOOKS
build/libmcpping-test.a: $(SOURCES) $(HEADERS) csrc/sources.txt
	@mkdir -p build/obj-test
	@rm -f $@
	for s in $(SOURCES); do \
	  $(CC) $(BASE_CFLAGS) $(CFLAGS) $(TEST_HOOKS) -c $$s -o build/obj-test/$$(basename $$s .c).o || exit 1; \
	done
	ar rcs $@ $(addprefix build/obj-test/,$(notdir $(SOURCES:.c=.o)))

build/test-c: $(TEST_SOURCES) tests/c/task.h build/libmcpping-test.a
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(TEST_HOOKS) -Itests/c $(TEST_SOURCES) build/libmcpping-test.a $(PKG_LIBS) -lpthread -o $@

build/test-c-asan: $(TEST_SOURCES) tests/c/task.h $(SOURCES) $(HEADERS)
	@mkdir -p build
	$(CC) $(BASE_CFLAGS) $(SAN_FLAGS) $(TEST_HOOKS) -Itests/c $(TEST_SOURCES) $(SOURCES) $(PKG_LIBS) -lpthread -o $@

# ThreadSanitizer needs clang and a build of its own; the runtime and
# driver tests are the ones with threads.
TSAN_CC ?= clang
TSAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=thread
build/test-c-tsan: $(TEST_SOURCES) tests/c/task.h $(SOURCES) $(HEADERS)
	@mkdir -p build
	$(TSAN_CC) $(BASE_CFLAGS) $(TSAN_FLAGS) $(TEST_HOOKS) -Itests/c $(TEST_SOURCES) $(SOURCES) $(PKG_LIBS) -lpthread -o $@

build/bench-engine: $(BENCH_SOURCES) build/libmcpping.a build/responder
	$(CC) $(BASE_CFLAGS) -O2 -g $(BENCH_SOURCES) build/libmcpping.a $(PKG_LIBS) -lpthread -lm -o $@

# The fastest MCP server we can write, for every benchmark.
build/responder: tests/peers/responder.c
	@mkdir -p build
	$(CC) -O2 -Wall -Wextra $< -o $@

# The C example (examples/c_ping.c); `make examples` builds it.
build/example-c-ping: examples/c_ping.c build/libmcpping.a
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $< build/libmcpping.a $(PKG_LIBS) -lpthread -o $@

examples: build/example-c-ping

deps:
	./scripts/install-deps.sh

test-c: build/test-c check-layers
	MCPP_SOURCE_DIR=$(CURDIR) ./build/test-c

# The C tree's layers (engine <- driver <- runtime <- app), no include,
# header or call circle, every public sub-header compiling alone
# (csrc/src/README.md).
check-layers:
	$(PYTHON) scripts/check_layers.py

test-asan: build/test-c-asan
	MCPP_SOURCE_DIR=$(CURDIR) ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ./build/test-c-asan

# die_after_fork=0: runtime_after_fork_child_starts_fresh starts a thread
# in a forked child on purpose (that is what it tests).
test-tsan: build/test-c-tsan
	MCPP_SOURCE_DIR=$(CURDIR) TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0 \
	  ./build/test-c-tsan runtime conn wrap

# Forked test children stay under valgrind; a leak or error makes the child
# exit 99, which the runner counts as a failure.
test-valgrind: build/test-c
	MCPP_SOURCE_DIR=$(CURDIR) MCPP_UNDER_VALGRIND=1 valgrind -q --leak-check=full \
	  --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
	  --error-exitcode=99 --child-silent-after-fork=no ./build/test-c

test-python: $(MCP1_VENV)/.stamp
	$(PYTHON) -m pip install -q -r requirements-dev.txt
	$(PYTHON) -m pip install -q --no-build-isolation .
	# test_readme runs the mcp 1.x snippets with the other environment's mcpping.
	$(MCP1_VENV)/bin/python -m pip install -q --no-build-isolation .
	cd tests/python && $(PYTHON) -m pytest -q
	cd tests/python && MCPPING_HOST_MODE=0 $(PYTHON) -m pytest -q $(THREAD_MODE_TESTS)
	$(MAKE) test-python-mcp1

# The SDK adapter on mcp 1.x, in an environment of its own (mcp 2.x is the
# main one): the adapter and instrumentation tests again, and the frameworks
# that pin mcp<2. The mcp 2.x tests also spawn its legacy time server.
$(MCP1_VENV)/.stamp: tests/python/requirements-mcp1.txt
	$(PYTHON) -m venv $(MCP1_VENV)
	$(MCP1_VENV)/bin/python -m pip install -q -r tests/python/requirements-mcp1.txt
	touch $@

test-python-mcp1: $(MCP1_VENV)/.stamp
	$(MCP1_VENV)/bin/python -m pip install -q --no-build-isolation .
	MCPP_MCP2_PYTHON=$$($(PYTHON) -c 'import sys; print(sys.executable)') && export MCPP_MCP2_PYTHON && \
	  cd tests/python && ../../$(MCP1_VENV)/bin/python -m pytest -q $(MCP1_TESTS)

# C users: `make install PREFIX=/usr/local` installs libmcpping.so (SONAME
# libmcpping.so.$(SOVERSION), exporting exactly csrc/libmcpping.map: the
# functions of mcpping.h), libmcpping.a, the header and mcpping.pc.
VERSION := 0.1.0
SOVERSION := 0
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
SHARED := build/libmcpping.so.$(VERSION)

$(SHARED): build/libmcpping.a csrc/libmcpping.map
	$(CC) -shared -Wl,-soname,libmcpping.so.$(SOVERSION) -Wl,--version-script=csrc/libmcpping.map \
	  -Wl,--no-undefined $(addprefix build/obj/,$(notdir $(SOURCES:.c=.o))) $(PKG_LIBS) -lpthread -o $@

install: $(SHARED) build/libmcpping.a
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCLUDEDIR)' '' \
	  'Name: mcpping' 'Description: the liveness layer for MCP connections' 'Version: $(VERSION)' \
	  'Requires: libuv' 'Requires.private: libcjson' \
	  'Libs: -L$${libdir} -lmcpping' 'Libs.private: -lpthread -lm' 'Cflags: -I$${includedir}' \
	  >$(DESTDIR)$(LIBDIR)/pkgconfig/mcpping.pc
	install -m 644 csrc/include/mcpping.h $(DESTDIR)$(INCLUDEDIR)/
	install -d $(DESTDIR)$(INCLUDEDIR)/mcpping
	install -m 644 csrc/include/mcpping/*.h $(DESTDIR)$(INCLUDEDIR)/mcpping/
	install -m 755 $(SHARED) $(DESTDIR)$(LIBDIR)/
	ln -sf libmcpping.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmcpping.so.$(SOVERSION)
	ln -sf libmcpping.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libmcpping.so
	install -m 644 build/libmcpping.a $(DESTDIR)$(LIBDIR)/

# The self-contained abi3 manylinux wheel (scripts/build-wheel.sh) in
# build/wheel/, and the packaging tests (tests/packaging/*.py): the wheel
# runs with the system's libuv/libcjson hidden and no compiler; the sdist
# builds with the Debian packages and says what to install without them;
# make install's library exports only mcpping.h's functions.
wheel:
	PYTHON=$(PYTHON) ./scripts/build-wheel.sh

test-packaging: wheel
	cd tests/packaging && $(PYTHON) -m pytest -q -p no:cacheprovider

# Cross-compiles the engine for macOS (x86_64, arm64) and Windows x86_64,
# and the driver+runtime for macOS, with zig cc (scripts/portability.sh).
# Compile-checked only: nothing of it runs here.
portability:
	PYTHON=$(PYTHON) ./scripts/portability.sh

# The npm tarball's prebuilt addon (tests/packaging/prebuild.test.js): npm
# pack in a clean copy, an --ignore-scripts install with no compiler, the
# demo on Node 18/20/22/24 (the `node` npm package, kept in build/node-versions).
test-prebuild:
	node --test --test-timeout=900000 tests/packaging/

# Builds the addon from source against Node's own headers (no download;
# `npm run build` too, since npm install keeps a fitting prebuild) and runs every
# tests/node/*.test.js; a test that hangs fails after two minutes. The limit
# holds for a whole file too: the reaper's starts 100 client processes (84 s
# on an idle 2-core machine, past 120 s with both cores busy), so it runs on
# its own, its tests bounded by their own timeouts (400 s, 240 s).
# The tests run in host mode (the default: Node's loop runs the runtime's);
# NODE_THREAD_TESTS, a core subset (~20 s), run again in thread mode, the
# fallback (MCPPING_HOST_MODE=0).
NODE_TESTS := $(filter-out tests/node/reaper.test.js,$(wildcard tests/node/*.test.js))
NODE_THREAD_TESTS := tests/node/peer.test.js tests/node/transport.test.js tests/node/proc.test.js \
	tests/node/exit.test.js tests/node/isolation.test.js tests/node/host_mode.test.js
test-node:
	npm_config_nodedir=/usr npm install --no-audit --no-fund
	npm_config_nodedir=/usr npm run --silent build
	node --test --test-timeout=120000 $(NODE_TESTS)
	MCPPING_HOST_MODE=0 node --test --test-timeout=120000 $(NODE_THREAD_TESTS)
	node --test --test-timeout=900000 tests/node/reaper.test.js

# The C builds first, two at a time (each is one long compiler run), then
# the suites one after another: they time servers, so they run alone.
test: deps
	$(MAKE) -j2 build/test-c build/test-c-asan build/test-c-tsan fuzz-build
	$(MAKE) test-c
	$(MAKE) test-asan
	$(MAKE) test-tsan
	$(MAKE) test-valgrind
	$(MAKE) test-soak
	$(MAKE) fuzz FUZZ_SECONDS=10
	$(MAKE) test-python
	$(MAKE) test-packaging
	$(MAKE) test-node
	$(MAKE) test-prebuild
	$(MAKE) portability

# libFuzzer harnesses (tests/fuzz/), built with clang under ASan+UBSan.
# `make fuzz FUZZ_SECONDS=N` runs each for N seconds from its committed
# seed corpus (new inputs go to build/fuzz/corpus-*, the seeds stay as
# they are); a crash leaves its input in build/fuzz/ and fails the run.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 10
FUZZ_HARNESSES := lines scan engine sse envelope config http_answer http_url demo http_session http_response
FUZZ_COMMON := -O1 -g -fno-omit-frame-pointer -fno-sanitize-recover=undefined
FUZZ_FLAGS := $(FUZZ_COMMON) -fsanitize=fuzzer,address,undefined

# Allocation failure, nghttp2's failmalloc way: the out_of_memory tests fail
# the k-th allocation of a representative session for every k (client,
# server and 2026 sessions, the line splitter, RTT statistics), under ASan
# and under valgrind: no crash, no leak.
failmalloc: build/test-c-asan build/test-c
	MCPP_SOURCE_DIR=$(CURDIR) ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ./build/test-c-asan out_of_memory
	MCPP_SOURCE_DIR=$(CURDIR) MCPP_UNDER_VALGRIND=1 valgrind -q --leak-check=full \
	  --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
	  --error-exitcode=99 --child-silent-after-fork=no ./build/test-c out_of_memory

# The library is compiled once for every harness (fuzzer-no-link: the
# coverage hooks without a second main), not once per harness.
FUZZ_LIB_FLAGS := $(FUZZ_COMMON) -fsanitize=fuzzer-no-link,address,undefined
build/fuzz/libmcpping-fuzz.a: $(SOURCES) $(HEADERS) csrc/sources.txt
	@mkdir -p build/fuzz/obj
	@rm -f $@
	for s in $(SOURCES); do \
	  $(FUZZ_CC) $(BASE_CFLAGS) $(FUZZ_LIB_FLAGS) -c $$s -o build/fuzz/obj/$$(basename $$s .c).o || exit 1; \
	done
	ar rcs $@ $(addprefix build/fuzz/obj/,$(notdir $(SOURCES:.c=.o)))

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c build/fuzz/libmcpping-fuzz.a
	$(FUZZ_CC) $(BASE_CFLAGS) $(FUZZ_FLAGS) $< build/fuzz/libmcpping-fuzz.a $(PKG_LIBS) -lpthread -o $@

fuzz-build: $(patsubst %,build/fuzz/fuzz_%,$(FUZZ_HARNESSES))

fuzz: fuzz-build
	@for h in $(FUZZ_HARNESSES); do \
	  mkdir -p build/fuzz/corpus-$$h; \
	  echo "fuzz_$$h: $(FUZZ_SECONDS) s"; \
	  ./build/fuzz/fuzz_$$h -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -artifact_prefix=build/fuzz/$$h- build/fuzz/corpus-$$h tests/fuzz/corpus/$$h \
	    2>build/fuzz/$$h.log || { tail -40 build/fuzz/$$h.log; exit 1; }; \
	  grep -E 'stat::number_of_executed_units' build/fuzz/$$h.log; \
	done

demo: deps
	$(PYTHON) -m pip install -q --no-build-isolation .
	$(PYTHON) -m mcpping --demo

bench-engine: build/bench-engine
	./build/bench-engine $(BENCH_ARGS)

# Side-by-side benchmarks (bench/run.py): mcpping next to the official SDKs
# and a bare pipe, in steady mode; writes bench/RESULTS.md, RESULTS.json and
# latency_cdf.png. `make bench BENCH_OPTS="--quick --rows ping,idle"` for a
# short partial run (written to bench/out/); bench/compare.py compares two.
BENCH_PROGRAMS := build/responder build/bench-c-ping build/bench-idle-cost build/bench-idle-floor

build/bench-c-ping: bench/clients/c_ping.c build/libmcpping.a
	$(CC) $(BASE_CFLAGS) -O2 -g $< build/libmcpping.a $(PKG_LIBS) -lpthread -lm -o $@

build/bench-idle-cost: bench/clients/idle_cost.c bench/clients/idle_windows.h build/libmcpping.a
	$(CC) $(BASE_CFLAGS) -O2 -g $< build/libmcpping.a $(PKG_LIBS) -lpthread -lm -o $@

build/bench-idle-floor: bench/clients/idle_floor.c bench/clients/idle_windows.h
	$(CC) $(BASE_CFLAGS) -O2 -g $< $(PKG_LIBS) -o $@

# What the stdio process check costs: `./build/bench-proc-state-cost 1000 20`.
build/bench-proc-state-cost: bench/clients/proc_state_cost.c build/libmcpping.a
	$(CC) $(BASE_CFLAGS) -O2 -g $< build/libmcpping.a $(PKG_LIBS) -lpthread -o $@

bench: deps $(BENCH_PROGRAMS)
	$(PYTHON) -m pip install -q --no-build-isolation .
	$(PYTHON) bench/run.py $(BENCH_OPTS)

format:
	clang-format -i csrc/include/*.h csrc/include/mcpping/*.h csrc/src/*/*.[ch] tests/c/*.[ch] bench/engine/*.c

clean:
	rm -rf build python/build *.egg-info python/*.egg-info

# The soak (tests/soak/README.md): SOAK_CONNS real soak-servers at once for
# SOAK_SECONDS, with traffic and random faults, through the runtime API.
# `make test-soak` is the short version `make test` runs (with the 10,000
# lifecycle cycles and a 16 MiB flood soak, both below); `make soak-asan`
# a short run with the library and driver under ASan+UBSan.
.PHONY: soak test-soak soak-asan
SOAK_CONNS ?= 1000
SOAK_SECONDS ?= 600
SOAK_DRIVER := tests/soak/soak.c tests/soak/check.c tests/soak/audit.c tests/soak/wire.c
SOAK_HEADERS := tests/soak/soak.h tests/soak/wire.h

build/soak-server: tests/soak/server.c tests/soak/wire.c tests/soak/wire.h
	@mkdir -p build
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g $(PKG_CFLAGS) $(WARN) tests/soak/server.c tests/soak/wire.c $(PKG_LIBS) -o $@

build/soak: $(SOAK_DRIVER) $(SOAK_HEADERS) build/libmcpping.a
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Itests/soak $(SOAK_DRIVER) build/libmcpping.a $(PKG_LIBS) -lpthread -o $@

build/soak-asan: $(SOAK_DRIVER) $(SOAK_HEADERS) $(SOURCES) $(HEADERS)
	@mkdir -p build
	$(CC) $(BASE_CFLAGS) $(SAN_FLAGS) -Itests/soak $(SOAK_DRIVER) $(SOURCES) $(PKG_LIBS) -lpthread -o $@

soak: build/soak build/soak-server
	./build/soak --conns $(SOAK_CONNS) --seconds $(SOAK_SECONDS)

test-soak: build/soak build/soak-server build/soak-cycles build/soak-flood build/flood-server build/soak-handoff build/responder
	./build/soak --conns 100 --seconds 60
	./build/soak-cycles --cycles 10000 --epoch 1000
	./build/soak-flood --mib 16 --server build/flood-server
	./build/soak-handoff build/responder 100000

# The lifecycle soak (tests/soak/cycles.c): spawn/kill/restart cycles in
# hosts SIGKILLed every 1,000. The 10,000 of issue 23 take ~20 s, so
# `make test-soak` runs them all; `make soak-cycles SOAK_CYCLES=N` any
# number.
SOAK_CYCLES ?= 10000
build/soak-cycles: tests/soak/cycles.c tests/soak/audit.c tests/soak/soak.h build/libmcpping.a
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Itests/soak tests/soak/cycles.c tests/soak/audit.c build/libmcpping.a $(PKG_LIBS) -lpthread -o $@

.PHONY: soak-cycles
soak-cycles: build/soak-cycles build/soak-server
	./build/soak-cycles --cycles $(SOAK_CYCLES) --epoch 1000

soak-asan: build/soak-asan build/soak-server
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ./build/soak-asan --conns 50 --seconds 20 --server build/soak-server

# The flood soak (tests/soak/flood.c, issue 23): stdout, stderr and ping
# floods of FLOOD_MIB each, the host blocked and slow, max_pending_bytes
# 1 MiB; RSS growth must stay within 3 times the cap plus a fixed
# allowance, with nothing lost or reordered and no false stale.
# `make soak-flood-asan` is a 16 MiB run under ASan+UBSan.
.PHONY: soak-flood soak-flood-asan
FLOOD_MIB ?= 256

build/flood-server: tests/soak/flood_server.c tests/soak/flood.h
	@mkdir -p build
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g $(WARN) -Itests/soak tests/soak/flood_server.c -o $@

build/soak-flood: tests/soak/flood.c tests/soak/flood.h build/libmcpping.a
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -Itests/soak tests/soak/flood.c build/libmcpping.a $(PKG_LIBS) -lpthread -o $@

build/soak-flood-asan: tests/soak/flood.c tests/soak/flood.h $(SOURCES) $(HEADERS)
	@mkdir -p build
	$(CC) $(BASE_CFLAGS) $(SAN_FLAGS) -Itests/soak tests/soak/flood.c $(SOURCES) $(PKG_LIBS) -lpthread -o $@

# The host-mode hand-off soak (issue 21): 10^6 requests (1 MiB answers
# among them), manual and server pings, the host stalling 0-200 ms every
# 5000 requests; every answer once and in order, every ping settled once.
# HANDOFF_MESSAGES to change the count; soak-handoff-tsan, -asan the same
# under the sanitizers.
HANDOFF_MESSAGES ?= 1000000
.PHONY: soak-handoff soak-handoff-tsan soak-handoff-asan
build/soak-handoff: tests/soak/handoff.c build/libmcpping.a
	$(CC) $(BASE_CFLAGS) $(CFLAGS) tests/soak/handoff.c build/libmcpping.a $(PKG_LIBS) -lpthread -o $@
build/soak-handoff-tsan: tests/soak/handoff.c $(SOURCES) $(HEADERS)
	@mkdir -p build
	$(TSAN_CC) $(BASE_CFLAGS) $(TSAN_FLAGS) tests/soak/handoff.c $(SOURCES) $(PKG_LIBS) -lpthread -o $@
build/soak-handoff-asan: tests/soak/handoff.c $(SOURCES) $(HEADERS)
	@mkdir -p build
	$(CC) $(BASE_CFLAGS) $(SAN_FLAGS) tests/soak/handoff.c $(SOURCES) $(PKG_LIBS) -lpthread -o $@
soak-handoff: build/soak-handoff build/responder
	./build/soak-handoff build/responder $(HANDOFF_MESSAGES)
soak-handoff-tsan: build/soak-handoff-tsan build/responder
	TSAN_OPTIONS=halt_on_error=1 ./build/soak-handoff-tsan build/responder $(HANDOFF_MESSAGES)
soak-handoff-asan: build/soak-handoff-asan build/responder
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 ./build/soak-handoff-asan build/responder $(HANDOFF_MESSAGES)

soak-flood: build/soak-flood build/flood-server
	./build/soak-flood --mib $(FLOOD_MIB) --server build/flood-server

soak-flood-asan: build/soak-flood-asan build/flood-server
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ./build/soak-flood-asan --mib 16 --server build/flood-server

# The detector benchmark (bench/detector): generated traces through the
# engine with explicit time, fixed threshold vs corroboration. Not in
# `make test`. `make bench-detector DETECTOR_ARGS="--days 5 --trials 200"`.
# Built on the test library: its baseline is the fixed-threshold detector,
# kept behind a test hook (csrc/src/engine/test_hooks.h).
build/bench-detector: bench/detector/detector.c tests/c/test_hooks.c build/libmcpping-test.a
	$(CC) $(BASE_CFLAGS) -O2 -g $(TEST_HOOKS) -Icsrc/src $< tests/c/test_hooks.c build/libmcpping-test.a $(PKG_LIBS) -lpthread -lm -o $@

bench-detector: build/bench-detector
	./build/bench-detector $(DETECTOR_ARGS)
