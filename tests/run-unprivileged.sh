#!/bin/bash
# run-unprivileged.sh — run a test program as an unprivileged user made for it
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Real users are not root: suites that depend on what the kernel lets a
# process do run a second time through this script. As root it creates the
# user "paddock-test" (once) and drops to it with setpriv, clearing every
# capability. As anyone else the plain run already is the unprivileged run,
# so this one skips rather than count the same run twice.
#
# A clone inside a private folder (a home of mode 0700 or 0750) is out of
# that user's reach. The tree is then made reachable in a mount namespace
# of this run alone: a tmpfs covers the outermost private folder above it
# and the tree is bound back at its own path, so every absolute path the
# build recorded still holds, nothing of the private folder but the tree is
# shown, and no permission of the user's own folders is changed.
#
# Skips are valid TAP for meson's 'tap' protocol: the plan "1..0 # SKIP why"
# and exit 0 (meson counts any other exit of a TAP test as an error); run
# by hand without --tap among the arguments a skip exits 77.

set -euo pipefail

TEST_USER=${PADDOCK_TEST_USER:-paddock-test}

if [ "$#" -lt 1 ]; then
    echo "usage: $0 PROGRAM [ARG…]" >&2
    exit 2
fi

tap_mode=false
for arg in "$@"; do [ "$arg" = --tap ] && tap_mode=true; done

skip ()
{
    echo "1..0 # SKIP $*"
    if $tap_mode; then exit 0; else exit 77; fi
}

if [ "$(id -u)" -ne 0 ]; then
    skip "already unprivileged (uid $(id -u)): the plain run covers it"
fi

if ! id -u "$TEST_USER" >/dev/null 2>&1; then
    if ! useradd --system --no-create-home --home-dir /nonexistent \
                 --shell /usr/sbin/nologin "$TEST_USER" >&2; then
        skip "could not create the user $TEST_USER"
    fi
fi

drop=(setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --init-groups
      --inh-caps=-all --bounding-set=-all --)

# The folders the test reads: the program's own, the source and the build
# tree (tests/meson.build sets both roots), outermost first, none twice.
trees=()
for dir in "$(dirname "$(readlink -f "$1")")" "${PADDOCK_SOURCE_ROOT:-}" "${PADDOCK_BUILD_ROOT:-}"; do
    [ -n "$dir" ] && [ -d "$dir" ] && trees+=("$(readlink -f "$dir")")
done
mapfile -t trees < <(printf '%s\n' "${trees[@]}" | sort -u |
                     awk 'NR == 1 || index($0, last "/") != 1 { print; last = $0 }')

unreachable ()
{
    local tree
    for tree in "${trees[@]}"; do
        "${drop[@]}" test -x "$tree" || return 0
    done
    return 1
}

# The outermost folder above $1 (never $1 itself) that the test user
# cannot traverse; nothing when every folder above it is open.
private_ancestor ()
{
    local path="" part
    local -a parts
    IFS=/ read -ra parts <<<"${1#/}"
    for part in "${parts[@]:0:${#parts[@]}-1}"; do
        path="$path/$part"
        if ! "${drop[@]}" test -x "$path"; then
            echo "$path"
            return
        fi
    done
}

if unreachable; then
    if [ -z "${PADDOCK_TEST_REACH_NS:-}" ]; then
        command -v unshare >/dev/null || skip "unshare (util-linux) is missing and a folder above the tree is private"
        exec unshare --mount --propagation private env PADDOCK_TEST_REACH_NS=1 "$0" "$@"
    fi
    # In this run's own mount namespace: keep a handle on each tree, cover
    # each private folder above them with an empty tmpfs, and bind the
    # trees back where they were.
    declare -A handle=() covered=()
    for tree in "${trees[@]}"; do
        exec {fd}<"$tree"
        handle[$tree]=$fd
    done
    for tree in "${trees[@]}"; do
        top=$(private_ancestor "$tree")
        [ -n "$top" ] || continue
        [ -n "${covered[$top]:-}" ] && continue
        mount -t tmpfs -o mode=0755,size=1m paddock-test-reach "$top"
        covered[$top]=1
    done
    for tree in "${trees[@]}"; do
        fd=${handle[$tree]}
        if [ ! -d "$tree" ]; then
            mkdir -p "$tree"
            # --no-canonicalize: the handle names the tree itself; its path
            # now leads into the tmpfs.
            mount --no-canonicalize --bind "/proc/self/fd/$fd" "$tree"
        fi
        exec {fd}<&-
    done
    unreachable && skip "$TEST_USER cannot reach ${trees[*]} even with the private folders above them covered"
    unset PADDOCK_TEST_REACH_NS
fi

if ! "${drop[@]}" test -x "$1"; then
    skip "$TEST_USER cannot run $1"
fi

home=$(mktemp -d /tmp/paddock-test-home.XXXXXX)
chown "$TEST_USER:" "$home"
trap 'rm -rf "$home"' EXIT

# A fresh login environment for the user: nothing of root's leaks in
# except what the test harness itself set.
"${drop[@]}" env HOME="$home" XDG_STATE_HOME="$home/.local/state" \
    XDG_RUNTIME_DIR="$home" USER="$TEST_USER" LOGNAME="$TEST_USER" "$@"
