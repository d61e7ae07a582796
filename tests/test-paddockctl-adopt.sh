#!/bin/bash
# test-paddockctl-adopt.sh — sessions across a daemon killed with SIGKILL, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The daemon is killed with SIGKILL while host-profile sessions run. A
# session whose supervisor (its keeper) died too while the daemon was away
# comes back "stopped" with an exit status that says "unknown" (D-Bus -2),
# never -1, which reads as "still running".

# shellcheck source=paddockctl-lib.sh
source "$(dirname "$0")/paddockctl-lib.sh" "$@"

field ()
{
  "$CTL" --json status "$1" >"$tmp/field.json" 2>/dev/null || return 1
  json "$tmp/field.json" "$2"
}
state_is () { [[ "$(field "$1" 'd["state"]')" == "$2" ]]; }
record () { json "$tmp/state/sessions/$1/session.json" "d.get('$2', 0)"; }
start_daemon ()
{
  "$DAEMON" --state-dir "$tmp/state" >>"$tmp/daemon.log" 2>&1 &
  daemon_pid=$!
  wait_for 10 "$CTL" ports list
}
kill_daemon ()
{
  kill -KILL "$daemon_pid" 2>/dev/null || true
  wait "$daemon_pid" 2>/dev/null || true
  daemon_pid=""
}
alive () { kill -0 "$1" 2>/dev/null; }
gone () { ! alive "$1"; }

mkdir -p "$tmp/ws"
ws=$(realpath "$tmp/ws")

# ---- a session whose keeper died while no daemon watched ------------------------
run "$tmp/create.json" "$tmp/create.err" --json create --workspace "$ws" --profile host -- sleep 600
dead_id=$(json "$tmp/create.json" 'd["id"]' 2>/dev/null || true)
if [[ $rc == 0 && -n "$dead_id" ]] && wait_for 10 state_is "$dead_id" running; then
  ok "a host session runs"
else
  not_ok "a host session runs" "$(cat "$tmp/create.json" "$tmp/create.err")"
fi
dead_agent=$(record "$dead_id" pid)
dead_keeper=$(record "$dead_id" keeper_pid)
check "its record names its agent and its keeper" test "$dead_agent" -gt 0 -a "$dead_keeper" -gt 0

kill_daemon
# The supervisor dies while the daemon is away, and its agent with it.
kill -KILL "$dead_keeper" "$dead_agent" 2>/dev/null || true
check "the keeper and the agent are gone" wait_for 5 sh -c "! kill -0 $dead_keeper 2>/dev/null && ! kill -0 $dead_agent 2>/dev/null"

if start_daemon; then ok "a new daemon starts"; else not_ok "a new daemon starts" "$(tail -20 "$tmp/daemon.log")"; fi
check "the session whose supervisor died is stopped" wait_for 10 state_is "$dead_id" stopped
check "its exit status is unknown in JSON" test "$(field "$dead_id" 'd["exit_status"]')" == unknown
run "$tmp/status.out" "$tmp/status.err" status "$dead_id"
check "paddockctl status says exit_status: unknown" grep -q '^exit_status: unknown$' "$tmp/status.out"
"$CTL" --json list >"$tmp/list.json" 2>/dev/null || true
check "ListSessions' exit-status is not -1" \
  test "$(json "$tmp/list.json" "[s['exit_status'] for s in d['sessions'] if s['id'] == '$dead_id'][0]")" == unknown
check "Session1.ExitStatus is -2" \
  sh -c "gdbus call --session -d org.paddock.Daemon -o /org/paddock/Daemon/session/$dead_id \
           -m org.freedesktop.DBus.Properties.Get org.paddock.Session1 ExitStatus | grep -q -- '-2'"
check "it can be destroyed" sh -c "\"$CTL\" destroy $dead_id >/dev/null"

echo "1..$n"
