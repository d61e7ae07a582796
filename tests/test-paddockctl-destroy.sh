#!/bin/bash
# test-paddockctl-destroy.sh — Destroy answers before a large folder is removed, and nothing of it is left, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# A session's folder holds its stage, and an agent's `npm install` leaves
# a hundred thousand files there. Destroy used to remove them on the
# daemon's main thread before answering: seconds in which no session's
# call or terminal was served. Now the folder is moved into the state
# dir's trash (STATE/trash) and removed by a worker; a daemon that quits
# removes what is queued first (within a bound), and one killed leaves
# the rest to the next, which removes it at its start and lists none of
# it. PADDOCK_TEST_TRASH_HOLD=PATH (the daemon's own environment) holds
# every removal while PATH exists, as a slow disk would: no timing here.
# A safe session's stage, or in the portable build the host executor's copy.
# Run as root and, through run-unprivileged.sh, as an unprivileged user.

# shellcheck source=paddockctl-lib.sh
source "$(dirname "$0")/paddockctl-lib.sh" "$@"

# A safe session's stage; in the portable build (no sandbox) the host
# executor's, which stages by copy as well.
profile=safe
if ! have_sandbox; then
  profile=host
elif ! unshare -Urm true 2>/dev/null; then
  skip "user namespaces are unavailable here, so no safe session (and no stage) can run"
fi

hold="$tmp/trash-hold"
trash="$tmp/state/trash"
export PADDOCK_TEST_TRASH_HOLD="$hold"

logs_have () { "$CTL" logs "$1" 2>/dev/null | grep -qF -- "$2"; }
answers () { "$CTL" list >/dev/null 2>&1; }
# What the trash holds: its entries, and every file under them.
trash_entries () { find "$trash" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
trash_files () { find "$trash" -type f 2>/dev/null | wc -l; }
trash_empty () { [[ $(trash_entries) == 0 ]]; }
not_listed () { "$CTL" --json list >"$tmp/list.json" 2>/dev/null &&
  json "$tmp/list.json" "'$1' not in [s['id'] for s in d['sessions']] or exit(1)" >/dev/null; }
no_rest_left_said () { ! grep -q 'the next daemon removes the rest' "$tmp/daemon.log"; }
held_lines () { grep -c "PADDOCK_TEST_TRASH_HOLD=.* so the removal of" "$tmp/daemon.log" || true; }

start_daemon ()
{
  "$DAEMON" --port-range "$PORT_RANGE" --state-dir "$tmp/state" >>"$tmp/daemon.log" 2>&1 &
  daemon_pid=$!
  wait_for 10 "$CTL" ports list
}
end_daemon ()
{
  kill "-$1" "$daemon_pid" 2>/dev/null || true
  wait "$daemon_pid" 2>/dev/null || true
  daemon_pid=""
}

# The library's daemon started before the hold was in the environment:
# this one has it.
end_daemon TERM
start_daemon || { not_ok "a daemon with the trash hold starts" "$(tail -20 "$tmp/daemon.log")"; echo "1..$n"; exit 1; }

FILES=${PADDOCK_TEST_DESTROY_FILES:-3000}
ws=$(mktemp -d "$tmp/ws.XXXXXX")
echo "the user's file" >"$ws/mine.txt"
agent="mkdir many && cd many && seq 1 $FILES | xargs touch && echo MADE-THEM; exec sleep 600"
# The first session also nests folders past PATH_MAX (2,100 levels of
# "d/", 4,200 bytes), as an agent may: all of it must go. (Python, as a
# shell's cd stops at PATH_MAX.)
DEPTH=2100
deep_agent="python3 -c 'import os; os.mkdir(\"deep\"); os.chdir(\"deep\"); [(os.mkdir(\"d\"), os.chdir(\"d\")) for _ in range($DEPTH)]; open(\"bottom\", \"w\").close()' && $agent"

# new_session [AGENT]: a safe session whose stage holds $FILES new files
# (made by AGENT, $agent unless given); its id in $id.
new_session ()
{
  run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile "$profile" -- sh -c "${1:-$agent}"
  id=$(head -n 1 "$tmp/out")
  [[ $rc == 0 ]] && wait_for 60 logs_have "$id" MADE-THEM
}
staged () { "$CTL" --json status "$1" >"$tmp/status.json" 2>/dev/null && [[ $(json "$tmp/status.json" 'd["staging"]') != none ]]; }

# ---- Destroy answers while the folder's removal is held -------------------------------------

if new_session "$deep_agent" && staged "$id"; then ok "a $profile session made $FILES files in its stage"; else
  not_ok "a $profile session made $FILES files in its stage" "$(cat "$tmp/err" "$tmp/status.json")"; fi
check "nothing of them is in the user's folder" test ! -e "$ws/many" -a ! -e "$ws/deep"
touch "$hold"
run "$tmp/out" "$tmp/err" --json destroy "$id"
check "destroy answers while the removal is held: destroyed, 0 survivors" \
  test "$rc:$(json "$tmp/out" '(d["state"], d["survivors"])' 2>&1)" = "0:('destroyed', 0)"
check "the session's folder is gone from the sessions folder at once" test ! -e "$tmp/state/sessions/$id"
check "it is in the trash, whole (its stage's $FILES files)" \
  test "$(trash_entries):$(( $(trash_files) >= FILES ))" = "1:1"
check "…and its folders nested $DEPTH deep, past PATH_MAX" \
  test "$(find "$trash" -name bottom -type f 2>/dev/null | wc -l)" = 1
check "the removal is the one held (the daemon's log says so)" wait_for 10 test "$(held_lines)" -ge 1
check "the daemon serves meanwhile" answers
check "the destroyed session is not listed" not_listed "$id"
check "a new session starts meanwhile" new_session
rm -f "$hold"
check "once let go, the trash is emptied" wait_for 30 trash_empty
check "nothing of the user's folder went with it" test "$(cat "$ws/mine.txt")" = "the user's file"

# ---- a daemon that quits removes what is queued first --------------------------------------

touch "$hold"
second=$id
run "$tmp/out" "$tmp/err" destroy "$second"
check "a second destroy answers" test "$rc" = 0
check "its folder waits in the trash" test "$(trash_entries)" = 1
kill -TERM "$daemon_pid"
# The hold is let go only once the quitting daemon says it waits for the
# removal: one that did not wait would be gone by then, its folder left.
if wait_for 10 grep -q "Waiting for a destroyed session's folder to be removed" "$tmp/daemon.log"; then
  check "a daemon told to quit waits for the held removal" kill -0 "$daemon_pid"
  rm -f "$hold"
  wait "$daemon_pid" 2>/dev/null || true
  daemon_pid=""
  check "…removes it before it goes" trash_empty
  check "…and does not say it left some" no_rest_left_said
else
  not_ok "a daemon told to quit waits for the held removal" "$(tail -20 "$tmp/daemon.log")"
  rm -f "$hold"
  end_daemon KILL
fi

# ---- one killed leaves it to the next, which lists none of it --------------------------------

start_daemon || not_ok "a daemon starts again" "$(tail -20 "$tmp/daemon.log")"
touch "$hold"
if new_session; then ok "a third session made its files"; else not_ok "a third session made its files" "$(cat "$tmp/err")"; fi
third=$id
run "$tmp/out" "$tmp/err" destroy "$third"
check "its destroy answers" test "$rc" = 0
end_daemon KILL
check "a daemon killed mid-removal leaves the folder in the trash" test "$(trash_entries)" = 1
rm -f "$hold"
unset PADDOCK_TEST_TRASH_HOLD
if start_daemon; then ok "the next daemon starts"; else not_ok "the next daemon starts" "$(tail -20 "$tmp/daemon.log")"; fi
check "it empties the trash" wait_for 30 trash_empty
check "it lists none of what was there" not_listed "$third"

echo "1..$n"
[[ $failures == 0 ]]
