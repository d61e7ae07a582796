#!/bin/bash
# test-paddockctl-agents.sh — agent presets: found where npm installs them, a home that persists, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# A fake agent (tests/fixtures/fake-agent) is installed the way `npm i -g`
# installs into a per-user prefix (~/.npm-global: a bin symlink into
# lib/node_modules/fake-agent), which is on no PATH, with its preset in
# ~/.config/paddock/agents/. `create --agent fake` must find and start it
# in a safe session, its state must last into the next session (and never
# land in the real HOME), `agents reset` must empty it (not while a session
# of it runs), `agents import-login --yes` must bring a login in, and an
# agent whose program is missing must be refused at create, saying where
# the daemon looked. As a real agent does, it also starts a setsid,
# double-forked background server (nothing of which may be left after
# Destroy) and connects to its preset's hosts (loopback servers standing
# in) through the proxy by CONNECT, SOCKS5 and GIT_SSH_COMMAND, each a
# record, and to a host its preset does not name, refused. Runs as root
# and unprivileged.

HOME=$(mktemp -d "${TMPDIR:-/tmp}/paddock-agents-home.XXXXXX")
export HOME
export XDG_CONFIG_HOME="$HOME/.config"
unset NPM_CONFIG_PREFIX npm_config_prefix NVM_DIR PNPM_HOME
trap 'rm -rf "$HOME"' EXIT
fixture="$(cd "$(dirname "$0")" && pwd)/fixtures/fake-agent"
# The shipped presets too: each must read without error.
PADDOCK_AGENTS_DIR="$(cd "$(dirname "$0")/.." && pwd)/data/agents"
export PADDOCK_AGENTS_DIR
# Installed as npm does, before the daemon starts (as a user would have).
prefix="$HOME/.npm-global"
mkdir -p "$prefix/lib/node_modules" "$prefix/bin" "$XDG_CONFIG_HOME/paddock/agents"
cp -R "$fixture" "$prefix/lib/node_modules/fake-agent"
rm "$prefix/lib/node_modules/fake-agent/fake.json"
ln -s ../lib/node_modules/fake-agent/bin/fake-agent.sh "$prefix/bin/fake-agent"
# Its hosts: one loopback server for HTTPS (answers HTTP inside the tunnel)
# and one ssh-like (speaks first, echoes a line), which the daemon's proxy
# reaches for the preset's names (PADDOCK_TEST_PROXY_RESOLVE, read by the
# proxy only, as in test-paddockctl-net.sh). They cannot listen on 443 and
# 22, so the test's copy of the preset names their ports instead.
/usr/bin/python3 - "$HOME/world" <<'PY' >"$HOME/world.log" 2>&1 &
import os, socket, sys, threading
def serve(server, answer):
    while True:
        conn, _ = server.accept()
        threading.Thread(target=answer, args=(conn,), daemon=True).start()
def https(conn):
    with conn:
        head = b""
        while b"\r\n\r\n" not in head:
            b = conn.recv(1)
            if not b:
                return
            head += b
        path = head.split(b" ")[1].decode()
        host = [l.split(b":", 1)[1].strip().decode() for l in head.split(b"\r\n") if l.lower().startswith(b"host:")]
        body = ("hello %s from %s\n" % (path, host[0] if host else "?")).encode()
        conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
def ssh(conn):
    with conn:
        conn.sendall(b"SSH-2.0-echo\r\n")
        line = b""
        while not line.endswith(b"\n"):
            b = conn.recv(1)
            if not b:
                break
            line += b
        conn.sendall(line)
servers = [socket.create_server(("127.0.0.1", 0)) for _ in range(2)]
for server, answer in zip(servers, [https, ssh]):
    threading.Thread(target=serve, args=(server, answer), daemon=True).start()
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d %d\n" % (servers[0].getsockname()[1], servers[1].getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
threading.Event().wait()
PY
world_pid=$!
trap 'kill $world_pid 2>/dev/null; rm -rf "$HOME"' EXIT
for _ in $(seq 50); do [[ -s "$HOME/world" ]] && break; sleep 0.1; done
read -r https_port ssh_port <"$HOME/world" || { echo "Bail out! the loopback test servers did not start"; sed "s/^/# /" "$HOME/world.log"; exit 1; }
export PADDOCK_TEST_PROXY_RESOLVE="example.org=127.0.0.1,registry.example.net=127.0.0.1,git.example.org=127.0.0.1,telemetry.example.com=127.0.0.1"
sed -e "s/\"git.example.org:22\"/\"git.example.org:$ssh_port\"/" -e "s/\"ports\": \[443\]/\"ports\": [443, $https_port]/" \
  "$fixture/fake.json" >"$XDG_CONFIG_HOME/paddock/agents/fake.json"
sed -e 's/"fake-agent"\]/"no-such-agent-anywhere"]/' -e 's/"Fake Agent"/"Ghost Agent"/' -e 's/"name": "fake"/"name": "ghost"/' \
  "$fixture/fake.json" >"$XDG_CONFIG_HOME/paddock/agents/ghost.json"
printf '{ "title": "Broken", "programs": "not-a-list" }\n' >"$XDG_CONFIG_HOME/paddock/agents/broken.json"
{ printf '{ "title": "Huge", "programs": ["x"], "_comment": "'; head -c 70000 /dev/zero | tr '\0' x; printf '" }\n'; } \
  >"$XDG_CONFIG_HOME/paddock/agents/huge.json"
printf '{ "title": "Home", "programs": ["sh"], "env": { "set": { "HOME": "/root" } } }\n' \
  >"$XDG_CONFIG_HOME/paddock/agents/sethome.json"
# A node agent under nvm: a "#!/usr/bin/env node" script whose node is
# nvm's (a stand-in that runs the script with sh, which reads the "#!"
# line as a comment).
nvm="$HOME/.nvm/versions/node/v20.1.0"
mkdir -p "$nvm/bin" "$nvm/lib/node_modules/fake-node-agent"
printf '#!/bin/sh\nexec /bin/sh "$@"\n' >"$nvm/bin/node"
printf '#!/usr/bin/env node\necho "node agent ran with $(command -v node)"\n' >"$nvm/lib/node_modules/fake-node-agent/cli.js"
chmod 0755 "$nvm/bin/node" "$nvm/lib/node_modules/fake-node-agent/cli.js"
ln -s ../lib/node_modules/fake-node-agent/cli.js "$nvm/bin/fake-node-agent"
printf '{ "title": "Node Agent", "programs": ["fake-node-agent"], "install": { "package_tree": true, "node_runtime": true } }\n' \
  >"$XDG_CONFIG_HOME/paddock/agents/nodeagent.json"
# No PATH of the user's: the prefix is found by npm's convention alone.
export PATH=/usr/local/bin:/usr/bin:/bin

source "$(dirname "$0")/paddockctl-lib.sh" "$@"
trap 'cleanup; rm -rf "$HOME"' EXIT
# The library's cleanup ends the servers too.
background_pids+=("$world_pid")

ws=$(mktemp -d "$tmp/ws.XXXXXX")
state_dir=$(json <("$CTL" --json info) 'd["state-dir"]')
agent_home="$state_dir/agents/fake/home"
sessions () { "$CTL" --json list | "$PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)["sessions"]))'; }
agent_field () { "$PYTHON" -c '
import json, sys
for a in json.load(open(sys.argv[1]))["agents"]:
    if a["name"] == sys.argv[2]:
        print(eval(sys.argv[3], {"a": a}))' "$@"; }

# ---- listing -------------------------------------------------------------------
run "$tmp/agents.json" "$tmp/err" --json agents
check "agents --json answers (exit $rc)" test "$rc" -eq 0
check "the fake agent is found under the per-user npm prefix, with no PATH to it" \
  test "$(agent_field "$tmp/agents.json" fake 'a["found"], a["program"]')" = "(True, '$prefix/bin/fake-agent')"
check "…resolved into its package tree, which the view shows read-only" \
  test "$(agent_field "$tmp/agents.json" fake 'a["resolved"], a["view"]')" = \
       "('$prefix/lib/node_modules/fake-agent/bin/fake-agent.sh', ['$prefix/lib/node_modules/fake-agent'])"
check "…with its login command and where its home is" \
  test "$(agent_field "$tmp/agents.json" fake '" ".join(a["login"]), a["home"]')" = "('fake-agent login', '$agent_home')"
check "the shipped presets are listed, each read without error (claude, codex, opencode, pi, shell)" \
  test "$(agent_field "$tmp/agents.json" claude 'a["title"]')$(agent_field "$tmp/agents.json" codex 'a["title"]')$(agent_field "$tmp/agents.json" opencode 'a["title"]')$(agent_field "$tmp/agents.json" pi 'a["title"]')$(agent_field "$tmp/agents.json" shell 'a["found"]')" = \
       "Claude CodeCodexOpenCodepiTrue"
check "a missing program is listed not found, with where it looked" \
  test "$(agent_field "$tmp/agents.json" ghost 'a["found"], "'"$prefix"'/bin" in a["looked"], "not installed" in a["error"]')" = "(False, True, True)"
check "a preset file that is not valid is listed with the file and field" \
  grep -q 'broken.json: field “programs” must be a list of strings' "$tmp/agents.json"
check "a preset file over 64 KiB is refused before it is parsed" \
  grep -q 'huge.json: not a regular file of at most 64 KiB' "$tmp/agents.json"
check "a preset cannot move the session's HOME" \
  grep -q 'sethome.json: field “env.set.HOME” cannot be set by a preset' "$tmp/agents.json"
run "$tmp/out" "$tmp/err" agents
check "agents without --json says found and where it looked (exit $rc)" \
  grep -q "^fake (Fake Agent): found, $prefix/bin/fake-agent" "$tmp/out"
check "…and where it looked for one not found" grep -q "looked in: .*$prefix/bin" "$tmp/out"

check "a node agent under nvm is found, its package tree and nvm's runtime shown read-only" \
  test "$(agent_field "$tmp/agents.json" nodeagent 'a["program"], a["view"]')" = \
       "('$nvm/bin/fake-node-agent', ['$nvm/lib/node_modules/fake-node-agent', '$nvm'])"
run "$tmp/out" "$tmp/err" --json create --agent nodeagent --workspace "$ws"
if [[ "$rc" -ne 0 ]] && ! have_sandbox; then
  skip "paddock-sandbox is not built (a portable build): an agent's safe session cannot run"
elif [[ "$rc" -ne 0 ]] && grep -q "user namespaces" "$tmp/out" "$tmp/err"; then
  skip "safe sessions cannot run here"
fi
id=$(json "$tmp/out" 'd["id"]' 2>/dev/null || true)
logs_have () { "$CTL" logs "$id" 2>/dev/null | grep -q -- "$1"; }
check "…and runs with that node first on its PATH (exit $rc)" wait_for 20 logs_have "node agent ran with $nvm/bin/node"
"$CTL" destroy "$id" >/dev/null 2>&1 || true

# ---- a first session: it starts, and writes its state ----------------------------
# It waits at its "prompt", so that its boundary is read while it runs.
run "$tmp/out" "$tmp/err" --json create --agent fake --workspace "$ws" --env FAKE_AGENT_WAIT=60
if [[ "$rc" -ne 0 ]] && ! have_sandbox; then
  skip "paddock-sandbox is not built (a portable build): an agent's safe session cannot run"
elif [[ "$rc" -ne 0 ]] && grep -q "user namespaces" "$tmp/out" "$tmp/err"; then
  skip "safe sessions cannot run here"
fi
id=$(json "$tmp/out" 'd["id"]' 2>/dev/null || true)
check "create --agent fake starts it in a safe session (exit $rc)" test "$rc" -eq 0 -a -n "$id"
logs_have () { "$CTL" logs "$id" 2>/dev/null | grep -q -- "$1"; }
check "…running the installed file, with its home at /home/agent and the preset's variables" \
  wait_for 20 logs_have "fake-agent run 1 as $prefix/lib/node_modules/fake-agent/bin/fake-agent.sh home=/home/agent mode=preset"
check "…on the proxy by default" test "$(json <("$CTL" --json status "$id") 'd["net"]')" = proxy
check "…and its status and the list name the agent" \
  test "$(json <("$CTL" --json status "$id") 'd["agent"]'):$(json <("$CTL" --json list) '[s["agent"] for s in d["sessions"]]')" = "fake:['fake']"
check "…whose allowlist is the preset's domains, bare ones on its ports, the others on their own" \
  grep -q "'example.org:443', 'example.org:$https_port', 'registry.example.net:443', 'registry.example.net:$https_port', 'git.example.org:$ssh_port'" <(gdbus call --session --dest org.paddock.Daemon \
    --object-path "/org/paddock/Daemon/session/$id" --method org.freedesktop.DBus.Properties.Get \
    org.paddock.Session1 AllowedDomains 2>&1)
exposures () {
  "$CTL" --json status "$id" >"$tmp/boundary.json" 2>/dev/null &&
    json "$tmp/boundary.json" "[(l['status'], l['evidence']) for l in d['boundary'] if l['layer'] == 'exposures'][0]" |
    grep -q "enforced.*the agent's home $agent_home at /home/agent, kept between its sessions: rw.*the agent's install $prefix/lib/node_modules/fake-agent at its own path: ro"
}
check "the boundary's exposures list the agent's home, writable at /home/agent, and its install, read-only" \
  wait_for 20 exposures
check "its state is in the agent's home under the state dir" wait_for 10 test -f "$agent_home/.fake-agent/runs"
check "…and nothing was written into the real HOME" test ! -e "$HOME/.fake-agent"
"$CTL" destroy "$id" >/dev/null 2>&1 || true

# ---- the next session finds it ---------------------------------------------------
FAKE_AGENT_KEY=from-the-user run "$tmp/out" "$tmp/err" --json create --agent fake --workspace "$ws"
id=$(json "$tmp/out" 'd["id"]' 2>/dev/null || true)
check "the next session of the agent starts (exit $rc)" test "$rc" -eq 0
check "…with the state the first one kept, and the variable the preset may take from the user" \
  wait_for 20 logs_have "fake-agent run 2 .* key=from-the-user"
"$CTL" destroy "$id" >/dev/null 2>&1 || true

# ---- a command in the agent's environment ------------------------------------------
run "$tmp/out" "$tmp/err" --json create --agent fake --workspace "$ws" -- sh -c 'echo "inside: $(cat /home/agent/.fake-agent/runs) $FAKE_MODE"; fake-agent'
id=$(json "$tmp/out" 'd["id"]' 2>/dev/null || true)
check "create --agent fake -- CMD runs CMD in the agent's home and environment (exit $rc)" \
  wait_for 20 logs_have "inside: 2 preset"
"$CTL" destroy "$id" >/dev/null 2>&1 || true
run "$tmp/out" "$tmp/err" --json create --agent fake --workspace "$ws" -- fake-agent
id=$(json "$tmp/out" 'd["id"]' 2>/dev/null || true)
check "…and a CMD naming the preset's program runs its installed file (exit $rc)" \
  wait_for 20 logs_have "fake-agent run 3 as $prefix/lib/node_modules/fake-agent"
"$CTL" destroy "$id" >/dev/null 2>&1 || true

# ---- reset ---------------------------------------------------------------------------
run "$tmp/out" "$tmp/err" --json create --agent fake --workspace "$ws" --env FAKE_AGENT_WAIT=60
id=$(json "$tmp/out" 'd["id"]' 2>/dev/null || true)
wait_for 20 logs_have "fake-agent run 4" || true
run "$tmp/out" "$tmp/err" --json agents reset fake
check "agents reset is refused while a session of the agent runs (Busy, exit $rc)" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.Busy"
check "…and the home is untouched" test -f "$agent_home/.fake-agent/runs"
"$CTL" destroy "$id" >/dev/null 2>&1 || true
ln -s "$HOME" "$agent_home/link-to-real-home"
run "$tmp/out" "$tmp/err" agents reset fake
check "agents reset empties the home once no session runs (exit $rc)" \
  test "$rc:$(ls -A "$agent_home" | wc -l)" = "0:0"
no_aside () { ! ls -d "$state_dir/agents/fake/home.reset-"* >/dev/null 2>&1; }
check "…and what was in it is removed, on the daemon's worker thread" wait_for 20 no_aside
check "…removing a link the agent made as a link, not what it names" test -d "$HOME/.npm-global/bin"
run "$tmp/out" "$tmp/err" --json create --agent fake --workspace "$ws"
id=$(json "$tmp/out" 'd["id"]' 2>/dev/null || true)
check "the next session starts afresh" wait_for 20 logs_have "fake-agent run 1 .* token=none"
"$CTL" destroy "$id" >/dev/null 2>&1 || true

run "$tmp/out" "$tmp/err" --json agents reset no-such-preset
check "agents reset of a preset that does not exist is NotFound (exit $rc)" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.NotFound"

# ---- what a real agent does: a setsid server, its hosts through the proxy ----------
# The fake agent starts a background server with setsid that double-forks
# (a marker in its argv, to find it from outside), connects to its preset's
# hosts through the proxy (CONNECT, SOCKS5, ssh by GIT_SSH_COMMAND) and to
# a host its preset does not name, then waits at its "prompt".
marker="fake-agent-server-$$-$RANDOM"
# The server's own two processes (server.py MARKER …): the marker also
# stands in the sandbox helper's argv (--env) when the session made its
# own sandbox rather than taking the one made ahead, which is timing.
marked () { pgrep -f -- "server\.py $marker" | wc -l | tr -d ' '; }
# Its second server, on a port nobody leased (as `opencode` serves its own
# TUI): a marker that the first one's pattern does not match.
local_marker="local-$marker"
marked_local () { pgrep -f -- "server\.py $local_marker" | wc -l | tr -d ' '; }
run "$tmp/out" "$tmp/err" --json create --agent fake --workspace "$ws" --env "FAKE_AGENT_SERVER=$marker" \
  --env "FAKE_AGENT_LOCAL_SERVER=$local_marker" \
  --env "FAKE_AGENT_NET=$https_port $ssh_port" --env FAKE_AGENT_WAIT=120 --port server
id=$(json "$tmp/out" 'd["id"]' 2>/dev/null || true)
leased=$(json "$tmp/out" '[p["port"] for p in d["ports"] if p["name"] == "server"][0]' 2>/dev/null || echo 0)
check "an agent that starts a server and connects to its hosts starts (exit $rc)" test "$rc" -eq 0 -a -n "$id"
check "…its setsid, double-forked server listens inside, on its leased port" \
  wait_for 20 logs_have "fake-agent server: $leased $marker"
check "…reached from the host at that port" \
  test "$("$PYTHON" -c 'import socket, sys; print(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10).makefile().readline().strip())' "$leased" 2>&1)" = "fake-agent server"
check "…seen from outside: its two processes, the marker in their argv" test "$(marked)" = 2
# In proxy mode (the preset's default) the session has a network namespace
# of its own, where binding a port nobody leased is allowed: nothing
# outside reaches it.
local_server () { "$CTL" logs "$id" 2>/dev/null | grep -o 'fake-agent local server: .*' | head -n 1 | tr -d '\r'; }
local_server_answered () { [[ "$(local_server)" =~ ^"fake-agent local server: "[0-9]+" answered: fake-agent server"$ ]]; }
check "…in its proxy mode its second setsid server listens on a port nobody leased (port 0), and the agent connects to it from inside" \
  wait_for 20 local_server_answered
local_port=$(local_server | cut -d' ' -f4)
check "…that port is not the session's to the host: the host's 127.0.0.1:$local_port does not reach it" \
  test "$("$PYTHON" -c 'import socket, sys
try:
    print(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).makefile().readline().strip() or "nothing")
except OSError as e:
    print(type(e).__name__)' "${local_port:-1}" 2>&1)" != "fake-agent server"
check "…an HTTPS-style CONNECT to a preset host goes through the proxy to it" \
  wait_for 30 logs_have "net https example.org: tunnel 200 hello /v1/models from example.org"
check "…and to the preset's registry" logs_have "net https registry.example.net: tunnel 200 hello /v1/models from registry.example.net"
check "…an ssh-style connection by SOCKS5 (ALL_PROXY) reaches its git host on its port: banner, then the echo" \
  logs_have "net ssh git.example.org: socks SSH-2.0-echo ping"
check "…a host its preset does not name is refused by the proxy (403)" \
  logs_have "net https telemetry.example.com: refused 403"
if command -v ssh >/dev/null; then
  check "…ssh through the session's GIT_SSH_COMMAND reaches the git host (the server's version string read)" \
    wait_for 30 logs_have "net git-ssh git.example.org: version read"
else
  ok "…ssh through the session's GIT_SSH_COMMAND # SKIP ssh is not installed"
fi
# records EXPR: EXPR over the session's records (r), `net ID records --json`.
records () {
  "$CTL" --json net "$id" records >"$tmp/records.json" 2>/dev/null &&
    "$PYTHON" -c 'import json, sys; r = json.load(open(sys.argv[1]))["records"]; print(eval(sys.argv[2]))' "$tmp/records.json" "$1"
}
expected="[('CONNECT', 'example.org', $https_port, 'allowed', True), ('CONNECT', 'registry.example.net', $https_port, 'allowed', True), ('CONNECT', 'telemetry.example.com', $https_port, 'denied', False), ('SOCKS5', 'git.example.org', $ssh_port, 'allowed', True)]"
if command -v ssh >/dev/null; then
  expected="[('CONNECT', 'example.org', $https_port, 'allowed', True), ('CONNECT', 'git.example.org', $ssh_port, 'allowed', True), ('CONNECT', 'registry.example.net', $https_port, 'allowed', True), ('CONNECT', 'telemetry.example.com', $https_port, 'denied', False), ('SOCKS5', 'git.example.org', $ssh_port, 'allowed', True)]"
fi
check "net --json ID: a record of each connection, allowed with bytes back, the unnamed host denied" \
  test "$(records 'sorted(set((x["method"], x["host"], x["port"], x["verdict"], x["bytes_down"] > 0) for x in r))' 2>&1)" = "$expected"
run "$tmp/destroy.json" "$tmp/err" --json destroy "$id"
check "destroy ends the session: exit $rc, no survivors reported" \
  test "$rc:$(json "$tmp/destroy.json" 'd["survivors"]' 2>&1)" = "0:0"
check "…and from outside, no process of it is left (the setsid, double-forked servers included)" \
  test "$(marked):$(marked_local)" = "0:0"

# ---- import-login ---------------------------------------------------------------------
mkdir -p "$HOME/.fake-agent"
echo "secret-from-host" >"$HOME/.fake-agent/token"
run "$tmp/out" "$tmp/err" agents import-login fake
check "agents import-login without --yes is refused as a usage error (exit $rc)" test "$rc" -eq 2
check "…and copies nothing" test ! -e "$agent_home/.fake-agent/token"
run "$tmp/out" "$tmp/err" --json agents import-login fake --yes
check "agents import-login fake --yes copies the preset's credential file (exit $rc)" \
  test "$rc:$(json "$tmp/out" 'd["copied"]' 2>&1)" = "0:['.fake-agent/token']"
check "…into the agent's home, readable only by the user" \
  test "$(cat "$agent_home/.fake-agent/token") $(stat -c %a "$agent_home/.fake-agent/token")" = "secret-from-host 600"
run "$tmp/out" "$tmp/err" --json create --agent fake --workspace "$ws"
id=$(json "$tmp/out" 'd["id"]' 2>/dev/null || true)
check "…and the agent's next session has the login" wait_for 20 logs_have "token=secret-from-host"
"$CTL" destroy "$id" >/dev/null 2>&1 || true
rm -rf "$HOME/.fake-agent"

# ---- refusals at create -----------------------------------------------------------------
run "$tmp/out" "$tmp/err" --json create --agent ghost --workspace "$ws"
check "an agent whose program is not installed is refused at create (NotFound, exit $rc)" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.NotFound"
check "…saying where it looked and how to install it" \
  grep -q "no no-such-agent-anywhere in .*$prefix/bin.*Install it (npm install -g" "$tmp/out"
check "…and no session is left" test "$(sessions)" = 0
run "$tmp/out" "$tmp/err" --json create --agent broken --workspace "$ws"
check "an agent whose preset is not valid is refused, naming the file and field (exit $rc)" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.InvalidArgument"
run "$tmp/out" "$tmp/err" --json create --agent no-such-preset --workspace "$ws"
check "an agent with no preset is refused (NotFound, exit $rc)" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.NotFound"
run "$tmp/out" "$tmp/err" --json create --agent ../etc --workspace "$ws"
check "a preset name that is not one is refused (InvalidArgument, exit $rc)" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.InvalidArgument"

echo "1..$n"
[[ $failures -eq 0 ]]
