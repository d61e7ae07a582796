#!/bin/bash
# bench-soak.sh — paddockd's memory and descriptors over many create/destroy cycles
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# A daemon that keeps a little of every session it ever ran grows without
# bound for a user who leaves it up for weeks. This creates and destroys
# N sessions (default 500) through paddockctl, the user's path, on a
# private bus and state folder, alternating safe and host profiles, and
# prints the daemon's RSS and open descriptors after the first 10 cycles
# (the warm-up: caches, the spare sandbox, GLib's pools) and every 100
# after, then what each cycle kept on average after the warm-up: right
# after the last (destroyed sessions stay on the bus for a minute) and
# once they have left it.
#
# Usage: bench-soak.sh [BUILDDIR] [CYCLES]

set -euo pipefail

builddir=$(cd "${1:-build}" && pwd)
cycles=${2:-500}
CTL="$builddir/app/paddockctl"
DAEMON="$builddir/daemon/paddockd"
[ -x "$CTL" ] && [ -x "$DAEMON" ] || { echo "bench-soak: build first ($CTL, $DAEMON)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/paddock-soak.XXXXXX")
ws="$tmp/ws"
mkdir -p "$ws" && echo hello >"$ws/hello.txt"
unset DISPLAY WAYLAND_DISPLAY
bus_pid=""
daemon_pid=""
cleanup ()
{
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
  [ -n "$bus_pid" ] && kill "$bus_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

# A bus and a port pool of our own, as the tests' daemons have (tests/tap-lib.sh).
# shellcheck source=../../tests/tap-lib.sh
source "$(dirname "$0")/../../tests/tap-lib.sh"
private_session_bus "$tmp" || { echo "bench-soak: dbus-daemon did not start" >&2; exit 1; }
pick_port_range
${PADDOCK_SOAK_WRAPPER:-} "$DAEMON" --port-range "$PORT_RANGE" --state-dir "$tmp/state" >"$tmp/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do "$CTL" ports list >/dev/null 2>&1 && break; sleep 0.1; done

rss_kib () { awk '/^VmRSS:/ { print $2 }' "/proc/$daemon_pid/status"; }
fds () { ls "/proc/$daemon_pid/fd" | wc -l; }

echo "bench-soak: $cycles create/destroy cycles through paddockctl (safe and host in turn), load $(cut -d' ' -f1 /proc/loadavg)"
printf '%8s %10s %6s\n' cycle "rss KiB" fds
start_ns=$(date +%s%N)
for i in $(seq 1 "$cycles"); do
  profile=safe
  (( i % 2 == 0 )) && profile=host
  id=$("$CTL" create --workspace "$ws" --profile "$profile" -- sh -c 'echo hi > out.txt') || {
    echo "bench-soak: create failed at cycle $i" >&2; tail -5 "$tmp/daemon.log" >&2; exit 1; }
  "$CTL" destroy "$id" >/dev/null
  if (( i == 10 )); then
    sleep 1
    base_rss=$(rss_kib); base_fds=$(fds)
    printf '%8d %10d %6d   (after the warm-up)\n' "$i" "$base_rss" "$base_fds"
  elif (( i % 100 == 0 )); then
    printf '%8d %10d %6d\n' "$i" "$(rss_kib)" "$(fds)"
  fi
done
sleep 1
end_rss=$(rss_kib); end_fds=$(fds)
elapsed_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
printf '%8s %10d %6d   (1 s after the last)\n' end "$end_rss" "$end_fds"
echo "held per cycle while destroyed sessions linger: $(( (end_rss - base_rss) * 1024 / (cycles - 10) )) bytes of RSS, $(( end_fds - base_fds )) descriptors in all; $(( elapsed_ms / 1000 )).$(( elapsed_ms % 1000 / 100 )) s"
# A destroyed session stays on the bus for 60 s (a late call gets a clear
# NotFound): what stays after that is what the daemon really kept.
sleep "${PADDOCK_SOAK_LINGER:-62}"
late_rss=$(rss_kib); late_fds=$(fds)
printf '%8s %10d %6d   (after the destroyed sessions left the bus)\n' later "$late_rss" "$late_fds"
echo "kept per cycle after the warm-up: $(( (late_rss - base_rss) * 1024 / (cycles - 10) )) bytes of RSS, $(( late_fds - base_fds )) descriptors in all"
