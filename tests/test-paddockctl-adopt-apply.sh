#!/bin/bash
# test-paddockctl-adopt-apply.sh — an Apply in flight when the daemon is killed or replaced, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# A running safe session's Apply is held at a chosen step of its journal
# by the daemon's own test switch (PADDOCK_TEST_APPLY_STEP_HOLD, see
# daemon/staging/paddock-apply-journal.c) while the daemon is killed with
# SIGKILL, or replaced (--replace). What a user checks afterwards: the
# session runs on in the same sandbox; the workspace is all old or all
# new, never half (rolled back before the batch's commit point, finished
# after it, as paddock-apply.c says); LastRecovery and the ledger say what
# happened; review lists exactly what is left; the next Apply works. A
# replaced daemon answers its Apply before it hands the session over.
#
# Three files changed make a batch of 15 steps: 1 journal "preparing",
# 2-4 temporaries, 5 "applying", 6-8 renames, 9 the folder's fsync,
# 10 "committed", 11 the ledger, 12-14 backups, 15 the journal's removal.

needs_safe_sessions=true
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
hold="$tmp/apply-hold"
ws_is () { [[ "$(cat "$ws/a.txt" "$ws/b.txt" "$ws/c.txt" 2>/dev/null | tr '\n' ' ')" == "$1 a $1 b $1 c " ]]; }
no_temps () { ! ls -a "$ws" | grep -q '^\.paddock-apply-'; }
review_paths () { "$CTL" --json review "$id" 2>/dev/null | json /dev/stdin "sorted(c['path'] for c in d['changes'])" 2>/dev/null; }
change_all () { "$CTL" exec "$id" -- sh -c "for f in a b c; do echo \"$1 \$f\" >\$f.txt; done" </dev/null >/dev/null 2>&1; }
# The daemon logs each batch it holds, with the step: the Nth hold of step S.
holds_at () { [[ "$(grep -c "waits before its step $1 " "$tmp/daemon.log")" -ge "$2" ]]; }
agent_answers () { "$CTL" send "$id" "$1"$'\n' && wait_for 5 sh -c "'$CTL' logs --raw '$id' | grep -q 'got:$1'"; }
# The ledger's lines of batch $1: "<applied> <recovered as>".
ledger_says ()
{
  find "$tmp/state" -name ledger.jsonl -exec cat {} + 2>/dev/null | "$PYTHON" -c 'import json, sys
lines = [json.loads(l) for l in sys.stdin if l.strip()]
print(sum(1 for l in lines if l.get("batch") == sys.argv[1]),
      ",".join(l["recovery"] for l in lines if l.get("recovered_batch") == sys.argv[1]) or "-")' "$1"
}
held_batch () { sed -n "s/.*batch \([0-9a-f]*\) waits before its step $1 .*/\1/p" "$tmp/daemon.log" | tail -n 1; }

for f in a b c; do echo "old $f" >"$ws/$f.txt"; done
kill_daemon
PADDOCK_TEST_APPLY_STEP_HOLD="$hold" start_daemon || true
run "$tmp/create.json" "$tmp/create.err" --json create --workspace "$ws" --profile safe -- \
  sh -c 'echo apply-agent; while read -r line; do echo "got:$line"; done'
id=$(json "$tmp/create.json" 'd["id"]' 2>/dev/null || true)
wait_for 10 sh -c "'$CTL' logs --raw '$id' | grep -q apply-agent" || true
helper=$(record "$id" pid)
change_all new
check "a safe session has changes to apply" test "$(review_paths)" == "['a.txt', 'b.txt', 'c.txt']"

# ---- SIGKILL before the commit point: rolled back -------------------------------
echo 7 >"$hold"
"$CTL" --json apply "$id" >"$tmp/apply.json" 2>"$tmp/apply.err" &
applier=$!
wait_for 10 holds_at 7 1 || true
check "an Apply is held half-way, one file renamed in" \
  sh -c "grep -qx 'new a' '$ws/a.txt' && grep -qx 'old b' '$ws/b.txt' && grep -qx 'old c' '$ws/c.txt'"
kill_daemon
apply_rc=0
wait_for 10 gone "$applier" || true
wait "$applier" 2>/dev/null || apply_rc=$?
check "the Apply in flight fails when its daemon is killed, not hung" test "$apply_rc" == 1
if PADDOCK_TEST_APPLY_STEP_HOLD="$hold" start_daemon; then ok "a new daemon starts"; else not_ok "a new daemon starts" "$(tail -20 "$tmp/daemon.log")"; fi
wait_for 10 state_is "$id" running || true
check "the session is running again, the same sandbox" \
  test "$(field "$id" 'd["state"]') $(record "$id" pid)" == "running $helper"
check "its workspace is all old: the batch was rolled back" ws_is old
check "…with none of the batch's temporaries left" no_temps
check "LastRecovery says the batch was rolled back" \
  test "$(field "$id" 'd["last_recovery"]["recovery"]')" == rolled-back
check "…and the ledger says so, with no line of the batch applied" test "$(ledger_says "$(held_batch 7)")" == "0 rolled-back"
check "review lists exactly the changes not applied" test "$(review_paths)" == "['a.txt', 'b.txt', 'c.txt']"
rm -f "$hold"
run "$tmp/apply.json" "$tmp/apply.err" --json apply "$id"
[[ $rc == 0 ]] || echo "# apply: $(cat "$tmp/apply.json" "$tmp/apply.err" | tr "\n" " ")"
check "a new Apply applies them all, with no conflict" \
  test "$rc:$(json "$tmp/apply.json" 'sorted(d["applied"]), d["conflicts"]' 2>&1)" == "0:(['a.txt', 'b.txt', 'c.txt'], [])"
check "…and the workspace is all new" ws_is new

# ---- SIGKILL after the commit point: finished ------------------------------------
change_all newer
echo 11 >"$hold"
"$CTL" --json apply "$id" >"$tmp/apply.json" 2>"$tmp/apply.err" &
applier=$!
wait_for 10 holds_at 11 1 || true
check "an Apply held after its commit point, before its ledger line" ws_is newer
kill_daemon
wait "$applier" 2>/dev/null || true
rm -f "$hold"
if start_daemon; then ok "a new daemon starts"; else not_ok "a new daemon starts" "$(tail -20 "$tmp/daemon.log")"; fi
wait_for 10 state_is "$id" running || true
check "the session is running again, the same sandbox" \
  test "$(field "$id" 'd["state"]') $(record "$id" pid)" == "running $helper"
check "its workspace is all new: the batch was finished" ws_is newer
check "…with none of the batch's temporaries left" no_temps
check "LastRecovery says it was rolled forward" \
  test "$(field "$id" 'd["last_recovery"]["recovery"]')" == rolled-forward
check "…and the ledger has the batch's line, once, and its recovery" \
  test "$(ledger_says "$(held_batch 11)")" == "1 rolled-forward"
check "review lists nothing" test "$(review_paths)" == "[]"
"$CTL" exec "$id" -- sh -c 'echo "again a" >a.txt' </dev/null >/dev/null 2>&1 || true
run "$tmp/apply.json" "$tmp/apply.err" --json apply "$id"
[[ $rc == 0 ]] || echo "# apply: $(cat "$tmp/apply.json" "$tmp/apply.err" | tr "\n" " ")"
check "a file changed again after the recovery is applied, with no conflict" \
  test "$rc:$(json "$tmp/apply.json" 'd["applied"], d["conflicts"]' 2>&1):$(cat "$ws/a.txt")" == "0:(['a.txt'], []):again a"
check "the agent still answers" agent_answers after-kill

# ---- --replace with an Apply in flight: answered, then handed over ---------------
kill_daemon
PADDOCK_TEST_APPLY_STEP_HOLD="$hold" start_daemon || true
wait_for 10 state_is "$id" running || true
change_all newest
echo 7 >"$hold"
"$CTL" --json apply "$id" >"$tmp/apply.json" 2>"$tmp/apply.err" &
applier=$!
check "an Apply is held when the daemon is replaced" wait_for 10 holds_at 7 2
old_daemon=$daemon_pid
"$DAEMON" --port-range "$PORT_RANGE" --replace --state-dir "$tmp/state" >>"$tmp/daemon.log" 2>&1 &
daemon_pid=$!
check "the old daemon waits for its Apply before it hands over" \
  wait_for 10 grep -q "Apply call(s) in flight: answering them before handing over" "$tmp/daemon.log"
check "…and is still there" alive "$old_daemon"
rm -f "$hold"
apply_rc=0
wait_for 10 gone "$applier" || true
wait "$applier" 2>/dev/null || apply_rc=$?
check "the Apply's caller hears it applied every change" \
  test "$apply_rc:$(json "$tmp/apply.json" 'sorted(d["applied"]), d["conflicts"]' 2>&1)" == "0:(['a.txt', 'b.txt', 'c.txt'], [])"
check "the replaced daemon exits" wait_for 10 gone "$old_daemon"
wait "$old_daemon" 2>/dev/null || true
check "the new daemon serves" wait_for 10 "$CTL" ports list
wait_for 10 state_is "$id" running || true
check "the session is running under the new daemon, the same sandbox" \
  test "$(field "$id" 'd["state"]') $(record "$id" pid)" == "running $helper"
check "its workspace is all new" ws_is newest
check "…with none of the batch's temporaries left" no_temps
check "no recovery was needed (LastRecovery is still the earlier one)" \
  test "$(field "$id" 'd["last_recovery"]["recovery"]')" == rolled-forward
check "…and the ledger has the batch's line, once, with no recovery" \
  test "$(ledger_says "$(json "$tmp/apply.json" 'd["journal"]' 2>/dev/null)")" == "1 -"
check "review lists nothing after --replace" test "$(review_paths)" == "[]"
check "the agent still answers" agent_answers after-replace
check "Destroy works on it" sh -c "'$CTL' destroy '$id' >/dev/null"
check "its sandbox is gone" wait_for 5 gone "$helper"

echo "1..$n"
