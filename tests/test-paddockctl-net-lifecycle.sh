#!/bin/bash
# test-paddockctl-net-lifecycle.sh — the network's threads and records across Destroy and daemon exit, and ::1 servers reached through leased ports, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# A slow origin on the host's loopback (it reads a request and never
# answers) stands in for a request in flight. A proxy-mode session's proxy
# runs on a thread of its own: after Destroy the daemon has no more threads
# than before the session; a request still in flight when the daemon gets
# SIGTERM is recorded, and listed after a restart. A proxy held in its stop
# (a test switch) holds up no other call, and what it cut off is recorded
# once it ends, or at the daemon's exit. A server inside a
# none-mode session that listens on [::1]:$PORT only is reached from the
# host through the leased port (127.0.0.1 refuses, the forward tries
# [::1] with an IPv6 socket pid 1 makes inside).

set -euo pipefail

PYTHON=/usr/bin/python3
# Its skip before paddockctl-lib.sh (which sources it again) starts the
# daemon.
# shellcheck source=tap-lib.sh
source "$(dirname "$0")/tap-lib.sh" "$@"
[[ -x "$PYTHON" ]] || skip "python3 is not installed"

# The slow origin, started before the daemon so that its environment can
# name the port. It says "got REQUEST-LINE" on its output (the log, which
# moves with the folder) once a request head arrived.
server_dir=$(mktemp -d "${TMPDIR:-/tmp}/paddock-net-slow.XXXXXX")
"$PYTHON" - "$server_dir" <<'PY' >"$server_dir/log" 2>&1 &
import os, socket, sys, threading, time
d = sys.argv[1]
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
def write(name, value):
    with open(os.path.join(d, name + ".tmp"), "w") as f:
        f.write(value)
    os.rename(os.path.join(d, name + ".tmp"), os.path.join(d, name))
def serve(c):
    data = b""
    while b"\r\n\r\n" not in data:
        b = c.recv(65536)
        if not b:
            return
        data += b
    print("got", data.split(b"\r\n", 1)[0].decode(), flush=True)
    time.sleep(3600)
write("port", str(s.getsockname()[1]))
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
server_pid=$!
trap 'kill $server_pid 2>/dev/null; wait $server_pid 2>/dev/null; rm -rf "$server_dir"' EXIT
for _ in $(seq 50); do [[ -s "$server_dir/port" ]] && break; sleep 0.1; done
port=$(cat "$server_dir/port" 2>/dev/null || true)
# Nothing missing on the machine: a failure, not a skip.
[[ -n "$port" ]] || { echo "Bail out! the loopback test server did not start"; sed "s/^/# /" "$server_dir/log" 2>/dev/null; exit 1; }

export PADDOCK_TEST_PROXY_RESOLVE="slow.test=127.0.0.1"
export PADDOCK_TEST_PROXY_PORTS="$port"

# shellcheck source=paddockctl-lib.sh
source "$(dirname "$0")/paddockctl-lib.sh" "$@"
background_pids+=("$server_pid")
mv "$server_dir" "$tmp/server"
server_dir="$tmp/server"

SANDBOX="$PADDOCK_BUILD_ROOT/daemon/sandbox/paddock-sandbox"
[[ -x "$SANDBOX" ]] || skip "paddock-sandbox is not built"
if ! unshare -Urn true 2>/dev/null; then
  skip "user and network namespaces are unavailable here, so no proxy session can run"
fi

ws="$tmp/workspace"
mkdir "$ws"

cat >"$ws/get.py" <<'PY'
import sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=600) as response:
        print(response.status)
except Exception as e:
    print("failed", e)
PY

threads () { ls /proc/"$daemon_pid"/task | wc -l; }
proxy_threads () { cat /proc/"$daemon_pid"/task/*/comm 2>/dev/null | grep -cx paddock-proxy || true; }
# records ID EXPR: EXPR over the records list (r) of `net ID records --json`.
records ()
{
  "$CTL" --json net "$1" records >"$tmp/records.json" 2>"$tmp/records.err" || return 1
  "$PYTHON" -c 'import json, sys; r = json.load(open(sys.argv[1]))["records"]; print(eval(sys.argv[2]))' \
    "$tmp/records.json" "$2"
}

# proxy_session VAR: a session whose one way out is the proxy, which
# allows slow.test; its id in VAR ("none" when it could not be made).
proxy_session ()
{
  run "$tmp/out" "$tmp/err" --json create --workspace "$ws" --net proxy --allow-domain slow.test -- sleep 600
  printf -v "$1" '%s' "$(json "$tmp/out" 'd["id"]' 2>/dev/null || echo none)"
}

# request_slow ID NAME: ID's agent asks the slow origin for /NAME in the
# background (the origin holds it); true once the origin has the request.
request_slow ()
{
  "$CTL" --json exec "$1" --timeout 600000 -- python3 "$ws/get.py" "http://slow.test:$port/$2" >/dev/null 2>&1 &
  background_pids+=($!)
  wait_for 30 grep -q "^got GET /$2" "$server_dir/log"
}

# ---- Destroy leaves no proxy thread -----------------------------------------------

# A first session and its end, so that whatever the daemon starts once
# (GLib's workers) is there already when we count.
run "$tmp/out" "$tmp/err" --json create --workspace "$ws" --net proxy --allow-domain slow.test -- sleep 600
if [[ $rc -ne 0 ]] && grep -q NotEnforced "$tmp/out"; then
  skip "no safe session can run here: $(cat "$tmp/out")"
fi
warm_id=$(json "$tmp/out" 'd["id"]' 2>/dev/null || echo none)
"$CTL" destroy "$warm_id" >/dev/null 2>&1 || true
sleep 1
before=$(threads)

run "$tmp/out" "$tmp/err" --json create --workspace "$ws" --net proxy --allow-domain slow.test -- sleep 600
check "create --net proxy: exit 0, running" \
  test "$rc:$(json "$tmp/out" 'd["state"]' 2>&1)" = "0:running"
id=$(json "$tmp/out" 'd["id"]' 2>/dev/null || echo none)
has_proxy_thread () { [[ $(proxy_threads) -ge 1 ]]; }
check "…its proxy runs on a thread of the daemon (paddock-proxy)" wait_for 10 has_proxy_thread
"$CTL" destroy "$id" >/dev/null 2>&1 || true
# Destroy only tells the proxy's thread to stop; the daemon joins it once
# it ended, on its main loop.
no_proxy_thread () { [[ $(proxy_threads) -eq 0 ]]; }
check "after Destroy, no paddock-proxy thread is left" wait_for 30 no_proxy_thread
back_to_before () { [[ $(threads) -le $before ]]; }
wait_for 20 back_to_before || true
check "…and the daemon has no more threads than before the session ($before)" test "$(threads)" -le "$before"

# ---- a request in flight at the daemon's exit is recorded -------------------------

proxy_session id
"$CTL" --json exec "$id" --timeout 600000 -- python3 "$ws/get.py" "http://slow.test:$port/in-flight" \
  >"$tmp/exec.json" 2>&1 &
exec_pid=$!
background_pids+=("$exec_pid")
check "a request to the slow origin reached it through the proxy" \
  wait_for 30 grep -q "^got GET /in-flight" "$server_dir/log"
kill -TERM "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
check "…the daemon exits on SIGTERM" eval '! kill -0 "$daemon_pid" 2>/dev/null'
"$DAEMON" --port-range "$PORT_RANGE" --state-dir "$tmp/state" >>"$tmp/daemon.log" 2>&1 &
daemon_pid=$!
wait_for 10 "$CTL" ports list || true
check "after a restart, the request in flight at SIGTERM is in net records, cut off, with the bytes it sent" \
  test "$(records "$id" '[(x["method"], x["host"], x["port"], x["error"], x["bytes_up"] > 0) for x in r]' 2>&1)" \
       = "[('GET', 'slow.test', $port, 'the proxy stopped', True)]"
"$CTL" destroy "$id" >/dev/null 2>&1 || true

# ---- a server inside on [::1] only, reached through the leased port ----------------

cat >"$ws/serve-v6.py" <<'PY'
import os, socket
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
s.bind(("::1", int(os.environ["PORT"])))
s.listen(16)
while True:
    c, _ = s.accept()
    got = 0
    while True:
        b = c.recv(1 << 16)
        if not b:
            break
        got += len(b)
    c.sendall(("v6 %d\n" % got).encode() + b"x" * got)
    c.close()
PY
if "$PYTHON" -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
  run "$tmp/out" "$tmp/err" --json create --workspace "$ws" --net none --port web -- python3 "$ws/serve-v6.py"
  v6_id=$(json "$tmp/out" 'd["id"]' 2>/dev/null || echo none)
  leased=$(json "$tmp/out" '[p["port"] for p in d["ports"] if p["name"] == "web"][0]' 2>/dev/null || echo 0)
  check "create --net none --port web, its server on [::1] only: running" \
    test "$rc:$(json "$tmp/out" 'd["state"]' 2>&1)" = "0:running"
  check "…a request from the host through the leased port reaches it, 1 MiB each way whole" \
    test "$(host_send "$leased" 1048576 2>&1)" = "v6 1048576 whole"
  check "…the session still reaches nothing outside: TCP to the host's server gets nowhere" \
    test "$("$CTL" --json exec "$v6_id" -- python3 -c '
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).close(); print("connected")
except OSError as e:
    print("refused", e.errno)' "$port" | json /dev/stdin 'd["stdout"].strip()' 2>&1)" = "refused 111"
  "$CTL" destroy "$v6_id" >/dev/null 2>&1 || true
else
  ok "forwarding to a server on [::1] # SKIP the host has no IPv6 loopback"
fi

# ---- a proxy whose thread cannot start: the session does not run -----------------

# The daemon's test switch PADDOCK_TEST_PROXY_THREAD_FAIL=1 makes the
# proxy's thread fail to start, as when the process is out of threads: the
# session must not run in proxy mode with nobody serving its proxy.
kill -TERM "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
PADDOCK_TEST_PROXY_THREAD_FAIL=1 "$DAEMON" --port-range "$PORT_RANGE" --state-dir "$tmp/state" >>"$tmp/daemon.log" 2>&1 &
daemon_pid=$!
wait_for 10 "$CTL" ports list || true
marker="paddock-no-proxy-$$"
run "$tmp/out" "$tmp/err" --json create --workspace "$ws" --net proxy --allow-domain slow.test -- sh -c ": $marker; sleep 600"
check "its proxy's thread cannot start: create --net proxy fails (org.paddock.Error.Failed) saying so"   test "$rc:$(json "$tmp/out" '(d["error"]["name"], "proxy" in d["error"]["message"], "thread" in d["error"]["message"])' 2>&1)" \
       = "1:('org.paddock.Error.Failed', True, True)"
no_agent_left () { ! pgrep -f "$marker" >/dev/null; }
check "…no session claims proxy mode, and its agent is not left running" \
  test "$("$CTL" --json list | json /dev/stdin '[(s["net"], s["state"]) for s in d["sessions"] if s["state"] in ("starting", "running")]' 2>&1):$(wait_for 10 no_agent_left && echo gone)" \
       = "[]:gone"
check "…nor a paddock-proxy thread" test "$(proxy_threads)" = 0
run "$tmp/out" "$tmp/err" --json create --workspace "$ws" --net none -- sleep 600
check "…a session with no proxy still runs on that daemon" \
  test "$rc:$(json "$tmp/out" 'd["state"]' 2>&1)" = "0:running"
"$CTL" destroy "$(json "$tmp/out" 'd["id"]' 2>/dev/null || echo none)" >/dev/null 2>&1 || true

# ---- a proxy whose stop is held holds up nothing else ----------------------------

# The daemon's test switch PADDOCK_TEST_PROXY_STOP_HOLD=PATH holds a
# proxy's thread in its stop, before it ends its requests, for as long as
# PATH exists (a minute at most), as a callback stuck in the kernel would.
# The session's end only tells the thread: the daemon goes on serving
# everyone else meanwhile, never gives up on the thread, and journals the
# cut-off request's record once the thread ends.
kill -TERM "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
hold="$tmp/proxy-stop-hold"
PADDOCK_TEST_PROXY_STOP_HOLD="$hold" "$DAEMON" --port-range "$PORT_RANGE" --state-dir "$tmp/state" >>"$tmp/daemon.log" 2>&1 &
daemon_pid=$!
wait_for 10 "$CTL" ports list || true
held_in_log () { grep -qF "PADDOCK_TEST_PROXY_STOP_HOLD=$hold exists, so session $1's proxy thread" "$tmp/daemon.log"; }
gave_up_in_log () { grep -c "Session $1: its proxy's thread did not end" "$tmp/daemon.log" || true; }

run "$tmp/out" "$tmp/err" --json create --workspace "$ws" --net none -- sleep 600
other_id=$(json "$tmp/out" 'd["id"]' 2>/dev/null || echo none)
proxy_session held_id
check "a proxy-mode session's request to the slow origin reached it (in flight)" \
  request_slow "$held_id" held-stop
touch "$hold"
rc=0
timeout 120 "$CTL" stop "$held_id" >/dev/null 2>&1 || rc=$?
check "…Stop returns while its proxy's thread is held in its stop (the log says it is)" \
  test "$rc:$(wait_for 30 held_in_log "$held_id" && echo held)" = "0:held"
still_held () { [[ $(proxy_threads) -ge 1 ]]; }
list_answered () { "$CTL" --json list | json /dev/stdin "[s['id'] for s in d['sessions'] if s['id'] == '$other_id']"; }
exec_answered () { "$CTL" --json exec "$other_id" -- echo answered | json /dev/stdin 'd["stdout"].strip()'; }
check "…meanwhile ListSessions and Exec in another session are answered, the thread still held, and the daemon never gave up waiting for it" \
  test "$(list_answered 2>&1):$(exec_answered 2>&1):$(still_held && echo held):$(gave_up_in_log "$held_id")" \
       = "['$other_id']:answered:held:0"
rm -f "$hold"
cut_off_recorded ()
{
  [[ $(records "$held_id" '[(x["method"], x["host"], x["port"], x["error"], x["bytes_up"] > 0) for x in r]') \
     == "[('GET', 'slow.test', $port, 'the proxy stopped', True)]" ]]
}
check "…once it goes on, the request it cut off is in net records, with the bytes it sent" wait_for 30 cut_off_recorded
check "…and its thread is joined: no paddock-proxy thread is left" wait_for 30 no_proxy_thread

# Destroyed while its proxy's stop is held: Destroy returns, and what the
# thread records once it goes on makes no file in the deleted folder.
proxy_session gone_id
request_slow "$gone_id" held-destroy || true
touch "$hold"
rc=0
timeout 120 "$CTL" destroy "$gone_id" >/dev/null 2>&1 || rc=$?
check "Destroy of a session whose proxy's stop is held returns, its folder gone" \
  test "$rc:$(wait_for 30 held_in_log "$gone_id" && echo held):$(test -e "$tmp/state/sessions/$gone_id" && echo there || echo gone)" \
       = "0:held:gone"
rm -f "$hold"
wait_for 30 no_proxy_thread || true
"$CTL" --json list >/dev/null 2>&1 || true
check "…once the thread ends, the folder is not made again, and nothing tried to write into it" \
  test "$(test -e "$tmp/state/sessions/$gone_id" && echo there || echo gone):$(grep -c "network journal .*$gone_id" "$tmp/daemon.log" || true)" \
       = "gone:0"
"$CTL" destroy "$held_id" >/dev/null 2>&1 || true

# ---- at the daemon's exit: one bounded wait, stops begun earlier included ---------

# A session that ended while its proxy's stop was held: the daemon's exit
# waits for that thread too, and journals what it cut off before the last
# flush. The hold goes once the exit told the other proxy to stop (its
# thread logs the hold), so the earlier stop ends within the exit's wait.
proxy_session early_id
request_slow "$early_id" held-exit || true
proxy_session late_id
touch "$hold"
"$CTL" stop "$early_id" >/dev/null 2>&1 || true
wait_for 30 held_in_log "$early_id" || true
kill -TERM "$daemon_pid"
check "a session ended with its proxy's stop held, then SIGTERM: the exit tells the other proxy to stop too" \
  wait_for 30 held_in_log "$late_id"
rm -f "$hold"
exited () { ! kill -0 "$daemon_pid" 2>/dev/null; }
wait_for 120 exited || true
wait "$daemon_pid" 2>/dev/null || true
"$DAEMON" --port-range "$PORT_RANGE" --state-dir "$tmp/state" >>"$tmp/daemon.log" 2>&1 &
daemon_pid=$!
wait_for 10 "$CTL" ports list || true
check "…after a restart, the request the earlier stop cut off is in net records (journaled before the exit)" \
  test "$(records "$early_id" '[(x["method"], x["host"], x["port"], x["error"], x["bytes_up"] > 0) for x in r]' 2>&1):$(gave_up_in_log "$early_id")" \
       = "[('GET', 'slow.test', $port, 'the proxy stopped', True)]:0"
"$CTL" destroy "$early_id" >/dev/null 2>&1 || true
"$CTL" destroy "$late_id" >/dev/null 2>&1 || true

# Held past the exit's bounded wait (5 s): a proxy Destroy told to stop
# earlier and two the exit tells, one serving a request. The daemon still
# exits; each thread is told before the wait gives up on any, and every
# one is given up on (logged) within that one wait.
kill -TERM "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
PADDOCK_TEST_PROXY_STOP_HOLD="$hold" "$DAEMON" --port-range "$PORT_RANGE" --state-dir "$tmp/state" >>"$tmp/daemon.log" 2>&1 &
daemon_pid=$!
wait_for 10 "$CTL" ports list || true
touch "$hold"
proxy_session stuck_id
rc=0
timeout 120 "$CTL" destroy "$stuck_id" >/dev/null 2>&1 || rc=$?
check "a proxy held in its stop: Destroy returns, the daemon goes on serving, the session gone" \
  test "$rc:$(wait_for 30 held_in_log "$stuck_id" && echo held):$(timeout 60 "$CTL" --json list | json /dev/stdin "[s['id'] for s in d['sessions'] if s['id'] == '$stuck_id']" 2>&1)" \
       = "0:held:[]"
proxy_session serving_id
request_slow "$serving_id" at-exit || true
proxy_session idle_id
log_lines=$(wc -l <"$tmp/daemon.log")
kill -TERM "$daemon_pid"
check "…with it and two more held, one serving a request, the daemon still exits on SIGTERM" wait_for 120 exited
wait "$daemon_pid" 2>/dev/null || true
rm -f "$hold"
# Told to stop together, waited for against one deadline: each thread is
# told (and logs its hold) before the wait gives up on the first; the one
# Destroy told earlier is given up on too.
stop_order ()
{
  tail -n +"$((log_lines + 1))" "$tmp/daemon.log" | "$PYTHON" -c '
import sys
seen = []
for line in sys.stdin:
    for sid in sys.argv[1:]:
        if "PADDOCK_TEST_PROXY_STOP_HOLD=" in line and "so session %s'"'"'s proxy thread" % sid in line:
            seen.append("told")
        elif "Session %s: its proxy'"'"'s thread did not end within 5 s" % sid in line:
            seen.append("gave up")
print(" ".join(seen))' "$@"
}
check "…both proxies' threads were told to stop before the first wait gave up" \
  test "$(stop_order "$serving_id" "$idle_id" 2>&1)" = "told told gave up gave up"
check "…and the wait covered the proxy whose stop Destroy began earlier" \
  test "$(stop_order "$stuck_id" 2>&1)" = "gave up"

echo "1..$n"
[[ $failures -eq 0 ]]
