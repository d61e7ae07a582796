#!/bin/bash
# run.sh — `make run`: the daemon from the build tree behind the app
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later

set -euo pipefail

builddir=${1:-build}
ctl="$builddir/app/paddockctl"

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
    echo "make run: no display (DISPLAY and WAYLAND_DISPLAY are unset), so no window; the same from a terminal: $ctl ports lease --name web ; $ctl ports list"
    exit 0
fi

# No session bus at all (a bare X server, say): give the app and the daemon
# a private one that ends with the app.
if [ -z "${DBUS_SESSION_BUS_ADDRESS:-}" ] &&
   [ ! -S "${XDG_RUNTIME_DIR:-/nonexistent}/bus" ]; then
    PADDOCK_PRIVATE_BUS=1 exec dbus-run-session -- "$0" "$@"
fi

has_daemon() {
    dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.NameHasOwner string:org.paddock.Daemon 2>/dev/null |
        grep -q 'boolean true'
}

if ! has_daemon; then
    log="$builddir/paddockd.log"
    # The agent presets of the source tree: nothing is installed yet.
    PADDOCK_AGENTS_DIR="${PADDOCK_AGENTS_DIR:-$(cd "$(dirname "$0")/.." && pwd)/data/agents}" \
        "$builddir/daemon/paddockd" >"$log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do
        has_daemon && break
        kill -0 "$pid" 2>/dev/null || { echo "make run: paddockd failed to start, see $log" >&2; cat "$log" >&2; exit 1; }
        sleep 0.05
    done
    if [ -n "${PADDOCK_PRIVATE_BUS:-}" ]; then
        echo "make run: started paddockd (pid $pid, log $log) on a private bus; it ends with the window"
    else
        echo "make run: started paddockd (pid $pid, log $log); it keeps your sessions and leases after the window closes — stop it with: kill $pid"
    fi
fi

# The app's settings schema (window state, recent folders) as compiled in
# the build tree, ahead of any installed one.
export GSETTINGS_SCHEMA_DIR="$builddir/data${GSETTINGS_SCHEMA_DIR:+:$GSETTINGS_SCHEMA_DIR}"
exec "$builddir/app/paddock"
