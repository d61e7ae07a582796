#!/bin/bash
# test-paddockctl-program.sh — a command a safe session cannot run is refused at create, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# A program that does not exist, or exists only where a safe session does
# not see (a per-user install prefix in HOME, as npm's ~/.npm-global), used
# to be found missing inside: create answered with an id, and the agent
# had already exited 127. Now create fails with NotFound saying where it
# looked, and no session is left; the same program exposed read-only from
# HOME runs at its path inside. Runs as root and unprivileged.

# A HOME of the test's own, with an npm-style per-user install in it.
HOME=$(mktemp -d "${TMPDIR:-/tmp}/paddock-program-home.XXXXXX")
export HOME
trap 'rm -rf "$HOME"' EXIT
needs_safe_sessions=true
source "$(dirname "$0")/paddockctl-lib.sh" "$@"
trap 'cleanup; rm -rf "$HOME"' EXIT

prefix="$HOME/.npm-global"
mkdir -p "$prefix/lib/node_modules/fake-agent/bin" "$prefix/bin"
printf '#!/bin/sh\necho "fake-agent ran as $0"\n' >"$prefix/lib/node_modules/fake-agent/bin/fake-agent.sh"
chmod 0755 "$prefix/lib/node_modules/fake-agent/bin/fake-agent.sh"
ln -s ../lib/node_modules/fake-agent/bin/fake-agent.sh "$prefix/bin/fake-agent"
ws=$(mktemp -d "$tmp/ws.XXXXXX")

sessions () { "$CTL" --json list | "$PYTHON" -c 'import json,sys; print(len(json.load(sys.stdin)["sessions"]))'; }

have_sandbox || skip "paddock-sandbox is not built (a portable build): no safe session to refuse a program"
run "$tmp/out" "$tmp/err" --json create --workspace "$ws" -- no-such-program-anywhere
if [[ "$rc" -ne 0 ]] && grep -q "user namespaces" "$tmp/out" "$tmp/err"; then
  skip "safe sessions cannot run here"
fi
check "create of a program that exists nowhere fails (exit $rc) with NotFound" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.NotFound"
check "…saying where it looked" grep -q "looked in /usr/local/sbin" "$tmp/out"
check "…and no session is left" test "$(sessions)" = 0

run "$tmp/out" "$tmp/err" --json create --workspace "$ws" -- "$prefix/bin/fake-agent"
check "a program installed in HOME, outside the view, is refused at create (exit $rc)" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.NotFound"
check "…saying it is not in the session's view, and how to expose it" \
  grep -q "not in the session's view.*--expose" "$tmp/out"
check "…and no session is left" test "$(sessions)" = 0

run "$tmp/out" "$tmp/err" create --workspace "$ws" --expose "$prefix" -- /home/agent/.npm-global/bin/fake-agent
id=$(head -n 1 "$tmp/out")
check "exposed read-only from HOME, it starts at its path inside (exit $rc)" test "$rc" -eq 0
logs_ran () { "$CTL" logs "$id" 2>/dev/null | grep -q "fake-agent ran as /home/agent/.npm-global/bin/fake-agent"; }
check "…and runs" wait_for 20 logs_ran
"$CTL" destroy "$id" >/dev/null 2>&1 || true

run "$tmp/out" "$tmp/err" --json create --workspace "$ws" -- sh -c 'exit 0'
check "a program of the system folders still starts (exit $rc)" test "$rc" -eq 0
"$CTL" destroy "$(json "$tmp/out" 'd["id"]')" >/dev/null 2>&1 || true

echo "1..$n"
[[ $failures -eq 0 ]]
