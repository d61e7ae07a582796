#!/bin/bash
# bench-adopt.sh — how long a new paddockd takes to adopt the sessions a killed one left
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# For N sessions (default 1, 10 and 50) of each profile in PROFILES
# (default "host safe": a host agent under its keeper, a sandbox under its
# keeper) running under the daemon, the daemon is killed with SIGKILL and
# a new one started: the figure is the time from the new daemon's start to
# every session listed "running" again with its main pid (adopted from its
# keeper: the same process),
# as a client sees it through paddockctl (polled: a paddockctl and a python3
# each time, some 50 ms of the figure), median of R rounds (default 5).
# Peer: the same new daemon's start with no session to adopt (the floor:
# bus name, state dir, registry), polled the same way, in the same rounds.
#
# Usage: [PROFILES="host safe"] bench-adopt.sh [BUILDDIR] [ROUNDS] [N…]

set -euo pipefail

builddir=$(cd "${1:-build}" && pwd)
rounds=${2:-5}
shift $(( $# > 2 ? 2 : $# ))
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1 10 50)
read -r -a profiles <<<"${PROFILES:-host safe}"
CTL="$builddir/app/paddockctl"
DAEMON="$builddir/daemon/paddockd"
[ -x "$CTL" ] && [ -x "$DAEMON" ] || { echo "bench-adopt: build first ($CTL, $DAEMON)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/paddock-adopt.XXXXXX")
mkdir -p "$tmp/ws"
unset DISPLAY WAYLAND_DISPLAY
bus_pid=""
daemon_pid=""
cleanup ()
{
  if [ -n "$daemon_pid" ]; then
    for id in $("$CTL" --json list 2>/dev/null | python3 -c 'import json,sys; [print(s["id"]) for s in json.load(sys.stdin)["sessions"]]' 2>/dev/null); do
      "$CTL" destroy "$id" >/dev/null 2>&1 || true
    done
    kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
  fi
  [ -n "$bus_pid" ] && kill "$bus_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT


# A bus and a port pool of our own, as the tests' daemons have (tests/tap-lib.sh).
# shellcheck source=../../tests/tap-lib.sh
source "$(dirname "$0")/../../tests/tap-lib.sh"
private_session_bus "$tmp" || { echo "bench-adopt: dbus-daemon did not start" >&2; exit 1; }
pick_port_range

now_ns () { date +%s%N; }
start_daemon () { "$DAEMON" --port-range "$PORT_RANGE" --state-dir "$1" >>"$tmp/daemon.log" 2>&1 & daemon_pid=$!; }
kill_daemon () { kill -KILL "$daemon_pid"; wait "$daemon_pid" 2>/dev/null || true; daemon_pid=""; }
# How many sessions are running with a pid, as paddockctl lists them.
running () { "$CTL" --json list 2>/dev/null | python3 -c 'import json,sys
print(sum(1 for s in json.load(sys.stdin)["sessions"] if s["state"] == "running" and s["pid"]))' 2>/dev/null || echo -1; }
# ms from now until COMMAND succeeds (polled every 5 ms).
time_until () { local t0; t0=$(now_ns); until "$@"; do sleep 0.005; done; echo $(( ($(now_ns) - t0) / 1000000 )); }
all_running () { [ "$(running)" -ge "$1" ]; }
# Adopted, not merely listed as running while an earlier daemon's leftovers
# are ended: the new daemon said so for each, since log line $2.
all_adopted () { [ "$(tail -n +"$2" "$tmp/daemon.log" | grep -c 'adopted from its keeper')" -ge "$1" ] && all_running "$1"; }
serving () { "$CTL" ports list >/dev/null 2>&1; }
median () { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "bench-adopt: new daemon start → every session a SIGKILLed daemon left running again (adopted), $rounds rounds, load $(cut -d' ' -f1 /proc/loadavg)"
printf '%8s %9s %16s %22s\n' profile sessions "adopted (ms)" "empty start, peer (ms)"
for profile in "${profiles[@]}"; do
for n in "${counts[@]}"; do
  adopt=()
  empty=()
  state="$tmp/state-$profile-$n"
  start_daemon "$state"
  time_until serving >/dev/null
  for _ in $(seq "$n"); do
    "$CTL" create --workspace "$tmp/ws" --profile "$profile" -- sleep 3600 >/dev/null
  done
  time_until all_running "$n" >/dev/null
  # A safe session's keeper holds it once its record is on disk, a moment
  # after "running".
  sleep 0.5
  for _ in $(seq "$rounds"); do
    kill_daemon
    from=$(( $(wc -l <"$tmp/daemon.log") + 1 ))
    start_daemon "$state"
    adopt+=("$(time_until all_adopted "$n" "$from")")
    kill_daemon
    start_daemon "$tmp/state-empty"
    # The same poll as above (paddockctl list, python3), of nothing.
    empty+=("$(time_until all_running 0)")
    kill_daemon
    start_daemon "$state"
    time_until all_running "$n" >/dev/null
  done
  printf '%8s %9s %16s %22s\n' "$profile" "$n" "$(printf '%s\n' "${adopt[@]}" | median)" "$(printf '%s\n' "${empty[@]}" | median)"
  for id in $("$CTL" --json list | python3 -c 'import json,sys; [print(s["id"]) for s in json.load(sys.stdin)["sessions"]]'); do
    "$CTL" destroy "$id" >/dev/null
  done
  kill "$daemon_pid"; wait "$daemon_pid" 2>/dev/null || true; daemon_pid=""
done
done
