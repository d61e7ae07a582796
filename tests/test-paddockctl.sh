#!/bin/bash
# test-paddockctl.sh — paddockctl against paddockd on a private bus, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Needs PADDOCK_BUILD_ROOT (the meson build dir); paddockctl-lib.sh sets up
# the private bus and daemon, and says how it skips.

# The private bus, the daemon and the TAP helpers.
# shellcheck source=paddockctl-lib.sh
source "$(dirname "$0")/paddockctl-lib.sh" "$@"

# leased PORT: whether `ports list --json` shows PORT.
leased ()
{
  "$CTL" --json ports list | python3 -c '
import json, sys
ports = [lease["port"] for lease in json.load(sys.stdin)["leases"]]
sys.exit(0 if int(sys.argv[1]) in ports else 1)' "$1"
}

not_leased () { ! leased "$1"; }

# ---- info ------------------------------------------------------------------------

run "$tmp/out" "$tmp/err" --json info
check "info --json reports the daemon's version" \
  test "$rc:$(json "$tmp/out" 'd["version"]')" = "0:$("$CTL" --version | cut -d' ' -f2)"

# ---- lease and hold --------------------------------------------------------------

"$CTL" ports lease --json --name held >"$tmp/held.json" 2>"$tmp/held.err" &
holder=$!
background_pids+=("$holder")
wait_for 5 test -s "$tmp/held.json" || true
port=$(json "$tmp/held.json" 'd["port"]' 2>/dev/null || echo 0)
check "lease --json prints a port of the daemon's pool" test "$port" -ge "$PORT_FIRST" -a "$port" -le "$PORT_LAST"
check "the lease document has name, owner, session and state" \
  test "$(json "$tmp/held.json" '(d["name"], d["owner"].startswith(":"), d["session"], d["state"])' 2>&1)" \
       = "('held', True, None, 'held')"
check "list --json shows the lease while its holder runs" leased "$port"

run "$tmp/out" "$tmp/err" ports list
check "list prints a table with the port" \
  grep -Eq "^$port +held +:[0-9.]+ +- +held$" "$tmp/out"
check "list's table has a header" grep -Eq '^PORT +NAME +OWNER +SESSION +STATE$' "$tmp/out"

run "$tmp/out" "$tmp/err" ports release "$port" --json
check "releasing another client's lease fails with AccessDenied" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.AccessDenied"

kill -TERM "$holder"
holder_rc=0
wait "$holder" || holder_rc=$?
check "the holder exits 0 on SIGTERM" test "$holder_rc" -eq 0
check "the lease is gone once its holder has exited" not_leased "$port"

"$CTL" --json ports lease --name killed >"$tmp/killed.json" 2>/dev/null &
holder=$!
background_pids+=("$holder")
wait_for 5 test -s "$tmp/killed.json" || true
port=$(json "$tmp/killed.json" 'd["port"]' 2>/dev/null || echo 0)
kill -KILL "$holder"
wait "$holder" 2>/dev/null || true
check "a holder killed with SIGKILL loses its lease (bus disconnect)" wait_for 5 not_leased "$port"

"$CTL" ports lease --name human >"$tmp/human.out" 2>/dev/null &
holder=$!
background_pids+=("$holder")
wait_for 5 test -s "$tmp/human.out" || true
check "lease prints “PORT  NAME” for people" grep -Eq '^[0-9]+  human$' "$tmp/human.out"
kill -HUP "$holder"
holder_rc=0
wait "$holder" || holder_rc=$?
check "the holder exits 0 on SIGHUP" test "$holder_rc" -eq 0

# ---- lease -- CMD: socket activation -------------------------------------------------

cat >"$tmp/server.py" <<'EOF'
import json, os, socket, sys
report = {k: os.environ.get(k) for k in
          ("LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "PORT", "PADDOCK_PORT_WEB")}
report["pid"] = os.getpid()
s = socket.socket(fileno=3)
s.settimeout(10)
report["bound"] = s.getsockname()[1]
with open(sys.argv[1] + ".tmp", "w") as f:
    json.dump(report, f)
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
conn, _ = s.accept()
conn.sendall(b"hello from fd 3\n")
conn.close()
EOF

"$CTL" ports lease --name web -- python3 "$tmp/server.py" "$tmp/report.json" \
  >"$tmp/web.out" 2>"$tmp/web.err" &
runner=$!
background_pids+=("$runner")
if wait_for 10 test -s "$tmp/report.json"; then
  port=$(json "$tmp/report.json" 'd["PORT"]')
  check "the command sees LISTEN_FDS=1" test "$(json "$tmp/report.json" 'd["LISTEN_FDS"]')" = 1
  check "the command sees LISTEN_PID equal to its own pid" \
    test "$(json "$tmp/report.json" 'd["LISTEN_PID"] == str(d["pid"])')" = True
  check "the command sees LISTEN_FDNAMES=web" test "$(json "$tmp/report.json" 'd["LISTEN_FDNAMES"]')" = web
  check "PORT and PADDOCK_PORT_WEB name the port fd 3 is bound to" \
    test "$(json "$tmp/report.json" 'd["PORT"] == d["PADDOCK_PORT_WEB"] == str(d["bound"])')" = True
  check "the port is leased while the command runs" leased "$port"
  reply=$(python3 -c 'import socket, sys
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
print(c.makefile().readline().strip())' "$port" 2>&1 || true)
  check "the command accept()s a connection on fd 3" test "$reply" = "hello from fd 3"
  runner_rc=0
  wait "$runner" || runner_rc=$?
  check "paddockctl exits with the command's status (0)" test "$runner_rc" -eq 0
  check "the lease is released when the command exits" not_leased "$port"
  check "nothing but the command's output on stdout" test ! -s "$tmp/web.out"
else
  not_ok "the command reports its socket-activation environment" "$(cat "$tmp/web.err")"
fi

rc=0; "$CTL" ports lease -- sh -c 'exit 7' || rc=$?
check "ports lease -- sh -c 'exit 7' exits 7" test "$rc" -eq 7

rc=0; "$CTL" ports lease -- sh -c 'kill -TERM $$' || rc=$?
check "a command killed by SIGTERM gives 128+15" test "$rc" -eq 143

"$CTL" ports lease --name sleeper -- sh -c 'touch "$0"; exec sleep 30' "$tmp/sleeper.started" \
  2>/dev/null &
runner=$!
background_pids+=("$runner")
wait_for 5 test -e "$tmp/sleeper.started" || true
kill -TERM "$runner"
runner_rc=0
wait "$runner" || runner_rc=$?
check "SIGTERM is forwarded to the command and its status passed through" test "$runner_rc" -eq 143
run "$tmp/out" "$tmp/err" --json ports list
check "no lease is left behind" test "$(json "$tmp/out" 'len(d["leases"])')" = 0

run "$tmp/out" "$tmp/err" ports lease -- paddock-no-such-command-here
check "a missing command exits 127 with one line" \
  test "$rc:$(lines "$tmp/err")" = "127:1" -a ! -s "$tmp/out"
run "$tmp/out" "$tmp/err" --json ports list
check "…and its lease is released" test "$(json "$tmp/out" 'len(d["leases"])')" = 0

# ---- errors ------------------------------------------------------------------------

usage_ok ()
{
  run "$tmp/out" "$tmp/err" "$@"
  [[ $rc -eq 2 && -s "$tmp/err" && ! -s "$tmp/out" ]]
}
check "no command is a usage error (2)" usage_ok
check "an unknown command is a usage error (2)" usage_ok frobnicate
check "an unknown option is a usage error (2)" usage_ok ports lease --bogus
check "a missing option value is a usage error (2)" usage_ok ports lease --port
check "a non-numeric --port is a usage error (2)" usage_ok ports lease --port web
check "release without PORT is a usage error (2)" usage_ok ports release
check "release 0 is a usage error (2)" usage_ok ports release 0
check "release 65536 is a usage error (2)" usage_ok ports release 65536
check "release abc is a usage error (2)" usage_ok ports release abc
check "a command without “--” is a usage error (2)" usage_ok ports lease sleep 1

run "$tmp/out" "$tmp/err" ports release abc --json
check "a usage error with --json is one JSON error document, exit 2" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "2:org.paddock.Error.InvalidArgument"

run "$tmp/out" "$tmp/err" ports release "$PORT_LAST" --json
check "release of an unleased port: exit 1, org.paddock.Error.NotFound" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.NotFound"

run "$tmp/out" "$tmp/err" ports release "$PORT_LAST"
check "…and one line on stderr without --json" \
  test "$rc:$(lines "$tmp/err")" = "1:1" -a ! -s "$tmp/out"

run "$tmp/out" "$tmp/err" ports lease --port 80 --json
check "a port outside the pool: exit 1, org.paddock.Error.InvalidArgument" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.InvalidArgument"

rc=0
env -u DBUS_SESSION_BUS_ADDRESS DISPLAY= "$CTL" ports list >"$tmp/out" 2>"$tmp/err" || rc=$?
if [[ $rc -eq 1 && $(lines "$tmp/err") -eq 1 && ! -s "$tmp/out" ]] &&
   grep -q 'no D-Bus session bus.*dbus-run-session' "$tmp/err"; then
  ok "no session bus: one clear line, exit 1"
else
  not_ok "no session bus: one clear line, exit 1" "exit $rc" "$(cat "$tmp/err")"
fi

rc=0
env -u DBUS_SESSION_BUS_ADDRESS DISPLAY= "$CTL" --json ports list >"$tmp/out" 2>"$tmp/err" || rc=$?
check "no session bus with --json: a JSON error, exit 1" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.freedesktop.DBus.Error.NoServer"

kill -TERM "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
daemon_pid=""

run "$tmp/out" "$tmp/err" ports list
if [[ $rc -eq 1 && $(lines "$tmp/err") -eq 1 && ! -s "$tmp/out" ]] &&
   grep -q 'daemon is not running.*paddockd' "$tmp/err"; then
  ok "daemon not running: one clear line, exit 1"
else
  not_ok "daemon not running: one clear line, exit 1" "exit $rc" "$(cat "$tmp/err")"
fi

run "$tmp/out" "$tmp/err" --json ports lease
check "daemon not running with --json: ServiceUnknown, exit 1" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.freedesktop.DBus.Error.ServiceUnknown"

echo "1..$n"
(( failures == 0 ))
