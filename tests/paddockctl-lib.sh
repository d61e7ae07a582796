# paddockctl-lib.sh — what every test-paddockctl*.sh script starts with; sourced
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Needs PADDOCK_BUILD_ROOT (the meson build dir). Starts its own dbus-daemon
# with no service directories (so nothing gets activated behind our back)
# and its own paddockd with a throw-away state dir, and kills both on exit
# (destroying the sessions left first, so that no host-profile process
# outlives the test).
#
# Skips when something essential is missing (see tap-lib.sh: exit 77, or
# the TAP plan with --tap).
#
# Defines: CTL, DAEMON, PYTHON, tmp, daemon_pid, background_pids, the
# daemon's pool PORT_FIRST, PORT_LAST, PORT_RANGE (pick_port_range); from
# tap-lib.sh the TAP helpers skip, ok, not_ok, check, json, wait_for; here
# run (sets $rc), lines, write_serve_inside, host_send, exec_try_bind.
# The daemon answers on the private bus when this returns (TAP test 1).

set -euo pipefail

# shellcheck source=tap-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/tap-lib.sh" "$@"

[[ -n "${PADDOCK_BUILD_ROOT:-}" ]] || skip "PADDOCK_BUILD_ROOT is not set"
CTL="$PADDOCK_BUILD_ROOT/app/paddockctl"
DAEMON="$PADDOCK_BUILD_ROOT/daemon/paddockd"
[[ -x "$CTL" ]] || skip "$CTL is not built"
[[ -x "$DAEMON" ]] || skip "$DAEMON is not built"
command -v dbus-daemon >/dev/null || skip "dbus-daemon is not installed"
# A script that can check nothing without safe sessions sets
# needs_safe_sessions=true before sourcing: it then skips whole (a
# "1..0 # SKIP" plan) before a daemon starts, rather than passing the
# daemon's check and skipping the rest (meson would count that as passed).
if [[ "${needs_safe_sessions:-false}" == true ]]; then
  have_sandbox || skip "paddock-sandbox is not built (a portable build): no safe session can run"
  unshare -Urm true 2>/dev/null || skip "user namespaces are unavailable here, so no safe session can run"
fi
PYTHON=/usr/bin/python3
[[ -x "$PYTHON" ]] || PYTHON=$(command -v python3 || true)
[[ -n "$PYTHON" ]] || skip "python3 is not installed"

# Nothing from the caller's desktop may leak in: no session bus, no
# autolaunch, no G_DEBUG=fatal-warnings tripping on the daemon's messages.
unset DBUS_SESSION_BUS_ADDRESS DISPLAY WAYLAND_DISPLAY LISTEN_FDS LISTEN_PID LISTEN_FDNAMES
export LC_ALL=C.UTF-8

tmp=$(mktemp -d "${TMPDIR:-/tmp}/$(basename "$0" .sh).XXXXXX")
export XDG_RUNTIME_DIR="$tmp/runtime"
mkdir -m 0700 "$XDG_RUNTIME_DIR"

bus_pid=""
daemon_pid=""
background_pids=()

cleanup ()
{
  local pid id
  # Sessions of the host profile are plain process groups: destroy them
  # before the daemon goes, so that no `sleep` outlives the test.
  if [[ -n "$daemon_pid" ]]; then
    for id in $("$CTL" --json list 2>/dev/null | "$PYTHON" -c '
import json, sys
for s in json.load(sys.stdin)["sessions"]: print(s["id"])' 2>/dev/null); do
      "$CTL" destroy "$id" >/dev/null 2>&1 || true
    done
  fi
  for pid in "${background_pids[@]}" $daemon_pid $bus_pid; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${background_pids[@]}" $daemon_pid $bus_pid; do
    wait "$pid" 2>/dev/null || true
  done
  # A session's keeper outlives its daemon: a check that failed while no
  # daemon ran leaves it holding its session. Ours (their folder is in
  # $tmp) are killed, and a sandbox dies with its keeper.
  for pid in $(grep -la -- "--hold-dir.$tmp/" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3); do
    kill -KILL "$pid" 2>/dev/null || true
  done
  # A failed check keeps what the daemon said (an abort's reason, say),
  # which goes with the folder otherwise.
  if [[ "$failures" != 0 && -s "$tmp/daemon.log" ]]; then
    echo "--- the daemon's log, last 80 lines but debug ---" >&2
    grep -v -- '-DEBUG: ' "$tmp/daemon.log" | tail -80 >&2
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# run OUT ERR ARGS…: run paddockctl, record stdout/stderr, set $rc.
run ()
{
  local out=$1 err=$2
  shift 2
  rc=0
  "$CTL" "$@" >"$out" 2>"$err" || rc=$?
}

lines () { wc -l <"$1" | tr -d ' '; }

# ---- a server inside a session, reached through a leased port ---------------------

# write_serve_inside FILE: an agent's server, for a none or proxy session.
# It binds 127.0.0.1:$PORT in the session's namespace (nothing passed to
# it) and, per connection, reads to EOF (the client's half-close must come
# through), then answers "PORT PADDOCK_PORT_WEB LISTEN_FDS BYTES" (each "-"
# when unset) and as many bytes back.
write_serve_inside ()
{
  cat >"$1" <<'PY'
import os, socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(os.environ["PORT"])))
s.listen(16)
facts = " ".join([os.environ.get("PORT", "-"), os.environ.get("PADDOCK_PORT_WEB", "-"),
                  os.environ.get("LISTEN_FDS", "-")])
while True:
    c, _ = s.accept()
    got = 0
    while True:
        b = c.recv(1 << 16)
        if not b:
            break
        got += len(b)
    c.sendall(("%s %d\n" % (facts, got)).encode() + b"x" * got)
    c.close()
PY
}

# host_send PORT N: from the host, send N bytes to 127.0.0.1:PORT,
# half-close, read it all; prints the answer's first line and whether the
# rest came back whole ("whole" or "short LEN"). The server may still be
# starting: a connection closed without an answer is tried again (for at
# most 20 s), not counted as one.
host_send () { "$PYTHON" - "$1" "$2" <<'PY'
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
deadline = time.monotonic() + 20
while True:
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"y" * n)
        s.shutdown(socket.SHUT_WR)
        data = b""
        while True:
            b = s.recv(1 << 16)
            if not b:
                break
            data += b
        s.close()
    except OSError:
        data = b""
    if data or time.monotonic() > deadline:
        break
    time.sleep(0.1)
head, _, rest = data.partition(b"\n")
print(head.decode(), "whole" if rest == b"x" * n else "short %d" % len(rest))
PY
}

# exec_try_bind ID PORT…: inside session ID (paddockctl --json exec), binds
# 127.0.0.1:PORT for each PORT (0: any port) and prints on one line, for
# each, "ok" or "errno N"; paddockctl's JSON answer goes to stdout.
exec_try_bind ()
{
  local id=$1
  shift
  "$CTL" --json exec "$id" -- python3 -c '
import socket, sys
def try_bind(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p)); return "ok"
    except OSError as e:
        return "errno %d" % e.errno
    finally:
        s.close()
print(*(try_bind(int(p)) for p in sys.argv[1:]))' "$@"
}

# ---- a private bus and a daemon ------------------------------------------------

cat >"$tmp/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=$tmp</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF

dbus-daemon --config-file="$tmp/bus.conf" --nofork --print-address=3 \
  3>"$tmp/bus.address" 2>"$tmp/bus.log" &
bus_pid=$!
wait_for 5 test -s "$tmp/bus.address" || skip "dbus-daemon did not start: $(cat "$tmp/bus.log")"
DBUS_SESSION_BUS_ADDRESS=$(head -n 1 "$tmp/bus.address")
export DBUS_SESSION_BUS_ADDRESS

# A canary in the daemon's (and our) environment that no session may see.
export PADDOCK_TEST_C=canary

mkdir "$tmp/state"
pick_port_range
"$DAEMON" --port-range "$PORT_RANGE" --state-dir "$tmp/state" >"$tmp/daemon.log" 2>&1 &
daemon_pid=$!

if wait_for 5 "$CTL" ports list; then
  ok "the daemon answers on the private bus"
else
  not_ok "the daemon answers on the private bus" "$(cat "$tmp/daemon.log")"
  echo "1..$n"
  exit 1
fi
