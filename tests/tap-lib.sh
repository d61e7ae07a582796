# tap-lib.sh — the TAP helpers every shell test shares; sourced
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Sourced with the script's arguments. With --tap (how tests/meson.build
# runs the scripts, protocol 'tap') a skip is the TAP plan
# "1..0 # SKIP reason" and exit 0, since meson reports any non-zero exit of
# a TAP test as an error; without it a skip exits 77 (the automake/meson
# convention).
#
# Defines: tap_mode, n, failures; skip, ok, not_ok, check, json (needs
# $PYTHON when called), wait_for, pick_port_range.

tap_mode=false
[[ "${1:-}" == "--tap" ]] && tap_mode=true

skip ()
{
  # After checks ran (a daemon started, say), "1..0" would contradict the
  # "ok" lines already printed, and meson reports such a TAP as an error:
  # the rest is then one skipped check and the plan counts what was said.
  if (( ${n:-0} > 0 )); then
    echo "ok $((n + 1)) # SKIP $*"
    echo "1..$((n + 1))"
    (( ${failures:-0} == 0 )) || exit 1
    if $tap_mode; then exit 0; else exit 77; fi
  fi
  echo "1..0 # SKIP $*"
  if $tap_mode; then exit 0; else exit 77; fi
}

n=0
failures=0

# skip_check DESCRIPTION REASON: one check this machine or build cannot
# make, said as a TAP skip (the script goes on with the others).
skip_check ()
{
  n=$((n + 1))
  echo "ok $n - $1 # SKIP $2"
}

# Whether this build has the Linux executor's helper (a portable build,
# -Dlinux_executor=false, has not: its safe sessions are refused).
have_sandbox ()
{
  [[ -x "${PADDOCK_BUILD_ROOT:-}/daemon/sandbox/paddock-sandbox" ]]
}

ok ()
{
  n=$((n + 1))
  echo "ok $n - $1"
}

not_ok ()
{
  local line
  n=$((n + 1))
  failures=$((failures + 1))
  echo "not ok $n - $1"
  shift
  for line in "$@"; do
    printf '%s\n' "$line" | sed 's/^/#   /'
  done
}

# check DESCRIPTION COMMAND…: ok when COMMAND succeeds. COMMAND runs when
# check does: a condition computed by the caller ("$(…)") is computed once,
# so a wait_for around it waits for nothing; give wait_for a command.
check ()
{
  local description=$1
  shift
  if "$@"; then ok "$description"; else not_ok "$description" "failed: $*"; fi
}

# json FILE EXPR: print a Python expression over the document in FILE (d).
json ()
{
  "$PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# wait_for SECONDS COMMAND…: poll COMMAND every 0.1 s.
wait_for ()
{
  local tries=$(( $1 * 10 ))
  shift
  while (( tries-- > 0 )); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  return 1
}

# pick_port_range [SIZE]: a pool of SIZE (2500) ports for this script's
# daemons, passed as --port-range "$PORT_RANGE" to every paddockd it
# starts (a restarted daemon keeps the pool its leases came from); sets
# PORT_FIRST, PORT_LAST, PORT_RANGE. A registry hands ports out from the
# start of its pool on, so test runs sharing a machine (several at once,
# or the user's own daemon on the default 20000-29999) meet when their
# pools start at the same port: the start is random (and mixed with the
# pid), anywhere from 10000 to below the kernel's ephemeral range, as
# tests/paddock-test-daemon.c picks the C tests' pools.
pick_port_range ()
{
  local size=${1:-2500} low=32768 top
  read -r top _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null && low=$top
  (( low >= 10000 + size )) || low=$((20000 + size))
  PORT_FIRST=$((10000 + ((RANDOM << 15 | RANDOM) ^ $$) % (low - 10000 - size + 1)))
  PORT_LAST=$((PORT_FIRST + size - 1))
  PORT_RANGE="$PORT_FIRST-$PORT_LAST"
}

# private_session_bus DIR: a session bus of the benches' own, listening in
# DIR (which must exist and be removed by the caller), for anyone to own
# any name on; sets bus_pid (for the caller's cleanup to kill) and exports
# DBUS_SESSION_BUS_ADDRESS. Returns 1 if it did not start within 5 s.
private_session_bus ()
{
  local dir=$1
  cat >"$dir/bus.conf" <<CONF
<busconfig><type>session</type><listen>unix:path=$dir/bus</listen>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
CONF
  dbus-daemon --config-file="$dir/bus.conf" --nofork --print-address=1 >"$dir/bus.address" 2>/dev/null &
  bus_pid=$!
  wait_for 5 test -s "$dir/bus.address" || return 1
  DBUS_SESSION_BUS_ADDRESS=$(head -n 1 "$dir/bus.address")
  export DBUS_SESSION_BUS_ADDRESS
}
