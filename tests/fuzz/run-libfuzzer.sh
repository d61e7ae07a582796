#!/bin/bash
# run-libfuzzer.sh — build and run every fuzz target with libFuzzer for a bounded time
#
#   run-libfuzzer.sh BUILDDIR SECONDS [NAME…]
#
# BUILDDIR is a clang build (make configures build-fuzz/ with CC=clang and
# the ASan+UBSan options); tests/fuzz/meson.build defines a libfuzzer-NAME
# there for each target. Each runs SECONDS (make test: ~12, make fuzz:
# longer) on one core, starting from tests/fuzz/corpus/NAME/ (read only)
# plus BUILDDIR/fuzz-corpus/NAME/, where libFuzzer keeps what it found
# between runs. A crash, leak, timeout or failed assertion fails the run;
# its input is kept in BUILDDIR/fuzz-artifacts/NAME/ — fix the parser, then
# add the input to tests/fuzz/corpus/NAME/ so that every build replays it.
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later

set -euo pipefail

builddir=${1:?usage: run-libfuzzer.sh BUILDDIR SECONDS [NAME…]}
seconds=${2:?usage: run-libfuzzer.sh BUILDDIR SECONDS [NAME…]}
shift 2
here=$(cd "$(dirname "$0")" && pwd)

names=("$@")
if [[ ${#names[@]} -eq 0 ]]; then
  for file in "$here"/fuzz-*.c; do
    name=$(basename "$file" .c)
    name=${name#fuzz-}
    [[ $name == replay ]] || names+=("$name")
  done
fi

targets=()
for name in "${names[@]}"; do targets+=("tests/fuzz/libfuzzer-$name"); done
if ! ninja -C "$builddir" "${targets[@]}"; then
  echo "run-libfuzzer: the libFuzzer targets did not build in $builddir (is it a clang build? clang and libclang-rt-14-dev are in tools/debian-packages.txt)" >&2
  exit 1
fi

failed=()
for name in "${names[@]}"; do
  corpus="$builddir/fuzz-corpus/$name"
  artifacts="$builddir/fuzz-artifacts/$name/"
  mkdir -p "$corpus" "$artifacts"
  echo "run-libfuzzer: $name for ${seconds}s"
  # -timeout: one input taking a second is a hang for parsers this small;
  # -max_len: the proxy's head limit is 32 KiB.
  if ! "$builddir/tests/fuzz/libfuzzer-$name" -max_total_time="$seconds" -timeout=5 \
         -rss_limit_mb=1024 -max_len=33000 -print_final_stats=1 \
         -artifact_prefix="$artifacts" "$corpus" "$here/corpus/$name" \
         >"$builddir/fuzz-$name.log" 2>&1; then
    failed+=("$name")
    tail -n 60 "$builddir/fuzz-$name.log" | sed 's/^/  /'
    echo "run-libfuzzer: $name FAILED; the input is in $artifacts (log: $builddir/fuzz-$name.log)"
  else
    grep -E '^stat::(number_of_executed_units|new_units_added)' "$builddir/fuzz-$name.log" | sed "s/^/  $name /" || true
  fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "run-libfuzzer: failed: ${failed[*]}"
  exit 1
fi
echo "run-libfuzzer: ${#names[@]} targets, ${seconds}s each, nothing found"
