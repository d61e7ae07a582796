#!/bin/bash
# test-paddockctl-adopt.sh — sessions across a daemon killed with SIGKILL, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The daemon is killed with SIGKILL while host-profile sessions run. A
# session whose supervisor (its keeper) died too while the daemon was away
# comes back "stopped" with an exit status that says "unknown" (D-Bus -2),
# never -1, which reads as "still running"; one whose agent ended while no
# daemon was there, as its keeper saw it end; one whose keeper still runs
# is adopted: the same processes, running, its scrollback from before and
# what it wrote meanwhile, input, attach, Exec, Stop and Destroy.

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
  "$DAEMON" --port-range "$PORT_RANGE" --state-dir "$tmp/state" >>"$tmp/daemon.log" 2>&1 &
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

# ---- an impostor on the keeper's socket is not believed ---------------------------
# Another process of the user binds the session's socket path while no
# daemon runs and offers a terminal: the new daemon talks only to the
# keeper it pinned (SO_PEERCRED), so it adopts nothing and ends what is
# left of the session, as for a keeper that cannot hand it over.
run "$tmp/create.json" "$tmp/create.err" --json create --workspace "$ws" --profile host -- sleep 600
fake_id=$(json "$tmp/create.json" 'd["id"]' 2>/dev/null || true)
check "a host session runs (to be impersonated)" wait_for 10 state_is "$fake_id" running
check "its folder is 0700" test "$(stat -c %a "$tmp/state/sessions/$fake_id")" == 700
fake_agent=$(record "$fake_id" pid)
kill_daemon
"$PYTHON" - "$tmp/state/sessions/$fake_id/keeper.sock" "$tmp/impostor.ready" <<'PY' &
import array, os, pty, socket, struct, sys
path = sys.argv[1]
os.unlink(path)
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(path); s.listen(1)
open(sys.argv[2], "w").close()
master, slave = pty.openpty()
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
while True:
    c, _ = s.accept()
    event = struct.pack("=IiiiQ", 4, os.getpid(), 0, 0, 1)
    c.sendmsg([event], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [b.fileno(), master]))])
    c.close()
PY
impostor=$!
background_pids+=("$impostor")
wait_for 5 test -e "$tmp/impostor.ready" || true
PADDOCK_TEST_LEFTOVER_GRACE_MS=0 "$DAEMON" --port-range "$PORT_RANGE" --state-dir "$tmp/state" >>"$tmp/daemon.log" 2>&1 &
daemon_pid=$!
wait_for 10 "$CTL" ports list || true
check "the impostor's offer is refused: the session is not adopted" wait_for 10 state_is "$fake_id" stopped
check "…the daemon says whose socket it was" grep -q "is not its keeper's" "$tmp/daemon.log"
check "…and what was left of the session is ended" wait_for 5 gone "$fake_agent"
kill "$impostor" 2>/dev/null || true
check "it can be destroyed" sh -c "'$CTL' destroy '$fake_id' >/dev/null"

# ---- an agent that ended while no daemon was there: its keeper said how -----------
run "$tmp/create.json" "$tmp/create.err" --json create --workspace "$ws" --profile host -- \
  sh -c "while [ ! -e '$tmp/end' ]; do sleep 0.05; done; exit 3"
ended_id=$(json "$tmp/create.json" 'd["id"]' 2>/dev/null || true)
check "a host session that will end while no daemon is there runs" wait_for 10 state_is "$ended_id" running
ended_keeper=$(record "$ended_id" keeper_pid)
kill_daemon
touch "$tmp/end"
check "its agent ends and its keeper with it" wait_for 5 gone "$ended_keeper"
if start_daemon; then ok "a new daemon starts"; else not_ok "a new daemon starts" "$(tail -20 "$tmp/daemon.log")"; fi
check "the session is exited, as its keeper saw" wait_for 10 state_is "$ended_id" exited
check "with the agent's own exit status" test "$(field "$ended_id" 'd["exit_status"]')" == 3
check "it can be destroyed" sh -c "'$CTL' destroy '$ended_id' >/dev/null"

# ---- a host session adopted by the next daemon -----------------------------------
# The agent prints a line, waits for a file, prints another, then counts
# each line of input it gets: what it wrote before, what it wrote while no
# daemon was there, and that it still reads its terminal.
cat >"$tmp/agent.sh" <<'SH'
echo "before-kill"
while [ ! -e "$1" ]; do sleep 0.05; done
echo "while-away"
while read -r line; do echo "got:$line"; done
SH
run "$tmp/create.json" "$tmp/create.err" --json create --workspace "$ws" --profile host -- sh "$tmp/agent.sh" "$tmp/go"
id=$(json "$tmp/create.json" 'd["id"]' 2>/dev/null || true)
logs_have () { "$CTL" logs --raw "$id" 2>/dev/null | grep -q -- "$1"; }
if [[ $rc == 0 && -n "$id" ]] && wait_for 10 logs_have before-kill; then
  ok "a host session runs and writes"
else
  not_ok "a host session runs and writes" "$(cat "$tmp/create.json" "$tmp/create.err")"
fi
agent=$(record "$id" pid)
keeper=$(record "$id" keeper_pid)
check "the session's keeper holds it on a socket in its folder, 0600" \
  test "$(stat -c %a "$tmp/state/sessions/$id/keeper.sock" 2>/dev/null)" == 600

# A viewer attached when the daemon dies: its input from a pipe kept open.
mkfifo "$tmp/viewer.in"
exec 7<>"$tmp/viewer.in"
"$CTL" attach "$id" <"$tmp/viewer.in" >"$tmp/viewer.out" 2>"$tmp/viewer.err" &
viewer=$!
check "a viewer is attached" wait_for 5 grep -q before-kill "$tmp/viewer.out"
# And the viewer of a `create --attach`: its session's proxy is made on the
# daemon's unique name (no GetNameOwner on the way to the first output),
# which the next daemon does not have.
mkfifo "$tmp/cviewer.in"
exec 8<>"$tmp/cviewer.in"
"$CTL" create --attach --workspace "$ws" --profile host -- sh "$tmp/agent.sh" "$tmp/go" \
  <"$tmp/cviewer.in" >"$tmp/cviewer.out" 2>"$tmp/cviewer.err" &
cviewer=$!
check "create --attach shows its session" wait_for 5 grep -q before-kill "$tmp/cviewer.out"
cid=$(sed -n 's/^paddockctl: session \([0-9a-f]*\)$/\1/p' "$tmp/cviewer.err" | head -n 1)

# An Exec in flight when the daemon dies: its caller hears it was lost.
"$CTL" --json exec "$id" -- sh -c "echo \$\$ >'$tmp/exec.pid'; echo exec-running; exec sleep 600" \
  >"$tmp/inflight.json" 2>"$tmp/inflight.err" &
inflight=$!
check "an Exec runs in it" wait_for 10 test -s "$tmp/exec.pid"
exec_pid=$(cat "$tmp/exec.pid" 2>/dev/null || echo 0)

kill_daemon
touch "$tmp/go"
inflight_rc=0
wait_for 10 gone "$inflight" || true
wait "$inflight" 2>/dev/null || inflight_rc=$?
check "the Exec in flight ends, not hung, and fails (exit 1)" test "$inflight_rc" == 1
check "…with org.paddock.Error.Lost: its status is unknown" grep -q org.paddock.Error.Lost "$tmp/inflight.json" "$tmp/inflight.err"
check "…and its command was ended with its daemon" wait_for 5 gone "$exec_pid"
sleep 0.3
check "the agent still runs with no daemon" alive "$agent"
check "its keeper still runs with no daemon" alive "$keeper"

if start_daemon; then ok "a new daemon starts"; else not_ok "a new daemon starts" "$(tail -20 "$tmp/daemon.log")"; fi
check "the session is running again" wait_for 10 state_is "$id" running
check "the same agent process" test "$(field "$id" 'd["pid"]')" == "$agent"
check "its exit status reads as running (null)" test "$(field "$id" 'd["exit_status"]')" == None
check "the scrollback from before the kill is there" wait_for 5 logs_have before-kill
check "the output written while no daemon was there is there" wait_for 5 logs_have while-away
check "the viewer attached before the kill is attached again" wait_for 10 grep -q 'attached to .* again' "$tmp/viewer.err"
check "…and shows what was written while no daemon was there" wait_for 5 grep -q while-away "$tmp/viewer.out"
check "…once, not the scrollback replayed again" test "$(grep -c before-kill "$tmp/viewer.out")" == 1
echo from-viewer >&7
check "…and its input reaches the agent" wait_for 5 grep -q got:from-viewer "$tmp/viewer.out"
kill -INT "$viewer" 2>/dev/null || true
wait "$viewer" 2>/dev/null || true
exec 7>&-
check "the viewer create --attach made is attached again" wait_for 10 grep -q 'attached to .* again' "$tmp/cviewer.err"
check "…and shows what was written while no daemon was there" wait_for 5 grep -q while-away "$tmp/cviewer.out"
echo from-cviewer >&8
check "…and its input reaches its agent" wait_for 5 grep -q got:from-cviewer "$tmp/cviewer.out"
kill -INT "$cviewer" 2>/dev/null || true
wait "$cviewer" 2>/dev/null || true
exec 8>&-
check "its session can be destroyed" sh -c "[ -n '$cid' ] && '$CTL' destroy '$cid' >/dev/null"
check "input reaches the adopted agent" "$CTL" send "$id" $'hello-again\n'
check "and its answer comes back" wait_for 5 logs_have got:hello-again
printf 'piped\n' | "$CTL" attach "$id" >"$tmp/attach.out" 2>"$tmp/attach.err" &
attach_pid=$!
check "paddockctl attach shows the scrollback from before" wait_for 5 grep -q before-kill "$tmp/attach.out"
check "paddockctl attach sends input that is answered" wait_for 5 grep -q got:piped "$tmp/attach.out"
kill -INT "$attach_pid" 2>/dev/null || true
wait "$attach_pid" 2>/dev/null || true
run "$tmp/exec.json" "$tmp/exec.err" --json exec "$id" -- sh -c 'echo exec-after-adopt'
check "a new Exec runs in the adopted session" grep -q exec-after-adopt "$tmp/exec.json"
run "$tmp/stop.out" "$tmp/stop.err" stop "$id"
check "Stop works on the adopted session" test "$rc" == 0
check "it is stopped" wait_for 10 state_is "$id" stopped
check "its agent is gone" wait_for 5 gone "$agent"
check "its keeper is gone" wait_for 5 gone "$keeper"
check "its keeper's socket is gone" test ! -e "$tmp/state/sessions/$id/keeper.sock"
check "Destroy works on it" sh -c "'$CTL' destroy '$id' >/dev/null"

# ---- its leases: a port the adopted agent bound stays the session's -------------
run "$tmp/create.json" "$tmp/create.err" --json create --workspace "$ws" --profile host --port web -- \
  "$PYTHON" -c 'import os, socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(os.environ["PADDOCK_PORT_WEB"]))); s.listen(4); print("bound", flush=True)
while True: time.sleep(1)'
lease_id=$(json "$tmp/create.json" 'd["id"]' 2>/dev/null || true)
web=$(json "$tmp/create.json" '[p["port"] for p in d["ports"] if p["name"] == "web"][0]' 2>/dev/null || echo 0)
lease_state () { "$CTL" --json ports list | json /dev/stdin "[l['state'] for l in d['leases'] if l['port'] == $web]"; }
id=$lease_id
if wait_for 10 logs_have bound; then ok "a host agent binds its leased port"; else not_ok "a host agent binds its leased port" "$(cat "$tmp/create.err")"; fi
before=$(lease_state)
kill_daemon
if start_daemon; then ok "a new daemon starts"; else not_ok "a new daemon starts" "$(tail -20 "$tmp/daemon.log")"; fi
check "the session with a lease is adopted" wait_for 10 state_is "$lease_id" running
check "its lease is as before the kill ($before)" test "$(lease_state)" == "$before"
check "…listed as the session's" test "$("$CTL" --json ports list | json /dev/stdin "[l['session'] for l in d['leases'] if l['port'] == $web]")" == "['$lease_id']"
run "$tmp/stop.out" "$tmp/stop.err" stop "$lease_id"
check "once it is stopped, the daemon takes its port back (held)" wait_for 10 sh -c "[ \"\$('$CTL' --json ports list | '$PYTHON' -c 'import json,sys; print([l[\"state\"] for l in json.load(sys.stdin)[\"leases\"] if l[\"port\"] == $web])')\" = \"['held']\" ]"
check "Destroy releases it" sh -c "'$CTL' destroy '$lease_id' >/dev/null && ! '$CTL' --json ports list | grep -q '\"port\":$web,'"

# ---- --replace: a new daemon takes the name, the old one hands the session over ---
run "$tmp/create.json" "$tmp/create.err" --json create --workspace "$ws" --profile host -- \
  sh -c 'echo before-replace; while read -r line; do echo "got:$line"; done'
id=$(json "$tmp/create.json" 'd["id"]' 2>/dev/null || true)
check "a host session runs before --replace" wait_for 10 logs_have before-replace
agent=$(record "$id" pid)
old_daemon=$daemon_pid
"$DAEMON" --port-range "$PORT_RANGE" --replace --state-dir "$tmp/state" >>"$tmp/daemon.log" 2>&1 &
daemon_pid=$!
check "the replaced daemon exits" wait_for 10 gone "$old_daemon"
wait "$old_daemon" 2>/dev/null || true
check "the new daemon serves" wait_for 10 "$CTL" ports list
check "the session is running under the new daemon" wait_for 10 state_is "$id" running
check "the same agent process" test "$(field "$id" 'd["pid"]')" == "$agent"
check "its scrollback from before is there" logs_have before-replace
check "input reaches it" "$CTL" send "$id" $'after-replace\n'
check "and its answer comes back" wait_for 5 logs_have got:after-replace
check "Destroy works on it" sh -c "'$CTL' destroy '$id' >/dev/null"
check "its agent is gone" wait_for 5 gone "$agent"

echo "1..$n"
