#!/bin/bash
# test-paddockctl-servers.sh — an ordinary server on a session's leased port, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# What a user does with a dev server: `paddockctl create --port web -- python3
# -m http.server "$PORT"` (a program that knows nothing of socket activation:
# it binds the port itself, on every address), then `curl
# http://127.0.0.1:LEASED/` from the host. In a safe session with the proxy
# network (what New Session uses for agents) and with none, the daemon
# forwards the host's port into the session's namespace: the page must come
# back. On the host's network the daemon by default releases the leased
# port just before the agent starts ("port-handover" 'release'), so the
# program's own bind succeeds: the page must come back there too, the
# status must say "release", and no LISTEN_FDS. With --port-handover
# listen-fds the agent gets the socket listening (socket activation) and
# such a program's bind fails: that is what the option is for, and the
# status must say so. listen-fds with net proxy cannot work and is refused
# at create with the reason.

set -euo pipefail

# shellcheck source=paddockctl-lib.sh
source "$(dirname "$0")/paddockctl-lib.sh" "$@"

command -v curl >/dev/null || skip "curl is not installed"

ws="$tmp/workspace"
mkdir "$ws"
echo "served from the session" >"$ws/index.html"

# serve SPEC: create a session running http.server on $PORT, from the
# workspace (so that / lists index.html), and say what curl got from the
# host at the leased port within 20 s: "page", or what went wrong. The
# session's status JSON is left in $tmp/status.
serve ()
{
  local args=$1 port id
  # shellcheck disable=SC2086
  run "$tmp/out" "$tmp/err" --json create --workspace "$ws" $args --port web \
    -- sh -c 'cd "$1" && exec python3 -m http.server "$PORT"' sh "$ws"
  if [[ $rc -ne 0 ]]; then
    echo "create failed: $(cat "$tmp/out" "$tmp/err")"
    return 0
  fi
  id=$(json "$tmp/out" 'd["id"]')
  port=$(json "$tmp/out" '[p["port"] for p in d["ports"] if p["name"] == "web"][0]')
  if wait_for 20 curl -fsS --max-time 2 -o "$tmp/page" "http://127.0.0.1:$port/index.html"; then
    if grep -q "served from the session" "$tmp/page"; then echo page; else echo "wrong page: $(head -c 200 "$tmp/page")"; fi
  else
    echo "no answer at $port: $(curl -sS --max-time 2 "http://127.0.0.1:$port/" 2>&1 | head -c 200); agent said: $("$CTL" logs "$id" 2>/dev/null | tail -3 | tr '\n' ' ')"
  fi
  "$CTL" --json status "$id" >"$tmp/status" 2>/dev/null || true
  "$CTL" destroy "$id" >/dev/null 2>&1 || true
}

# handover: what the status said of port "web" ("handover" and "state").
handover ()
{
  json "$tmp/status" '" ".join([p["handover"] + " " + p["state"] for p in d["ports"] if p["name"] == "web"])' 2>/dev/null || echo "no status"
}

if have_sandbox && unshare -Urn true 2>/dev/null; then
  for net in proxy none; do
    got=$(serve "--profile safe --net $net")
    if [[ "$got" == page ]]; then
      ok "safe + net $net: python3 -m http.server \"\$PORT\" is reached by curl at the leased port from the host"
    else
      not_ok "safe + net $net: python3 -m http.server \"\$PORT\" is reached by curl at the leased port from the host" "$got"
    fi
  done
else
  skip_check "safe + net proxy and none: an ordinary server on the leased port" \
    "no paddock-sandbox or no user and network namespaces here"
fi

# The host's network, by default: served, the port released for the
# agent to bind.
for args in "--profile host" "--profile safe --net host"; do
  if [[ "$args" == *safe* ]] && ! have_sandbox; then
    skip_check "$args: an ordinary server on the leased port" "no paddock-sandbox in this build"
    continue
  fi
  got=$(serve "$args")
  if [[ "$got" == page ]]; then
    ok "$args --port web: python3 -m http.server \"\$PORT\" is reached by curl at the leased port from the host"
  else
    not_ok "$args --port web: python3 -m http.server \"\$PORT\" is reached by curl at the leased port from the host" "$got"
  fi
  check "…its status says the port was released for the agent to bind (handover release, state released)" \
    test "$(handover)" = "release released"
done

# The race 'release' cannot close: another program of the host takes the
# port after the daemon let go of it (here: while the agent, which never
# binds it, runs). Once the session's processes are gone the daemon cannot
# hold the port again: the lease says "lost", is leased to nobody else,
# and is held again once that program lets go.
lease_state () { "$CTL" --json ports list | json /dev/stdin "[l['state'] for l in d['leases'] if l['port'] == $1]" 2>&1; }
state_is () { [[ "$(lease_state "$1")" == "$2" ]]; }
run "$tmp/out" "$tmp/err" --json create --workspace "$ws" --profile host --port web -- sleep 600
id=$(json "$tmp/out" 'd["id"]' 2>/dev/null || echo none)
port=$(json "$tmp/out" '[p["port"] for p in d["ports"] if p["name"] == "web"][0]' 2>/dev/null || echo 0)
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen()
open(sys.argv[2], "w").close(); time.sleep(60)' "$port" "$tmp/squatting" &
squatter=$!
background_pids+=("$squatter")
wait_for 10 test -e "$tmp/squatting" || true
"$CTL" stop "$id" >/dev/null 2>&1 || true
check "released port taken by another host program: once the session stopped its lease says lost" \
  wait_for 10 state_is "$port" "['lost']"
kill "$squatter" 2>/dev/null || true
wait "$squatter" 2>/dev/null || true
check "…and the daemon holds it again once that program let go (held)" wait_for 10 state_is "$port" "['held']"
"$CTL" destroy "$id" >/dev/null 2>&1 || true

# Socket activation, asked for: the program that binds the port itself
# fails (EADDRINUSE), which is what listen-fds means; the status says it.
got=$(serve "--profile host --port-handover listen-fds")
check "--port-handover listen-fds: the socket is handed over listening, so python3's own bind fails (EADDRINUSE)" \
  grep -q "Address already in use" <<<"$got"
check "…and its status says handover listen-fds, the lease held" test "$(handover)" = "listen-fds held"

# A combination that cannot work is refused at create, naming why.
if have_sandbox; then
  run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile safe --net proxy --port web \
    --port-handover listen-fds -- true
  check "--net proxy --port-handover listen-fds is refused at create (exit != 0)" test "$rc" -ne 0
  check "…saying that listen-fds needs net host" grep -q "listen-fds.*needs net host" "$tmp/err"
else
  skip_check "--net proxy --port-handover listen-fds is refused" "no paddock-sandbox in this build"
fi
run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile host --port web --port-handover socket -- true
check "--port-handover socket (not a mode) is refused, naming the two modes" grep -q "release or listen-fds" "$tmp/err"

echo "1..$n"
(( failures == 0 ))
