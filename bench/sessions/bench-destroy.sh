#!/bin/bash
# bench-destroy.sh — Destroy of a session whose stage holds many files, and the daemon's answers meanwhile
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# A safe session's agent makes FILES empty files in its stage (an npm
# install's worth by default), then `paddockctl destroy` is timed, while
# another client runs `paddockctl list` every 20 ms: its slowest answer
# during the destroy is how long the daemon served nobody else. Each round
# a fresh private bus, daemon and state dir; medians of ROUNDS.
# PADDOCK_BENCH_OTHER_DAEMON=PATH alternates another build's paddockd in
# the same rounds (before/after in one run; the same paddockctl).
#
# Usage: bench-destroy.sh [BUILDDIR] [ROUNDS] [FILES]

set -euo pipefail

builddir=$(cd "${1:-build}" && pwd)
rounds=${2:-5}
files=${3:-100000}
here=$(cd "$(dirname "$0")" && pwd)
CTL="$builddir/app/paddockctl"
daemons=("$builddir/daemon/paddockd")
[ -n "${PADDOCK_BENCH_OTHER_DAEMON:-}" ] && daemons+=("$PADDOCK_BENCH_OTHER_DAEMON")
[ -x "$CTL" ] && [ -x "${daemons[0]}" ] || { echo "bench-destroy: build first ($CTL)" >&2; exit 1; }
[ -x "$builddir/daemon/sandbox/paddock-sandbox" ] || { echo "bench-destroy: no paddock-sandbox (a portable build)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/paddock-bench-destroy.XXXXXX")
bus_pid="" daemon_pid="" poller_pid=""
cleanup ()
{
  set +e
  [ -n "$poller_pid" ] && kill "$poller_pid" 2>/dev/null
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
  [ -n "$bus_pid" ] && kill "$bus_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
unset DISPLAY WAYLAND_DISPLAY
# shellcheck source=../../tests/tap-lib.sh
source "$here/../../tests/tap-lib.sh"
private_session_bus "$tmp" || { echo "bench-destroy: dbus-daemon did not start" >&2; exit 1; }
pick_port_range 200
now_ns () { date +%s%N; }
median () { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "bench-destroy: $(nproc) cores, kernel $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "destroy of a safe session with $files files in its stage; the slowest \`paddockctl list\` answered meanwhile"
declare -A destroy_ms worst_ms
for round in $(seq "$rounds"); do
  for i in "${!daemons[@]}"; do
    rm -rf "$tmp/state" "$tmp/ws" "$tmp/stop"
    mkdir -p "$tmp/ws"
    "${daemons[$i]}" --port-range "$PORT_RANGE" --state-dir "$tmp/state" >>"$tmp/daemon.log" 2>&1 &
    daemon_pid=$!
    wait_for 10 "$CTL" ports list || { echo "bench-destroy: the daemon did not start" >&2; exit 1; }
    id=$("$CTL" create --workspace "$tmp/ws" --profile safe -- \
           sh -c "mkdir many && cd many && seq 1 $files | xargs touch && echo MADE-THEM; exec sleep 600")
    wait_for 600 sh -c "\"$CTL\" logs $id | grep -q MADE-THEM" || { echo "bench-destroy: the agent did not make its files" >&2; exit 1; }
    (
      worst=0
      while [ ! -e "$tmp/stop" ]; do
        t0=$(now_ns); "$CTL" list >/dev/null 2>&1 || true; t1=$(now_ns)
        (( (t1 - t0) / 1000 > worst )) && worst=$(( (t1 - t0) / 1000 ))
        sleep 0.02
      done
      echo "$worst" >"$tmp/worst"
    ) &
    poller_pid=$!
    sleep 0.3
    t0=$(now_ns); "$CTL" destroy "$id" >/dev/null; t1=$(now_ns)
    sleep 0.3
    touch "$tmp/stop"; wait "$poller_pid"; poller_pid=""
    d=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
    w=$(awk -v u="$(cat "$tmp/worst")" 'BEGIN { printf "%.1f", u / 1e3 }')
    destroy_ms[$i]+="$d "; worst_ms[$i]+="$w "
    printf 'round %d, daemon %d (%s): destroy %s ms, slowest list meanwhile %s ms\n' "$round" "$i" "${daemons[$i]}" "$d" "$w"
    kill "$daemon_pid"; wait "$daemon_pid" 2>/dev/null || true; daemon_pid=""
  done
done
for i in "${!daemons[@]}"; do
  printf 'daemon %d (%s): destroy median %s ms, slowest list meanwhile median %s ms\n' "$i" "${daemons[$i]}" \
    "$(tr ' ' '\n' <<<"${destroy_ms[$i]}" | grep . | median)" "$(tr ' ' '\n' <<<"${worst_ms[$i]}" | grep . | median)"
done
