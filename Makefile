# Paddock — the two set-up commands: `make run` and `make test`.
#
# `make test` also runs the fuzz targets under libFuzzer for about a
# minute; `make fuzz` runs them for longer.
#
# Both install the missing Debian packages of tools/debian-packages.txt
# (apt-get; sudo when not root), configure build/ when needed, and build.
# `make deb` builds the Debian package (debian/) into deb/.

BUILDDIR      ?= build
ASAN_BUILDDIR ?= build-asan
MESON_ARGS    ?=

# LeakSanitizer stays on; the suppressions name leaks of system libraries
# (fontconfig, GTK's type system) that live for the life of the process.
SANITIZER_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_odr_violation=0 \
                LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
                UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

DEB_OUTDIR    ?= deb

# The fuzz targets under libFuzzer (tests/fuzz/README.md): a clang build of
# its own, only the fuzzers built in it; make test gives each target
# FUZZ_SECONDS (about a minute for all), make fuzz FUZZ_LONG_SECONDS.
FUZZ_BUILDDIR     ?= build-fuzz
FUZZ_SECONDS      ?= 12
FUZZ_LONG_SECONDS ?= 600

.PHONY: all deps build run test test-asan test-fuzz fuzz bench deb clean

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
	$(MAKE) --no-print-directory test-fuzz

# The same suites again in an AddressSanitizer + UBSan build.
$(ASAN_BUILDDIR)/build.ninja:
	meson setup $(ASAN_BUILDDIR) $(MESON_ARGS) -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug

test-asan: deps $(ASAN_BUILDDIR)/build.ninja
	ninja -C $(ASAN_BUILDDIR)
	$(SANITIZER_ENV) meson test -C $(ASAN_BUILDDIR) --print-errorlogs --timeout-multiplier 3

# Only the parsers and the fuzz targets are compiled here (ninja builds
# the libfuzzer-* targets it is asked for), so the GTK app is left out.
$(FUZZ_BUILDDIR)/build.ninja:
	CC=clang meson setup $(FUZZ_BUILDDIR) $(MESON_ARGS) -Db_sanitize=address,undefined -Db_lundef=false \
	  -Dbuildtype=debug -Dui=false -Dbench=false -Dman=disabled

test-fuzz: deps $(FUZZ_BUILDDIR)/build.ninja
	$(SANITIZER_ENV) tests/fuzz/run-libfuzzer.sh $(FUZZ_BUILDDIR) $(FUZZ_SECONDS)

fuzz: deps $(FUZZ_BUILDDIR)/build.ninja
	$(SANITIZER_ENV) tests/fuzz/run-libfuzzer.sh $(FUZZ_BUILDDIR) $(FUZZ_LONG_SECONDS)

# Figures for BENCHMARKS.md; not tests.
bench: build
	bench/run-all.sh $(BUILDDIR)

# The package, built as a distribution would (dpkg-buildpackage, from
# debian/, without the test suites, warnings not errors), then checked by
# lintian, whose errors fail the target. dpkg-buildpackage writes into the
# parent folder; the results are moved into $(DEB_OUTDIR)/.
deb:
	@tools/install-deps.sh tools/debian-packages.txt tools/debian-packages-deb.txt
	dpkg-buildpackage -us -uc -b
	@set -e; version=$$(dpkg-parsechangelog -S Version); \
	  mkdir -p $(DEB_OUTDIR); \
	  for f in ../paddock_$${version}_* ../paddock-dbgsym_$${version}_*; do \
	    if [ -e "$$f" ]; then mv "$$f" $(DEB_OUTDIR)/; fi; \
	  done; \
	  lintian --fail-on error --info $(DEB_OUTDIR)/paddock_$${version}_*.changes; \
	  ls -l $(DEB_OUTDIR)/paddock_$${version}_*.deb

clean:
	rm -rf $(BUILDDIR) $(ASAN_BUILDDIR) $(FUZZ_BUILDDIR) $(DEB_OUTDIR)
