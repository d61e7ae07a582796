#!/bin/bash
# test-paddockctl-damaged.sh — sessions whose record is damaged are listed, reviewable and appliable, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Four sessions stage a file each, the daemon stops, and their
# session.json is damaged: one cut short in the middle of a member (as a
# torn write leaves it), one cut short too, one overwritten with garbage,
# one removed. A new daemon must list all four as damaged, with the
# reason; the first two keep their stage: review lists the file, apply
# puts it in the workspace, drop empties the stage; the others (their
# workspace lost) are still listed and can be destroyed. A daemon started
# after that (the records whole again) still lists all four as damaged,
# with the same reasons, until they are destroyed. Nothing is
# dropped silently.

needs_safe_sessions=true
# shellcheck source=paddockctl-lib.sh
source "$(dirname "$0")/paddockctl-lib.sh" "$@"

SANDBOX="$PADDOCK_BUILD_ROOT/daemon/sandbox/paddock-sandbox"
[[ -x "$SANDBOX" ]] || skip "paddock-sandbox is not built"
if ! unshare -Urm true 2>/dev/null; then
  skip "user namespaces are unavailable here, so no safe session can run"
fi

field ()
{
  "$CTL" --json status "$1" >"$tmp/field.json" 2>/dev/null || return 1
  json "$tmp/field.json" "$2"
}
state_is () { [[ "$(field "$1" 'd["state"]')" == "$2" ]]; }
start_daemon ()
{
  "$DAEMON" --port-range "$PORT_RANGE" --state-dir "$tmp/state" >>"$tmp/daemon.log" 2>&1 &
  daemon_pid=$!
  wait_for 10 "$CTL" ports list
}
stop_daemon ()
{
  kill -TERM "$daemon_pid" 2>/dev/null || true
  wait "$daemon_pid" 2>/dev/null || true
  daemon_pid=""
}
changes () { "$CTL" --json review "$1" >"$tmp/review.json" 2>/dev/null || return 1;
             json "$tmp/review.json" '[c["path"] for c in d["changes"]]'; }

ids=()
for which in cut drop garbage missing; do
  mkdir -p "$tmp/ws-$which"
  ws=$(realpath "$tmp/ws-$which")
  run "$tmp/create.json" "$tmp/create.err" --json create --workspace "$ws" --profile safe \
    -- sh -c "echo $which >staged-$which.txt"
  id=$(json "$tmp/create.json" 'd["id"]' 2>/dev/null || true)
  if [[ $rc == 0 && -n "$id" ]] && wait_for 30 state_is "$id" exited; then
    ok "session $which stages a file and exits"
  else
    not_ok "session $which stages a file and exits" "$(cat "$tmp/create.json" "$tmp/create.err")"
  fi
  ids+=("$id")
done
cut_id=${ids[0]} drop_id=${ids[1]} garbage_id=${ids[2]} missing_id=${ids[3]}

stop_daemon
# Cut short inside the "owner" member: the workspace survives, the
# staging kind (near the end) does not.
for id in "$cut_id" "$drop_id"; do
  "$PYTHON" - "$tmp/state/sessions/$id/session.json" <<'PY'
import sys
p = sys.argv[1]
text = open(p, "rb").read()
cut = text.index(b'"owner"') + 5
open(p, "wb").write(text[:cut])
PY
done
printf '\x00\x01 not a record {' >"$tmp/state/sessions/$garbage_id/session.json"
rm "$tmp/state/sessions/$missing_id/session.json"
check "the records are damaged (not JSON)" \
  sh -c "! '$PYTHON' -c 'import json,sys; json.load(open(sys.argv[1]))' '$tmp/state/sessions/$cut_id/session.json' 2>/dev/null"

if start_daemon; then ok "the daemon starts with damaged records"
else not_ok "the daemon starts with damaged records" "$(tail -20 "$tmp/daemon.log")"; fi

run "$tmp/list.json" "$tmp/list.err" --json list
check "list shows all four sessions" \
  test "$(json "$tmp/list.json" 'sorted(s["id"] for s in d["sessions"])' 2>/dev/null)" == \
       "$("$PYTHON" -c 'import sys; print(sorted(sys.argv[1:]))' "${ids[@]}")"
check "each is listed as damaged, with the reason" \
  test "$(json "$tmp/list.json" 'all("session record is damaged" in (s["damaged"] or "") for s in d["sessions"])' 2>/dev/null)" == True
check "status --json says damaged" \
  sh -c "'$CTL' --json status '$cut_id' | grep -q '\"damaged\":\"the session record is damaged'"
check "the human list marks it (damaged)" sh -c "'$CTL' list | grep '$cut_id' | grep -qF '(damaged)'"
check "the human status has a damaged line" sh -c "'$CTL' status '$cut_id' | grep -q '^damaged: '"
check "the cut record kept its workspace" \
  test "$(field "$cut_id" 'd["workspace"]')" == "$(realpath "$tmp/ws-cut")"
check "the cut record's staging kind comes from its folder" \
  test "$(field "$cut_id" 'd["staging"]')" != none
check "the garbage record says its workspace is lost" \
  sh -c "'$CTL' --json status '$garbage_id' | grep -q 'lost: .*workspace'"
check "the session without a record is listed, saying so" \
  sh -c "'$CTL' --json status '$missing_id' | grep -q 'No such file'"
check "the log names the damaged record" grep -q "Session $garbage_id: the session record is damaged" "$tmp/daemon.log"

check "review of a damaged session lists its staged file" test "$(changes "$cut_id")" == "['staged-cut.txt']"
run "$tmp/apply.json" "$tmp/apply.err" --json apply "$cut_id"
check "apply of a damaged session succeeds" test "$rc" == 0
check "the workspace got the applied file" test "$(cat "$tmp/ws-cut/staged-cut.txt" 2>&1)" == cut
check "nothing is left to review after apply" test "$(changes "$cut_id")" == "[]"

check "review of the second lists its file" test "$(changes "$drop_id")" == "['staged-drop.txt']"
run "$tmp/drop.json" "$tmp/drop.err" --json drop "$drop_id"
check "drop of a damaged session succeeds" test "$rc" == 0
check "after drop nothing is left to review" test "$(changes "$drop_id")" == "[]"
check "drop left the workspace alone" test ! -e "$tmp/ws-drop/staged-drop.txt"

# The daemon wrote each record whole again when it listed the sessions
# (and again at apply and drop): a later daemon must still list every one
# as damaged, with the reason the first one found.
damaged_of () { "$CTL" --json list | "$PYTHON" -c '
import json, sys
print(sorted((s["id"], s["damaged"]) for s in json.load(sys.stdin)["sessions"]))'; }
damaged_before=$(damaged_of 2>&1)
stop_daemon
check "the records were written whole again" \
  "$PYTHON" -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/state/sessions/$cut_id/session.json"
if start_daemon; then ok "a daemon starts again"
else not_ok "a daemon starts again" "$(tail -20 "$tmp/daemon.log")"; fi
check "after another restart all four are still damaged, with the same reasons" \
  test "$(damaged_of 2>&1)" == "$damaged_before" -a "$(grep -o "session record is damaged" <<<"$damaged_before" | wc -l)" == 4
check "…and the human status still has the damaged line" sh -c "'$CTL' status '$cut_id' | grep -q '^damaged: '"

for id in "${ids[@]}"; do
  run "$tmp/destroy.json" "$tmp/destroy.err" --json destroy "$id"
  check "destroy of damaged session $id succeeds" test "$rc" == 0
done
run "$tmp/list.json" "$tmp/list.err" --json list
check "none is listed after destroy" test "$(json "$tmp/list.json" 'len(d["sessions"])' 2>/dev/null)" == 0
check "their folders are gone" test -z "$(ls "$tmp/state/sessions" 2>/dev/null | grep -v '^\.' || true)"

echo "1..$n"
(( failures == 0 ))
