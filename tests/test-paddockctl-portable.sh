#!/bin/bash
# test-paddockctl-portable.sh — the portable build's host sessions stage by copy, are reviewed and applied, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Without the Linux executor (-Dlinux_executor=false) a session runs on
# the host executor: the agent starts in a copy of the workspace, whose
# changes review lists and Apply brings back, and the boundary says that
# nothing enforces any of it. A build with the Linux executor skips: its
# host sessions write the workspace itself (safe ones stage).

# Decided before a daemon starts, so that the whole suite is a skip (a
# "1..0 # SKIP" plan), not a passed check plus a skipped one.
# shellcheck source=tap-lib.sh
source "$(dirname "$0")/tap-lib.sh" "$@"
have_sandbox && skip "this build has the Linux executor: its host sessions do not stage"

# shellcheck source=paddockctl-lib.sh
source "$(dirname "$0")/paddockctl-lib.sh" "$@"

logs_have () { "$CTL" logs "$1" 2>/dev/null | grep -qF -- "$2"; }

ws=$(mktemp -d "$tmp/ws.XXXXXX")
echo "the user's a" >"$ws/a.txt"
echo "the user's b" >"$ws/b.txt"

agent='echo "the agent'\''s a" > a.txt; echo new > new.txt; rm b.txt; pwd; echo AGENT-DONE; exec sleep 300'
run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile host --port web -- sh -c "$agent"
id=$(head -n 1 "$tmp/out")
if [[ $rc -ne 0 ]]; then
  not_ok "a host session starts" "$(cat "$tmp/out" "$tmp/err")"
  echo "1..$n"
  exit 1
fi
ok "a host session starts"
check "its agent ran" wait_for 20 logs_have "$id" AGENT-DONE
check "…in a copy of the workspace, not the workspace" \
  test "$("$CTL" logs "$id" 2>/dev/null | grep -c -x -F "$ws")" = 0
check "the real workspace is unchanged while it runs" \
  test "$(cat "$ws/a.txt"):$(cat "$ws/b.txt"):$(test -e "$ws/new.txt" && echo new || echo none)" \
       = "the user's a:the user's b:none"

run "$tmp/out" "$tmp/err" --json status --review "$id"
check "status says the workspace is staged (copy)" test "$(json "$tmp/out" 'd["staging"]')" = copy
check "the staging layer is unenforced, and says why" \
  test "$(json "$tmp/out" '[(l["status"], "nothing keeps it from writing" in l["evidence"]) for l in d["boundary"] if l["layer"] == "staging"]')" \
       = "[('unenforced', True)]"
check "no layer is reported enforced, and each says why" \
  test "$(json "$tmp/out" '[l["layer"] for l in d["boundary"] if l["status"] == "enforced" or not l.get("evidence")]')" = "[]"
# cgroup v2 is the Linux executor's: this build never makes one, even on
# Linux as root, and says so rather than "none could be made".
check "the cgroup layer is unenforced: this build has none" \
  test "$(json "$tmp/out" '[(l["status"], "no cgroup layer" in l["evidence"]) for l in d["boundary"] if l["layer"] == "cgroup"]')" \
       = "[('unenforced', True)]"
check "its port is leased to it" \
  test "$(json "$tmp/out" '[p["name"] for p in d["ports"] if not p["reserved"]]' 2>&1)" = "['web']"

run "$tmp/out" "$tmp/err" --json review "$id"
check "review lists the agent's changes" \
  test "$rc:$(json "$tmp/out" "sorted((c['kind'], c['path']) for c in d['changes'])")" \
       = "0:[('added', 'new.txt'), ('deleted', 'b.txt'), ('modified', 'a.txt')]"

run "$tmp/out" "$tmp/err" --json apply "$id"
check "apply brings them to the workspace (exit $rc)" \
  test "$rc:$(cat "$ws/a.txt"):$(cat "$ws/new.txt"):$(test -e "$ws/b.txt" && echo b || echo gone)" \
       = "0:the agent's a:new:gone"
run "$tmp/out" "$tmp/err" --json review "$id"
check "…after which review has nothing left" test "$(json "$tmp/out" 'len(d["changes"])')" = 0

"$CTL" destroy "$id" >/dev/null 2>&1 || true
echo "1..$n"
