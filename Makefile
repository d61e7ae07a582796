# Paddock — the two set-up commands: `make run` and `make test`.
#
# Both install the missing Debian packages of tools/debian-packages.txt
# (apt-get; sudo when not root), configure build/ when needed, and build.

BUILDDIR      ?= build
ASAN_BUILDDIR ?= build-asan
MESON_ARGS    ?=

# LeakSanitizer stays on; the suppressions name leaks of system libraries
# (fontconfig, GTK's type system) that live for the life of the process.
SANITIZER_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_odr_violation=0 \
                LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
                UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

.PHONY: all deps build run test test-asan bench clean

all: build

deps:
	@tools/install-deps.sh

$(BUILDDIR)/build.ninja:
	meson setup $(BUILDDIR) $(MESON_ARGS)

build: deps $(BUILDDIR)/build.ninja
	ninja -C $(BUILDDIR)

run: build
	@tools/run.sh $(BUILDDIR)

test: build
	meson test -C $(BUILDDIR) --print-errorlogs
	$(MAKE) --no-print-directory test-asan

# The same suites again in an AddressSanitizer + UBSan build.
$(ASAN_BUILDDIR)/build.ninja:
	meson setup $(ASAN_BUILDDIR) $(MESON_ARGS) -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug

test-asan: deps $(ASAN_BUILDDIR)/build.ninja
	ninja -C $(ASAN_BUILDDIR)
	$(SANITIZER_ENV) meson test -C $(ASAN_BUILDDIR) --print-errorlogs --timeout-multiplier 3

# Figures for BENCHMARKS.md; not tests.
bench: build
	bench/run-all.sh $(BUILDDIR)

clean:
	rm -rf $(BUILDDIR) $(ASAN_BUILDDIR)
