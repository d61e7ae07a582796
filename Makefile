# Paddock — the two set-up commands: `make run` and `make test`.
#
# Both install the missing Debian packages of tools/debian-packages.txt
# (apt-get; sudo when not root), configure build/ when needed, and build.
# `make deb` builds the Debian package (debian/) into deb/.

BUILDDIR      ?= build
ASAN_BUILDDIR ?= build-asan
PORTABLE_BUILDDIR ?= build-portable
MESON_ARGS    ?=

# LeakSanitizer stays on; the suppressions name leaks of system libraries
# (fontconfig, GTK's type system) that live for the life of the process.
SANITIZER_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_odr_violation=0 \
                LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
                UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

DEB_OUTDIR    ?= deb

.PHONY: all deps build run test test-asan test-portable bench bench-peers deb clean

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
	$(MAKE) --no-print-directory test-portable

# The same suites again in an AddressSanitizer + UBSan build.
$(ASAN_BUILDDIR)/build.ninja:
	meson setup $(ASAN_BUILDDIR) $(MESON_ARGS) -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug

test-asan: deps $(ASAN_BUILDDIR)/build.ninja
	ninja -C $(ASAN_BUILDDIR)
	$(SANITIZER_ENV) meson test -C $(ASAN_BUILDDIR) --print-errorlogs --timeout-multiplier 3

# The portable core (docs/PORTING.md): no Linux executor, no UI, so what
# another system would build: sessions on the host executor, every layer
# unenforced; what needs the helper skips (TAP "1..0 # SKIP"). Plain
# only, and without the benchmarks: it must compile (werror) and pass.
# Without the -unprivileged twins, which run the same code as another
# user and which the plain build runs already: they would double the
# portable build's test time (about 2.5 of 5 minutes on 2 cores).
$(PORTABLE_BUILDDIR)/build.ninja:
	meson setup $(PORTABLE_BUILDDIR) $(MESON_ARGS) -Dlinux_executor=false -Dui=false -Dbench=false

test-portable: deps $(PORTABLE_BUILDDIR)/build.ninja
	ninja -C $(PORTABLE_BUILDDIR)
	meson test -C $(PORTABLE_BUILDDIR) --print-errorlogs \
	  $$(meson test -C $(PORTABLE_BUILDDIR) --list 2>/dev/null | sed -n 's|^[^ ]* / ||p' | grep -v -- '-unprivileged$$')

# Figures for BENCHMARKS.md; not tests.
bench: build
	bench/run-all.sh $(BUILDDIR)

# The user's path (paddockctl, D-Bus) beside bubblewrap, portserver and
# sandbox-runtime, installed when missing; BENCH_ROUNDS rounds (10).
BENCH_ROUNDS ?= 10
bench-peers: build
	bench/peers/bench-peers.sh $(BUILDDIR) $(BENCH_ROUNDS)

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
	rm -rf $(BUILDDIR) $(ASAN_BUILDDIR) $(PORTABLE_BUILDDIR) $(DEB_OUTDIR)
