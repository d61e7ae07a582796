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
# so this one skips (exit 77) rather than count the same run twice.

set -euo pipefail

TEST_USER=${PADDOCK_TEST_USER:-paddock-test}

if [ "$#" -lt 1 ]; then
    echo "usage: $0 PROGRAM [ARG…]" >&2
    exit 2
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "1..0 # SKIP already unprivileged (uid $(id -u)): the plain run covers it"
    exit 77
fi

if ! id -u "$TEST_USER" >/dev/null 2>&1; then
    if ! useradd --system --no-create-home --home-dir /nonexistent \
                 --shell /usr/sbin/nologin "$TEST_USER" >&2; then
        echo "1..0 # SKIP could not create the user $TEST_USER"
        exit 77
    fi
fi

drop=(setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --init-groups
      --inh-caps=-all --bounding-set=-all --)

if ! "${drop[@]}" test -x "$1"; then
    echo "1..0 # SKIP $TEST_USER cannot reach $1 (a folder on its path is private)"
    exit 77
fi

home=$(mktemp -d /tmp/paddock-test-home.XXXXXX)
chown "$TEST_USER:" "$home"
trap 'rm -rf "$home"' EXIT

# A fresh login environment for the user: nothing of root's leaks in
# except what the test harness itself set.
"${drop[@]}" env HOME="$home" XDG_STATE_HOME="$home/.local/state" \
    XDG_RUNTIME_DIR="$home" USER="$TEST_USER" LOGNAME="$TEST_USER" "$@"
