#!/bin/bash
# test-paddockctl-stage-limit.sh — a session's stage bounded by its limit, through paddockctl, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Every write of a safe session lands in its stage, in the user's state
# folder. An agent that writes 40 MiB into a session limited to 4 MiB: the
# session is held still once the daemon measures its stage over the limit
# (the agent stops making progress), status says why, the real workspace
# is untouched, and nothing staged is lost; SetStageLimit lets it finish.
# A session held still is destroyed like any other, nothing left. Run as
# root and, through run-unprivileged.sh, as a user without a cgroup (held
# by SIGSTOP there, by the cgroup freezer here where there is one).

needs_safe_sessions=true
source "$(dirname "$0")/paddockctl-lib.sh" "$@"

command -v gdbus >/dev/null || skip "gdbus (libglib2.0-bin) is not installed"

ws=$(mktemp -d "$tmp/ws.XXXXXX")
echo "the user's file" >"$ws/mine.txt"

stage_field () { "$CTL" --json status "$1" >"$tmp/stage.json" 2>/dev/null && json "$tmp/stage.json" "$2"; }
held () { [[ "$(stage_field "$1" 'd.get("stage", {}).get("paused", "")')" != "" ]]; }
going () { [[ "$(stage_field "$1" 'd.get("stage", {}).get("paused", "x")')" == "" ]]; }
chunks () { "$CTL" logs "$1" 2>/dev/null | grep -c '^chunk ' || true; }
logs_have () { "$CTL" logs "$1" 2>/dev/null | grep -qF -- "$2"; }

run "$tmp/out" "$tmp/err" create --workspace "$ws" --stage-limit 10 -- true
check "a stage limit under 1 MiB is a usage error (exit $rc)" test "$rc" -eq 2

have_sandbox || skip "paddock-sandbox is not built (a portable build): no safe session to hold"
agent='for i in $(seq 1 40); do head -c 1048576 /dev/urandom > "big-$i.bin"; echo "chunk $i"; sleep 0.1; done
echo ALL-DONE; exec sleep 600'
run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile safe --stage-limit 4M -- sh -c "$agent"
id=$(head -n 1 "$tmp/out")
if [[ $rc -ne 0 ]]; then
  grep -q "user namespaces" "$tmp/err" && skip "safe sessions cannot run here: $(cat "$tmp/err")"
  not_ok "a safe session with a 4 MiB stage starts" "$(cat "$tmp/out" "$tmp/err")"
  echo "1..$n"
  exit 1
fi
ok "a safe session with a 4 MiB stage starts"

check "it is held still once its stage is over the limit" wait_for 30 held "$id"
"$CTL" --json status "$id" >"$tmp/status.json"
check "status says why (the stage's size against its limit)" \
  test "$(json "$tmp/status.json" '"over its limit" in d["stage"]["reason"] and d["stage"]["full"] and d["stage"]["limit"] == 4 * 1024 * 1024')" = True
before=$(chunks "$id")
sleep 2
after=$(chunks "$id")
check "held still, the agent makes no progress ($before chunks, then $after)" test "$before" -eq "$after" -a "$after" -lt 40
check "…and never got near its 40 MiB" test "$(json "$tmp/status.json" 'd["stage"]["bytes"] < 24 * 1024 * 1024')" = True
check "the real workspace is untouched" test "$(ls "$ws")" = "mine.txt"

run "$tmp/out" "$tmp/err" --json review "$id"
check "what was staged before the limit is all there to review" \
  test "$(json "$tmp/out" 'len([c for c in d["changes"] if c["path"].startswith("big-")]) >= 3')" = True

path="/org/paddock/Daemon/session/$id"
gdbus call --session -d org.paddock.Daemon -o "$path" -m org.paddock.Session1.SetStageLimit 1024 \
  >"$tmp/out" 2>"$tmp/err" && rc=0 || rc=$?
check "SetStageLimit refuses a limit under 1 MiB" grep -q "InvalidArgument" "$tmp/err"
gdbus call --session -d org.paddock.Daemon -o "$path" -m org.paddock.Session1.SetStageLimit 268435456 \
  >"$tmp/out" 2>"$tmp/err" && rc=0 || rc=$?
check "SetStageLimit raises the limit (exit $rc)" test "$rc" -eq 0
check "the session goes on" wait_for 20 going "$id"
check "…and finishes its writes" wait_for 30 logs_have "$id" ALL-DONE

# Held still, then destroyed: nothing is left, and the answer comes.
agent2='i=0; while :; do i=$((i + 1)); head -c 1048576 /dev/zero > "fill-$i.bin"; done'
run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile safe --stage-limit 2M -- sh -c "$agent2"
id2=$(head -n 1 "$tmp/out")
check "a second session fills its stage and is held still" wait_for 30 held "$id2"
run "$tmp/out" "$tmp/err" --json destroy "$id2"
check "destroying a session held still leaves no process (exit $rc)" \
  test "$rc:$(json "$tmp/out" 'd["survivors"]' 2>&1)" = "0:0"

# Nothing of a stage goes unmeasured: 8 MiB under 300 nested folders
# (the walk used to stop at 256 levels and count nothing below), and 8 MiB
# in a folder the agent then makes unreadable (root reads it anyway; a
# user's daemon cannot, and calls the stage full: a limit it cannot
# measure is not enforced). Each session is limited to 2 MiB.
nested=$(printf 'd/%.0s' $(seq 300))
agent3="mkdir -p $nested && head -c 8388608 /dev/zero > ${nested}deep.bin && echo DEEP-DONE; exec sleep 600"
run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile safe --stage-limit 2M -- sh -c "$agent3"
id3=$(head -n 1 "$tmp/out")
check "8 MiB under 300 nested folders counts: the session is held still" wait_for 30 held "$id3"
agent4='mkdir closed && head -c 8388608 /dev/zero > closed/x.bin && chmod 000 closed && echo CLOSED-DONE; exec sleep 600'
run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile safe --stage-limit 2M -- sh -c "$agent4"
id4=$(head -n 1 "$tmp/out")
check "8 MiB in a folder made unreadable counts too: held still" wait_for 30 held "$id4"
# A stage whose root the agent made unreadable: a user's daemon cannot
# measure it at all, and holds it (root's reads it, and has nothing to hold).
if [[ $(id -u) != 0 ]]; then
  run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile safe --stage-limit 2M -- \
    sh -c 'chmod 000 . && echo ROOT-CLOSED; exec sleep 600'
  id5=$(head -n 1 "$tmp/out")
  check "a stage whose root was made unreadable is held still" wait_for 30 held "$id5"
  "$CTL" --json status "$id5" >"$tmp/status.json"
  check "…saying it cannot be measured" \
    test "$(json "$tmp/status.json" '"cannot be measured" in d["stage"]["reason"]')" = True
  "$CTL" destroy "$id5" >/dev/null 2>&1 || true
fi
"$CTL" destroy "$id3" >/dev/null 2>&1 || true
"$CTL" destroy "$id4" >/dev/null 2>&1 || true

"$CTL" destroy "$id" >/dev/null 2>&1 || true
echo "1..$n"
[[ $failures -eq 0 ]]
