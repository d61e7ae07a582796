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
# that user's reach: reach-lib.sh makes the tree reachable in a mount
# namespace of this run alone, changing no permission of the user's own.
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

# A tree inside a private folder is made reachable first (reach-lib.sh).
# shellcheck source=reach-lib.sh
source "$(dirname "$(readlink -f "$0")")/reach-lib.sh"
reach_trees "$1" "$0" "$@"

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
