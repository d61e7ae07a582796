#!/bin/bash
# run-all.sh — `make bench`: every benchmark, each printing Paddock next to its peer
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later

set -euo pipefail

builddir=$(cd "${1:-build}" && pwd)
export PADDOCK_BUILD_ROOT="$builddir"

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, kernel $(uname -r), $(date -u +%Y-%m-%d)"
for bench in "$builddir"/bench/*/bench-*; do
    [ -f "$bench" ] && [ -x "$bench" ] || continue
    echo
    "$bench" 2> >(grep -v -e 'fd limit' -e 'Serving org.paddock' -e 'Quitting on signal' -e 'No baseline for' >&2)
done
echo
"$(dirname "$0")/sessions/bench-adopt.sh" "$builddir"
echo
"$(dirname "$0")/sessions/bench-soak.sh" "$builddir"
echo
"$(dirname "$0")/sessions/bench-destroy.sh" "$builddir"
