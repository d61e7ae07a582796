# Paddock — the two set-up commands: `make run` and `make test`.
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

.PHONY: all deps build run test test-asan bench deb clean

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
	  tools/check-deb.sh $(DEB_OUTDIR)/paddock_$${version}_$$(dpkg-architecture -qDEB_HOST_ARCH).deb; \
	  ls -l $(DEB_OUTDIR)/paddock_$${version}_*.deb

clean:
	rm -rf $(BUILDDIR) $(ASAN_BUILDDIR) $(DEB_OUTDIR)
