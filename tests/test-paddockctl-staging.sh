#!/bin/bash
# test-paddockctl-staging.sh — a safe session's writes are staged, reviewed and applied, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# A session edits, creates, deletes and renames files and folders; the real
# workspace must stay byte-identical until apply, then match the stage.
# Also: one row per rename, conflicts left alone, --force-path, diffs,
# drop, checkpoints, and an apply interrupted by SIGKILL of the daemon at
# every step (PADDOCK_FAULT_APPLY_STEP) that leaves the workspace entirely
# old or entirely new once a new daemon has started.

needs_safe_sessions=true
# shellcheck source=paddockctl-lib.sh
source "$(dirname "$0")/paddockctl-lib.sh" "$@"

SANDBOX="$PADDOCK_BUILD_ROOT/daemon/sandbox/paddock-sandbox"
[[ -x "$SANDBOX" ]] || skip "paddock-sandbox is not built"
if ! unshare -Urm true 2>/dev/null; then
  skip "user namespaces are unavailable here, so no safe session can run"
fi

# snapshot DIR: every entry below DIR with its type, mode, content hash or
# link target, one per line, sorted. Runs on the host and inside a session.
SNAPSHOT_PY='
import hashlib, os, stat, sys
root = sys.argv[1]
out = []
for base, dirs, files in os.walk(root):
    for name in sorted(dirs + files):
        p = os.path.join(base, name)
        rel = os.path.relpath(p, root)
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            what = "link:" + os.readlink(p)
        elif stat.S_ISDIR(st.st_mode):
            what = "dir"
        else:
            with open(p, "rb") as f:
                what = "file:" + hashlib.sha256(f.read()).hexdigest()
        out.append("%r %o %s" % (rel.encode("utf-8", "surrogateescape"), stat.S_IMODE(st.st_mode), what))
print("\n".join(sorted(out)))
'
snapshot () { "$PYTHON" -c "$SNAPSHOT_PY" "$1"; }

field ()
{
  "$CTL" --json status "$1" >"$tmp/field.json" 2>/dev/null || return 1
  json "$tmp/field.json" "$2"
}
state_is () { [[ "$(field "$1" 'd["state"]')" == "$2" ]]; }
logs_have () { "$CTL" logs "$1" 2>/dev/null | grep -qF -- "$2"; }

start_daemon ()
{
  "$DAEMON" --port-range "$PORT_RANGE" --state-dir "$tmp/state" >>"$tmp/daemon.log" 2>&1 &
  daemon_pid=$!
  wait_for 10 "$CTL" ports list
}

ws="$tmp/workspace"
mkdir -p "$ws/dir" "$ws/keep"
printf 'line one\nline two\n' >"$ws/edit.txt"
seq 1 200 >"$ws/rename-me.txt"
printf 'inside a folder\n' >"$ws/dir/moved.txt"
printf 'doomed\n' >"$ws/delete-me.txt"
printf 'session and user both edit this\n' >"$ws/contested.txt"
printf 'untouched\n' >"$ws/keep/same.txt"
printf '#!/bin/sh\necho hi\n' >"$ws/script.sh"
mkdir -p "$ws/becomes-file" && printf 'was in a folder\n' >"$ws/becomes-file/inner.txt"
printf 'a file that becomes a folder\n' >"$ws/becomes-folder"
ln -s edit.txt "$ws/link"
ws=$(realpath "$ws")
snapshot "$ws" >"$tmp/before"

# The agent: every kind of change, then a marker, then it waits.
agent='
set -e
echo "changed" >> edit.txt
mv rename-me.txt renamed.txt
rm delete-me.txt
mkdir -p new/deeper && echo "brand new" > new/deeper/file.txt
mv dir moved-dir
chmod +x script.sh
rm link && ln -s renamed.txt link
echo "session version" > contested.txt
printf "\000\001\002binary" > blob.bin
rm -r becomes-file && echo "now a file" > becomes-file
rm becomes-folder && mkdir becomes-folder && echo "inside" > becomes-folder/inside.txt
echo STAGED-DONE
exec sleep 600'

run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile safe -- sh -c "$agent"
id=$(head -n 1 "$tmp/out")
if [[ $rc -ne 0 ]]; then
  not_ok "a safe session starts" "$(cat "$tmp/out" "$tmp/err")" "$(tail -n 20 "$tmp/daemon.log")"
  echo "1..$n"
  exit 1
fi
ok "a safe session starts"
check "the session made its changes" wait_for 20 logs_have "$id" STAGED-DONE

run "$tmp/out" "$tmp/err" --json status "$id"
expected_staging=overlay
[[ "${PADDOCK_STAGING:-}" == copy ]] && expected_staging=copy
check "status says the workspace is staged ($expected_staging)" \
  test "$(json "$tmp/out" 'd["staging"]')" = "$expected_staging"

run "$tmp/out" "$tmp/err" --json status --review "$id"
check "status --review: every requested layer of the safe boundary is observed enforced" \
  test "$rc:$(json "$tmp/out" '[l["layer"] for l in d["boundary"] if l["requested"] and l["status"] != "enforced"]' 2>&1)" = "0:[]"
check "…including the canary probes the sandbox ran inside it" \
  test "$(json "$tmp/out" 'sorted(l["layer"] for l in d["boundary"] if l["layer"].startswith("probe:") and l["status"] == "enforced")' 2>&1)" \
       = "['probe:abstract-socket', 'probe:hidden-path', 'probe:landlock-fs', 'probe:landlock-net', 'probe:signal-outside', 'probe:write-outside']"

snapshot "$ws" >"$tmp/during"
check "the real workspace is byte-identical while the session runs" cmp -s "$tmp/before" "$tmp/during"

# The user edits the contested file meanwhile, and one the session never
# touched (a copy stage still holds its old version: it must not come back).
printf 'the user edited this\n' >"$ws/contested.txt"
printf 'the user edited an untouched file\n' >"$ws/keep/same.txt"
snapshot "$ws" >"$tmp/before"

run "$tmp/out" "$tmp/err" --json review "$id"
check "review --json answers" test "$rc" = 0
rows () { json "$tmp/out" "sorted((c['kind'], c['old_path'], c['path']) for c in d['changes'])"; }
check "a renamed file is one renamed row" \
  grep -qF "('renamed', 'rename-me.txt', 'renamed.txt')" <(rows)
check "a moved folder's file is one renamed row" \
  grep -qF "('renamed', 'dir/moved.txt', 'moved-dir/moved.txt')" <(rows)
check "an edit is a modified row" grep -qF "('modified', None, 'edit.txt')" <(rows)
check "a deletion is a deleted row" grep -qF "('deleted', None, 'delete-me.txt')" <(rows)
check "a new file is an added row" grep -qF "('added', None, 'new/deeper/file.txt')" <(rows)
check "chmod +x is a mode-changed row" grep -qF "('mode-changed', None, 'script.sh')" <(rows)
check "a re-pointed symlink is a modified link, not followed" \
  test "$(json "$tmp/out" "[c['type'] for c in d['changes'] if c['path'] == 'link']")" = "['symlink']"
check "unchanged files, and one only the user edited since, are not listed" \
  test "$(json "$tmp/out" "[c for c in d['changes'] if c['path'].startswith('keep')]")" = "[]"
check "the binary file is flagged binary" \
  test "$(json "$tmp/out" "[c['binary'] for c in d['changes'] if c['path'] == 'blob.bin']")" = "[True]"
check "the edit counts one added line" \
  test "$(json "$tmp/out" "[(c['added_lines'], c['removed_lines']) for c in d['changes'] if c['path'] == 'edit.txt']")" = "[(1, 0)]"
check "the contested file is a conflict, the others are not" \
  test "$(json "$tmp/out" "sorted(c['path'] for c in d['changes'] if c['conflict'])")" = "['contested.txt']"

run "$tmp/out" "$tmp/err" review --diff "$id" edit.txt
check "review --diff PATH prints a unified diff" \
  grep -qx '+changed' "$tmp/out"
run "$tmp/out" "$tmp/err" --json review --diff "$id" no-such-file
check "review --diff of a path not in the list: NotFound" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.NotFound"

run "$tmp/out" "$tmp/err" --json checkpoint "$id" create first
check "checkpoint create names the checkpoint" \
  test "$rc:$(json "$tmp/out" 'd["checkpoint"]' 2>&1)" = "0:first"

# Apply while the session runs: everything but the conflict.
run "$tmp/out" "$tmp/err" --json apply "$id"
check "apply leaves the conflict alone and says so (exit 1)" \
  test "$rc:$(json "$tmp/out" 'd["conflicts"]' 2>&1)" = "1:['contested.txt']"
check "the user's edit of the conflicting file survives" \
  grep -qx 'the user edited this' "$ws/contested.txt"
check "the user's edit of a file the session never touched survives" \
  grep -qx 'the user edited an untouched file' "$ws/keep/same.txt"
check "the applied paths include both sides of the rename" \
  test "$(json "$tmp/out" "sorted(p for p in d['applied'] if 'rename' in p)")" = "['rename-me.txt', 'renamed.txt']"
check "apply names its batch" test -n "$(json "$tmp/out" 'd["journal"]')"

run "$tmp/out" "$tmp/err" --json apply --force-path contested.txt "$id"
check "--force-path applies the conflicting file" \
  test "$rc:$(json "$tmp/out" 'd["applied"]' 2>&1)" = "0:['contested.txt']"

check "…and an apply of everything leaves it alone too" \
  grep -qx 'the user edited an untouched file' "$ws/keep/same.txt"

"$CTL" exec "$id" -- python3 -c "$SNAPSHOT_PY" "$ws" >"$tmp/stage-view" 2>"$tmp/err" || true
snapshot "$ws" >"$tmp/after"
if [[ "$expected_staging" == copy ]]; then
  # A copy does not see what the user changed after it was made: the file
  # only they edited differs, rightly.
  check "after apply the workspace matches the session's view exactly (but for the user's own edit)" \
    cmp -s <(grep -v "^b'keep/same.txt' " "$tmp/stage-view") <(grep -v "^b'keep/same.txt' " "$tmp/after")
else
  check "after apply the workspace matches the session's view exactly" cmp -s "$tmp/stage-view" "$tmp/after"
fi

run "$tmp/out" "$tmp/err" --json review "$id"
check "after apply, review lists nothing" test "$rc:$(json "$tmp/out" 'd["changes"]' 2>&1)" = "0:[]"

ledger=$(ls "$tmp"/state/sessions/"$id"/stage/ledger.jsonl 2>/dev/null || true)
check "the apply ledger has a line per batch" test "$(wc -l <"${ledger:-/dev/null}")" = 2

# Drop and checkpoints need the session stopped.
run "$tmp/out" "$tmp/err" --json drop "$id"
check "drop while running: Busy" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.Busy"
"$CTL" stop --grace 0 "$id" >/dev/null 2>&1 || true

run "$tmp/out" "$tmp/err" --json drop "$id"
check "drop of a stopped session succeeds" test "$rc" = 0
snapshot "$ws" >"$tmp/after-drop"
check "drop never touches the workspace" cmp -s "$tmp/after" "$tmp/after-drop"

# ---- net none: a network namespace of the session's own ------------------------------

# A server on the host's loopback that the session must not reach.
"$PYTHON" -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept(); c.sendall(b"host-loopback-reached\n"); c.close()' >"$tmp/host-port" &
background_pids+=($!)
wait_for 5 test -s "$tmp/host-port"
host_port=$(head -n 1 "$tmp/host-port")
ws3="$tmp/offline"
mkdir -p "$ws3"
# Its own loopback is shown by binding its leased port there (in its own
# namespace it may bind any, only the leased ones are forwarded in).
run "$tmp/out" "$tmp/err" create --workspace "$ws3" --profile safe --net none --port web -- sh -c \
  "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", $host_port), timeout=2)' 2>&1 | tail -n 1; \
   python3 -c 'import os, socket; s = socket.socket(); s.bind((\"127.0.0.1\", int(os.environ[\"PORT\"]))); s.listen(); print(\"own-loopback\", s.getsockname()[1] > 0)'; \
   echo OFFLINE-DONE; exec sleep 600"
id3=$(head -n 1 "$tmp/out")
check "a --net none session starts" test "$rc" = 0
check "…and finishes its probes" wait_for 20 logs_have "$id3" OFFLINE-DONE
check "…cannot reach a server on the host's loopback" \
  bash -c "\"$CTL\" logs $id3 | grep -q 'ConnectionRefusedError' && ! \"$CTL\" logs $id3 | grep -q host-loopback-reached"
check "…but has a loopback of its own" logs_have "$id3" "own-loopback True"
run "$tmp/out" "$tmp/err" --json status --review "$id3"
check "…and status says net none, its network layer enforced, the connect probe blocked" \
  test "$(json "$tmp/out" '(d["net"], [(l["requested"], l["status"]) for l in d["boundary"] if l["layer"] in ("network", "probe:connect-outside")])' 2>&1)" \
       = "('none', [(True, 'enforced'), (True, 'enforced')])"
"$CTL" destroy "$id3" >/dev/null 2>&1 || true

# ---- right after the start: the baseline is walked later ------------------------------

# The workspace's baseline is walked a while after the start, or when a
# review first needs it: a change the agent makes at once, reviewed at once,
# is listed, and is no conflict; git in the session sees the repository
# clean, then the file the session modified.
ws4="$tmp/early"
mkdir -p "$ws4"
ws4=$(realpath "$ws4")
git_env=(GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org
         GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org)
if command -v git >/dev/null; then
  (cd "$ws4" && env "${git_env[@]}" git init -q && printf 'tracked\n' >tracked.txt &&
   env "${git_env[@]}" git add tracked.txt && env "${git_env[@]}" git commit -q -m t)
fi
printf 'before\n' >"$ws4/early.txt"
# Not a timing assertion: the file (and the folder it was made in) must be
# older than the start by more than the file clock's tick, or the start
# itself calls them changed since (both would be conflicts).
sleep 0.1
run "$tmp/out" "$tmp/err" create --workspace "$ws4" --profile safe -- sh -c \
  'echo "by the agent, at once" > early.txt; echo "new, at once" > early-new.txt; echo EARLY-DONE; exec sleep 600'
id4=$(head -n 1 "$tmp/out")
check "a session that writes at once starts" test "$rc" = 0
check "…and writes" wait_for 20 logs_have "$id4" EARLY-DONE
run "$tmp/out" "$tmp/err" --json review "$id4"
check "a review right after the start lists the agent's first writes, without conflicts" \
  test "$rc:$(json "$tmp/out" "sorted((c['kind'], c['path'], c['conflict']) for c in d['changes'])" 2>&1)" \
       = "0:[('added', 'early-new.txt', False), ('modified', 'early.txt', False)]"
if command -v git >/dev/null; then
  git_in=(env "${git_env[@]}" git -c safe.directory='*')
  "$CTL" exec "$id4" -- "${git_in[@]}" status --porcelain --untracked-files=no >"$tmp/git-out" 2>"$tmp/err"
  check "git status in the session: the repository is clean" \
    test "$?:$(cat "$tmp/git-out")" = "0:"
  "$CTL" exec "$id4" -- sh -c 'echo more >> tracked.txt' >/dev/null 2>&1
  "$CTL" exec "$id4" -- "${git_in[@]}" status --porcelain --untracked-files=no >"$tmp/git-out" 2>"$tmp/err"
  check "git status in the session shows the file it modified" \
    test "$?:$(cat "$tmp/git-out")" = "0: M tracked.txt"
  check "…which the host's copy does not show" \
    test "$(cd "$ws4" && env "${git_env[@]}" git status --porcelain --untracked-files=no)" = ""

  # The agent commits in its session: a file added, then removed from the
  # tree (it stays in history). The commits arrive as a branch, nothing else.
  host_git=(env "${git_env[@]}" git -C "$ws4")
  head_before=$("${host_git[@]}" symbolic-ref HEAD):$("${host_git[@]}" rev-parse HEAD)
  config_before=$(sha256sum "$ws4/.git/config")
  "$CTL" exec "$id4" -- sh -c 'echo "agent secret" > secret.txt' >/dev/null 2>&1 || echo "exec failed ($?)" >>"$tmp/err"
  "$CTL" exec "$id4" -- "${git_in[@]}" add secret.txt tracked.txt >/dev/null 2>"$tmp/err" || echo "exec failed ($?)" >>"$tmp/err"
  "$CTL" exec "$id4" -- "${git_in[@]}" commit -q -m 'agent: add secret' >/dev/null 2>>"$tmp/err" || echo "exec failed ($?)" >>"$tmp/err"
  "$CTL" exec "$id4" -- "${git_in[@]}" rm -q secret.txt >/dev/null 2>>"$tmp/err" || echo "exec failed ($?)" >>"$tmp/err"
  "$CTL" exec "$id4" -- "${git_in[@]}" commit -q -m 'agent: remove secret' >/dev/null 2>>"$tmp/err" || echo "exec failed ($?)" >>"$tmp/err"
  agent_tip=$("$CTL" exec "$id4" -- "${git_in[@]}" rev-parse HEAD 2>>"$tmp/err" || true)
  run "$tmp/out" "$tmp/err2" --json review "$id4"
  check "review --json lists the agent's two commits, newest first, with their files" \
    test "$rc:$(json "$tmp/out" "[(c['subject'], sorted(c['files']), len(c['id'])) for c in d['commits']]" 2>&1)" \
         = "0:[('agent: remove secret', ['secret.txt'], 40), ('agent: add secret', ['secret.txt', 'tracked.txt'], 40)]"
  check "…the newest is the session's HEAD" \
    test "$(json "$tmp/out" "d['commits'][0]['id']" 2>&1)" = "$agent_tip"
  run "$tmp/out" "$tmp/err2" review "$id4"
  check "review prints a Commits section: count, short id, subject, files" \
    test "$rc:$(grep -c 'Commits the agent made (2, on ' "$tmp/out"):$(grep -c "^  ${agent_tip:0:10}  agent: remove secret" "$tmp/out"):$(grep -c '^      secret.txt$' "$tmp/out")" = "0:1:1:2"
  run "$tmp/out" "$tmp/err2" review "$id4" --commit "${agent_tip:0:12}"
  check "review --commit shows the commit's diff" \
    grep -q -- '-agent secret' "$tmp/out"
  run "$tmp/out" "$tmp/err2" apply "$id4" --commits
  check "apply --commits creates branch paddock/ID and prints it" \
    test "$rc:$(grep -c "paddock/$id4" "$tmp/out")" = "0:1"
  check "…at the agent's commit, its objects all present (git fsck)" \
    test "$("${host_git[@]}" rev-parse "refs/heads/paddock/$id4" 2>&1):$("${host_git[@]}" fsck --strict --no-dangling >/dev/null 2>&1; echo $?)" = "$agent_tip:0"
  check "…and the stage's ledger records it, with who asked" \
    test "$(grep -c "\"commits\":{\"branch\":\"paddock/$id4\",\"commit\":\"$agent_tip\"" "$tmp/state/sessions/$id4/stage/ledger.jsonl" 2>&1):$(grep -c '"who":":' "$tmp/state/sessions/$id4/stage/ledger.jsonl")" = "1:1"
  check "…while HEAD, the user's branch and the repository's config did not move" \
    test "$("${host_git[@]}" symbolic-ref HEAD):$("${host_git[@]}" rev-parse HEAD)|$(sha256sum "$ws4/.git/config")" = "$head_before|$config_before"
  # A later commit, and the branch is there already: refused, left alone.
  "$CTL" exec "$id4" -- sh -c 'echo later >> tracked.txt' >/dev/null 2>&1 || true
  "$CTL" exec "$id4" -- "${git_in[@]}" commit -q -am 'agent: later' >/dev/null 2>&1 || true
  run "$tmp/out" "$tmp/err2" apply "$id4" --commits
  check "apply --commits when paddock/ID exists: refused, the branch left as it was" \
    test "$rc:$(grep -c 'already has a branch' "$tmp/err2"):$("${host_git[@]}" rev-parse "refs/heads/paddock/$id4")" = "1:1:$agent_tip"
  run "$tmp/out" "$tmp/err2" --json apply "$id4" --commits --branch "paddock/$id4-later"
  check "…and --branch names another one, which brings the one new commit" \
    test "$rc:$(json "$tmp/out" "(d['branch'], d['commits'])" 2>&1)" = "0:('paddock/$id4-later', 1)"
else
  ok "# SKIP git status in the session: git is not installed"
fi
"$CTL" destroy "$id4" >/dev/null 2>&1 || true

# ---- a sandbox that refuses at once ----------------------------------------------------

# A workspace below a folder the sandbox provides itself (/dev/shm) is
# refused by the sandbox as it starts: the creator hears why, and the
# daemon lives on. (The end of such a terminal, read early, left a watch
# behind that fired on the freed terminal and took a daemon down from a
# shell; under this harness the freed fd is taken again before it fires,
# so tests/test-terminal.c's drain-at-end is the direct guard.)
if shm_ws=$(mktemp -d /dev/shm/paddock-test-XXXXXX 2>/dev/null); then
  refusals=""
  for try in 1 2 3 4 5; do
    run "$tmp/out" "$tmp/err" create --workspace "$shm_ws" --profile safe -- true
    refusals+="$rc:$(grep -c 'overlaps a folder the sandbox provides itself' "$tmp/err") "
  done
  check "a workspace in /dev/shm is refused, saying why" test "$refusals" = "1:1 1:1 1:1 1:1 1:1 "
  # Not a timing assertion: the watch fired within 0.1 s of the refusal.
  sleep 0.5
  check "…and the daemon lives on, answering" \
    bash -c "kill -0 $daemon_pid && \"$CTL\" ports list >/dev/null"
  rm -rf "$shm_ws"
else
  n=$((n + 1))
  echo "ok $n - a sandbox that refuses at once # SKIP /dev/shm is not writable here"
  n=$((n + 1))
  echo "ok $n - …and the daemon lives on # SKIP /dev/shm is not writable here"
fi

# ---- a folder changed just before the start ---------------------------------------------

# A script makes a file in a fresh folder and starts a session there at
# once: the folder's change is from before the start, so what the agent
# adds in it is no conflict. The folder's ctime may be ahead of the coarse
# clock (multigrain timestamps), which a start that read its moment at once
# called a change since (seen in 2 of 30 such starts; each try here is
# one more chance to see it).
fresh_conflicts=""
for try in 1 2 3 4 5 6; do
  wsf="$tmp/fresh$try"
  mkdir -p "$wsf"
  wsf=$(realpath "$wsf")
  echo made >"$wsf/made-just-before.txt"
  run "$tmp/out" "$tmp/err" create --workspace "$wsf" --profile safe -- sh -c 'echo agent > added.txt; echo FRESH-DONE; exec sleep 600'
  idf=$(head -n 1 "$tmp/out")
  if [[ $rc -ne 0 ]] || ! wait_for 20 logs_have "$idf" FRESH-DONE; then
    fresh_conflicts+=" try $try did not start: $(cat "$tmp/err")"
    continue
  fi
  run "$tmp/out" "$tmp/err" --json review "$idf"
  fresh_conflicts+=$(json "$tmp/out" "' '.join('try $try: ' + c['path'] for c in d['changes'] if c['conflict'])" 2>&1)
  "$CTL" destroy "$idf" >/dev/null 2>&1 || true
done
check "files an agent adds in a folder changed just before the start are no conflicts" \
  test -z "$fresh_conflicts"

# ---- the daemon dies before the baseline's walk ----------------------------------------

# The walk waits an hour here (PADDOCK_TEST_BASELINE_DELAY_MS) and the daemon
# is killed before it. Meanwhile another writer edits a file the session also
# edited, and deletes one the session wrote. The next daemon walks the
# workspace for the moment the stage was prepared: both are conflicts, and an
# apply leaves them alone (the deleted file is not brought back).
kill -TERM "$daemon_pid" 2>/dev/null || true
wait "$daemon_pid" 2>/dev/null || true
PADDOCK_TEST_BASELINE_DELAY_MS=3600000 start_daemon
ws5="$tmp/died"
mkdir -p "$ws5/calm"
for f in both ours gone calm/old; do printf 'base\n' >"$ws5/$f.txt"; done
ws5=$(realpath "$ws5")
# Not a timing assertion: the files above must be older than the start by
# more than the file clock's tick, or the start itself calls them changed.
sleep 0.1
run "$tmp/out" "$tmp/err" create --workspace "$ws5" --profile safe -- sh -c \
  'for f in both ours gone calm/new; do echo ours > $f.txt; done; echo DIED-READY; exec sleep 600'
id5=$(head -n 1 "$tmp/out")
check "a session whose baseline walk waits an hour starts" test "$rc" = 0
check "…and writes" wait_for 20 logs_have "$id5" DIED-READY
printf 'theirs, longer\n' >"$ws5/both.txt"
rm "$ws5/gone.txt"
kill -KILL "$daemon_pid" 2>/dev/null || true
wait "$daemon_pid" 2>/dev/null || true
check "no baseline was walked before the daemon died" test ! -e "$tmp/state/sessions/$id5/stage/baseline"
start_daemon || not_ok "the daemon restarts after SIGKILL" "$(tail -n 5 "$tmp/daemon.log")"
run "$tmp/out" "$tmp/err" --json review "$id5"
review5="$rc:$(json "$tmp/out" "sorted((c['kind'], c['path'], c['conflict']) for c in d['changes'])" 2>&1)"
if [[ $review5 == "0:[('added', 'calm/new.txt', False), ('added', 'gone.txt', True), ('modified', 'both.txt', True), ('modified', 'ours.txt', False)]" ]]; then
  ok "after the restart, the other writer's edit and deletion are conflicts"
else
  # Seen once in five CI rehearsals (unprivileged): what review said, and
  # the session as the new daemon has it, for the next one who meets it.
  not_ok "after the restart, the other writer's edit and deletion are conflicts" \
    "$review5" "$(cat "$tmp/err")" "$("$CTL" status "$id5" 2>&1 | grep -E '^(state|exit_status):')" \
    "$(tail -n 10 "$tmp/daemon.log")"
fi
run "$tmp/out" "$tmp/err" --json apply "$id5"
check "apply leaves both conflicts alone (exit 1)" \
  test "$rc:$(json "$tmp/out" 'sorted(d["conflicts"])' 2>&1)" = "1:['both.txt', 'gone.txt']"
check "…the deleted file stays deleted, the edit stays, the rest is applied" \
  test "$(test -e "$ws5/gone.txt" && echo back):$(cat "$ws5/both.txt"):$(cat "$ws5/ours.txt"):$(cat "$ws5/calm/new.txt")" \
       = ":theirs, longer:ours:ours"
"$CTL" destroy "$id5" >/dev/null 2>&1 || true

# ---- the door: repository metadata, and what was reviewed --------------------------

# The workspace is a git repository. The agent plants every kind of
# repository metadata that would make the user's next `git status` run its
# code: a core.fsmonitor in .git/config, a .git/commondir to a config of
# its own, a hook in a .git/hooks it creates, a nested repository, a
# .gitmodules, a bare repository. After `apply` (everything), the
# workspace's .git must be untouched and `git status` must run nothing.
if command -v git >/dev/null 2>&1; then
  export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
  ws6="$tmp/door"
  mkdir -p "$ws6"
  ws6=$(realpath "$ws6")
  git -C "$ws6" init -q
  echo hello >"$ws6/hello.txt"
  git -C "$ws6" add hello.txt
  git -C "$ws6" -c user.name=t -c user.email=t@example.org commit -qm init
  rm -rf "$ws6/.git/hooks"   # as some installs have it: no hooks folder at the start
  pwned="$tmp/pwned"
  snapshot "$ws6/.git" >"$tmp/git-before"

  # A control: the same config in a repository of the test's own does run
  # its fsmonitor on `git status` (so the marker check below can fail).
  mkdir -p "$tmp/control" && git -C "$tmp/control" init -q
  printf '[core]\n\tfsmonitor = "touch %s-control"\n' "$pwned" >>"$tmp/control/.git/config"
  git -C "$tmp/control" status >/dev/null 2>&1 || true
  check "control: a core.fsmonitor in .git/config runs on git status" test -e "$pwned-control"

  # .git/config, present at the start, is read-only to the agent (the
  # boundary's own guard); everything else here is new and writable.
  agent6="
printf '[core]\n\tfsmonitor = \"touch $pwned-config\"\n' >> .git/config 2>/dev/null
mkdir -p evil && printf '[core]\n\tfsmonitor = \"touch $pwned-commondir\"\n' > evil/config
echo ../evil > .git/commondir
mkdir -p .git/hooks && printf '#!/bin/sh\ntouch $pwned-hook\n' > .git/hooks/post-index-change
chmod +x .git/hooks/post-index-change
mkdir -p sub/.git && printf '[core]\n\tfsmonitor = \"touch $pwned-nested\"\n' > sub/.git/config
echo 'ref: refs/heads/main' > sub/.git/HEAD && mkdir -p sub/.git/objects sub/.git/refs
echo nested > sub/file.txt
printf '[submodule \"x\"]\n\tpath = x\n\turl = ./x\n' > .gitmodules
mkdir -p bare/objects bare/refs && echo 'ref: refs/heads/main' > bare/HEAD
printf '[core]\n\tfsmonitor = \"touch $pwned-bare\"\n' > bare/config
mkdir -p .hg && printf '[hooks]\npre-status = touch $pwned-hg\n' > .hg/hgrc
echo 'echo harmless' > run.sh
echo 'an ordinary change' >> hello.txt
echo DOOR-READY
exec sleep 600"
  run "$tmp/out" "$tmp/err" create --workspace "$ws6" --profile safe -- sh -c "$agent6"
  id6=$(head -n 1 "$tmp/out")
  check "a session in a git repository starts" test "$rc" = 0
  check "…and plants its repository metadata" wait_for 20 logs_have "$id6" DOOR-READY

  run "$tmp/out" "$tmp/err" --json review "$id6"
  cat "$tmp/out" >"$tmp/door-review.json"
  check "review lists the file changes, and no repository metadata among them" \
    test "$rc:$(json "$tmp/out" "sorted(c['path'] for c in d['changes'] if c['path'] in ('evil/config', 'hello.txt', 'run.sh', 'sub/file.txt'))" 2>&1):$(json "$tmp/out" "[c['path'] for c in d['changes'] if '.git' in c['path'] or '.hg' in c['path'] or c['path'].startswith('bare')]" 2>&1)" \
         = "0:['evil/config', 'hello.txt', 'run.sh', 'sub/file.txt']:[]"
  check "…and lists it apart, each row with its reason" \
    test "$(json "$tmp/out" "sorted(c['path'] for c in d['metadata'] if c['reason'] and c['path'] in ('.git/commondir', '.git/hooks/post-index-change', '.gitmodules', '.hg/hgrc', 'bare/HEAD', 'bare/config', 'sub/.git/config'))" 2>&1)" \
         = "['.git/commondir', '.git/hooks/post-index-change', '.gitmodules', '.hg/hgrc', 'bare/HEAD', 'bare/config', 'sub/.git/config']"
  token6=$(json "$tmp/out" 'd["token"]')
  check "…and gives a review token" test -n "$token6"

  run "$tmp/out" "$tmp/err" review "$id6"
  check "the human review has a section of its own for the metadata" \
    grep -q '^Repository metadata, never applied' "$tmp/out"

  run "$tmp/out" "$tmp/err" --json apply --path .git/commondir "$id6"
  check "apply --path of a metadata path is refused (InvalidArgument)" \
    test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.InvalidArgument"

  # The agent rewrites run.sh after the review the user read.
  run "$tmp/out" "$tmp/err" exec "$id6" -- sh -c 'echo "touch '"$pwned"'-rewrite" > run.sh' </dev/null
  check "the agent rewrites a reviewed file after the review" test "$rc" = 0
  run "$tmp/out" "$tmp/err" review --diff --review "$token6" "$id6" run.sh
  check "review --diff --review TOKEN shows the content that review read, not the rewrite" \
    test "$rc:$(grep -c '^+echo harmless$' "$tmp/out"):$(grep -c 'rewrite' "$tmp/out")" = "0:1:0"
  run "$tmp/out" "$tmp/err" --json apply --review "$token6" "$id6"
  check "apply --review TOKEN refuses a batch whose content changed since (ReviewStale)" \
    test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.ReviewStale"
  check "…naming the path that changed" \
    test "$(json "$tmp/out" '"run.sh" in d["error"]["message"]' 2>&1)" = True
  check "…and nothing was applied" \
    test "$(test -e "$ws6/run.sh" && echo landed):$(cat "$ws6/hello.txt")" = ":hello"

  run "$tmp/out" "$tmp/err" --json apply "$id6"
  check "apply without a token pins a fresh review and says so in one line" \
    test "$rc:$(grep -c '^paddockctl: Pinned .* to the bytes of a fresh review' "$tmp/err")" = "0:1"
  check "…and applies the file changes as that review read them" \
    test "$(cat "$ws6/run.sh"):$(cat "$ws6/sub/file.txt")" = "touch $pwned-rewrite:nested"
  snapshot "$ws6/.git" >"$tmp/git-after"
  check "after apply the workspace's .git is untouched" cmp -s "$tmp/git-before" "$tmp/git-after"
  check "…and no .gitmodules, nested or bare repository, or .hg landed" \
    test "$(ls -d "$ws6/.gitmodules" "$ws6/sub/.git" "$ws6/bare" "$ws6/.hg" 2>/dev/null)" = ""
  (cd "$ws6" && git status >/dev/null 2>&1; cd sub && git status >/dev/null 2>&1) || true
  check "a git status in the workspace (and its sub folder) runs no agent hook or fsmonitor" \
    test "$(ls -d "$pwned"-{config,commondir,hook,nested,bare,hg,rewrite} 2>/dev/null)" = ""

  run "$tmp/out" "$tmp/err" --json review "$id6"
  check "the metadata is still listed, for the user to drop or name" \
    test "$(json "$tmp/out" "(len(d['changes']), '.git/commondir' in [c['path'] for c in d['metadata']])" 2>&1)" = "(0, True)"
  "$CTL" destroy "$id6" >/dev/null 2>&1 || true
  unset GIT_CONFIG_NOSYSTEM GIT_CONFIG_GLOBAL
else
  n=$((n + 1))
  echo "ok $n - repository metadata # SKIP git is not installed"
fi

# ---- what lands on disk: holes, hard links, a path over PATH_MAX ------------------------

# The agent makes a sparse gigabyte, one file with three names, and a path
# longer than PATH_MAX. Review shows sizes (apparent and allocated), the
# links and the unappliable row; apply lands the gigabyte as a few blocks,
# the three names as one inode, and everything but the deep path.
ws7="$tmp/disk"
mkdir -p "$ws7"
echo keep >"$ws7/keep.txt"
ws7=$(realpath "$ws7")
run "$tmp/out" "$tmp/err" create --workspace "$ws7" --profile safe -- sh -c '
set -e
truncate -s 1G sparse.bin
printf tail >> sparse.bin
head -c 32768 /dev/urandom > h1
ln h1 h2
ln h1 h3
python3 -c "
import os
for i in range(25):
    os.mkdir(\"d\" * 200)
    os.chdir(\"d\" * 200)
open(\"deep.txt\", \"w\").write(\"deep\\n\")
"
echo DISK-READY
exec sleep 600'
id7=$(head -n 1 "$tmp/out")
check "the disk session made its changes" wait_for 20 logs_have "$id7" DISK-READY
"$CTL" stop --grace 0 "$id7" >/dev/null 2>&1 || true
run "$tmp/out" "$tmp/err" --json review "$id7"
check "review lists the rows of a session with a path over PATH_MAX" test "$rc" = 0
check "review gives a sparse file its apparent and its allocated size" \
  test "$(json "$tmp/out" "[(c['size'], c['allocated'] < 1048576) for c in d['changes'] if c['path'] == 'sparse.bin']" 2>&1)" = "[(1073741828, True)]"
check "review shows the hard links as such" \
  test "$(json "$tmp/out" "sorted((c['path'], c['hardlink_of']) for c in d['changes'] if c['path'] in ('h1', 'h2', 'h3'))" 2>&1)" = "[('h1', None), ('h2', 'h1'), ('h3', 'h1')]"
check "review lists the path over PATH_MAX as unappliable, with its reason" \
  test "$(json "$tmp/out" "[c['unappliable'] for c in d['changes'] if c['path'].endswith('deep.txt')]" 2>&1)" = "['path longer than PATH_MAX (4096 bytes)']"
run "$tmp/out" "$tmp/err" review "$id7"
check "human review shows the size and what it takes on disk" grep -q 'sparse\.bin  binary  1\.0.*GiB (.* on disk)' "$tmp/out"
run "$tmp/out" "$tmp/err" --json apply "$id7"
apply7="$rc:$(json "$tmp/out" "sorted(p for p in d['applied'] if '/' not in p and not p.startswith('ddd'))" 2>&1)"
if [[ $apply7 == "0:['h1', 'h2', 'h3', 'sparse.bin']" ]]; then
  ok "apply of everything applies all but the unappliable row"
else
  not_ok "apply of everything applies all but the unappliable row" "$apply7" \
    "$(head -c 2000 "$tmp/out")" "$(cat "$tmp/err")" "$(tail -n 10 "$tmp/daemon.log")"
fi
check "the sparse file lands sparse" \
  test "$(stat -c '%s %b %B' "$ws7/sparse.bin" | awk '{print $1, ($2 * $3 < 1048576)}')" = "1073741828 1"
check "the three names land as one inode" \
  test "$(stat -c '%i %h' "$ws7/h1" "$ws7/h2" "$ws7/h3" | sort -u | wc -l):$(stat -c %h "$ws7/h1")" = "1:3"
check "the hard-linked content is the staged one" cmp -s "$ws7/h1" "$ws7/h3"
"$CTL" destroy "$id7" >/dev/null 2>&1 || true

# ---- crash in the middle of an apply -------------------------------------------------

# One session with a few changes; a daemon that kills itself at step N of
# the apply; a new daemon; the workspace must be all old or all new.
ws2="$tmp/crash"
mkdir -p "$ws2/sub"
for f in a b c; do echo "old $f" >"$ws2/$f.txt"; done
echo "old deep" >"$ws2/sub/deep.txt"
ws2=$(realpath "$ws2")
run "$tmp/out" "$tmp/err" create --workspace "$ws2" --profile safe -- sh -c \
  'for f in a b c; do echo "new $f" > $f.txt; done; rm sub/deep.txt; mkdir -p made; echo m > made/m.txt; mv b.txt b-moved.txt; echo CRASH-READY; exec sleep 600'
id2=$(head -n 1 "$tmp/out")
check "the crash-test session made its changes" wait_for 20 logs_have "$id2" CRASH-READY
"$CTL" stop --grace 0 "$id2" >/dev/null 2>&1 || true
snapshot "$ws2" >"$tmp/crash-old"
run "$tmp/out" "$tmp/err" --json checkpoint "$id2" create staged
check "checkpoint create names the checkpoint" \
  test "$rc:$(json "$tmp/out" 'd["checkpoint"]' 2>&1)" = "0:staged"
run "$tmp/out" "$tmp/err" --json checkpoint "$id2" create staged
check "a checkpoint name already taken: Conflict" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.Conflict"
run "$tmp/out" "$tmp/err" --json checkpoint "$id2" create ../escape
check "a malformed checkpoint name: InvalidArgument" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.InvalidArgument"
run "$tmp/out" "$tmp/err" --json checkpoint "$id2" list
check "checkpoint list shows it" \
  test "$rc:$(json "$tmp/out" '[c["name"] for c in d["checkpoints"]]' 2>&1)" = "0:['staged']"
run "$tmp/out" "$tmp/err" --json drop --path a.txt "$id2"
run "$tmp/out" "$tmp/err" --json review "$id2"
check "drop --path discards that change only" \
  test "$(json "$tmp/out" "sorted(c['path'] for c in d['changes'])")" = "['b-moved.txt', 'b.txt', 'c.txt', 'made/m.txt', 'sub/deep.txt']"
run "$tmp/out" "$tmp/err" --json drop "$id2"
run "$tmp/out" "$tmp/err" --json review "$id2"
check "drop discards the whole stage" test "$rc:$(json "$tmp/out" 'd["changes"]' 2>&1)" = "0:[]"
run "$tmp/out" "$tmp/err" --json checkpoint "$id2" restore staged
run "$tmp/out" "$tmp/err" --json review "$id2"
check "checkpoint restore brings the staged changes back" \
  test "$(json "$tmp/out" "len(d['changes'])")" = "6"
run "$tmp/out" "$tmp/err" --json checkpoint "$id2" restore no-such
check "restoring an unknown checkpoint: NotFound" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.NotFound"
snapshot "$ws2" >"$tmp/crash-after-drop"
check "drop and restore never touch the workspace" cmp -s "$tmp/crash-old" "$tmp/crash-after-drop"

all_old_or_new=true
new_seen=""
for step in $(seq 1 60); do
  # A daemon that dies at this step of the batch.
  kill -TERM "$daemon_pid" 2>/dev/null || true
  wait "$daemon_pid" 2>/dev/null || true
  PADDOCK_FAULT_APPLY_STEP=$step start_daemon || { not_ok "daemon restarts (step $step)" "$(tail -n 5 "$tmp/daemon.log")"; break; }
  crashed=false
  # Forced: a restored workspace has new inodes, which the baseline (rightly)
  # calls changed since the session started.
  force=()
  for p in $("$CTL" --json review "$id2" 2>/dev/null | "$PYTHON" -c '
import json, sys
for c in json.load(sys.stdin)["changes"]:
    print(c["path"])
    if c["old_path"]: print(c["old_path"])'); do force+=(--force-path "$p"); done
  # The daemon kills itself before it answers: a failed apply is the crash.
  if ! "$CTL" apply "${force[@]}" "$id2" >/dev/null 2>&1; then
    crashed=true
    wait "$daemon_pid" 2>/dev/null || true
    start_daemon || { not_ok "daemon restarts after the crash (step $step)" "$(tail -n 5 "$tmp/daemon.log")"; break; }
  fi
  snapshot "$ws2" >"$tmp/crash-now"
  if cmp -s "$tmp/crash-now" "$tmp/crash-old"; then
    :
  elif [[ -z "$new_seen" ]]; then
    cp "$tmp/crash-now" "$tmp/crash-new"; new_seen=$step
  elif ! cmp -s "$tmp/crash-now" "$tmp/crash-new"; then
    all_old_or_new=false
    not_ok "step $step leaves the workspace all old or all new" "$(diff "$tmp/crash-old" "$tmp/crash-now" | head -n 20)"
  fi
  if ls -a "$ws2" "$ws2"/* 2>/dev/null | grep -q '\.paddock-apply'; then
    all_old_or_new=false
    not_ok "no .paddock-apply leftovers after recovery (step $step)"
  fi
  $crashed || break
  # Back to the old workspace and the staged changes for the next step.
  if ! cmp -s "$tmp/crash-now" "$tmp/crash-old"; then
    rm -rf "$ws2"/* && mkdir -p "$ws2/sub"
    for f in a b c; do echo "old $f" >"$ws2/$f.txt"; done
    echo "old deep" >"$ws2/sub/deep.txt"
  fi
  "$CTL" checkpoint "$id2" restore staged >/dev/null 2>&1 || true
done
check "the apply was interrupted at each of its $((step - 1)) steps, then completed" \
  test "$step" -gt 3 -a -n "$new_seen"
check "every interrupted apply left the workspace entirely old or entirely new" $all_old_or_new

# ---- after a crash, the same apply again: every change, no false conflict -------------

# A daemon killed at a step of an apply rolls it back on restart; the next
# apply, with nothing forced, must land every change (the rollback's own
# renames are no conflict), and status says what recovery did.
total_steps=$((step - 1))
recovery_ok=true
for step in 2 $((total_steps / 3)) $((total_steps / 2)) $((total_steps * 2 / 3)); do
  rm -rf "$ws2" && mkdir -p "$ws2/sub"
  for f in a b c; do echo "old $f" >"$ws2/$f.txt"; done
  echo "old deep" >"$ws2/sub/deep.txt"
  sleep 0.05
  run "$tmp/out" "$tmp/err" create --workspace "$ws2" --profile safe -- sh -c \
    'for f in a b c; do echo "new $f" > $f.txt; done; rm sub/deep.txt; mkdir -p made; echo m > made/m.txt; mv b.txt b-moved.txt; echo CRASH-READY; exec sleep 600'
  id7=$(head -n 1 "$tmp/out")
  wait_for 20 logs_have "$id7" CRASH-READY || { recovery_ok=false; not_ok "crash-again session $step starts"; break; }
  "$CTL" stop --grace 0 "$id7" >/dev/null 2>&1 || true
  "$CTL" review "$id7" >/dev/null 2>&1 || true
  kill -TERM "$daemon_pid" 2>/dev/null || true
  wait "$daemon_pid" 2>/dev/null || true
  PADDOCK_FAULT_APPLY_STEP=$step start_daemon || { recovery_ok=false; not_ok "daemon restarts (again, step $step)"; break; }
  if "$CTL" apply "$id7" >/dev/null 2>&1; then
    # Past the commit point or beyond the batch: nothing to redo.
    "$CTL" destroy "$id7" >/dev/null 2>&1 || true
    continue
  fi
  wait "$daemon_pid" 2>/dev/null || true
  start_daemon || { recovery_ok=false; not_ok "daemon restarts after the crash (again, step $step)"; break; }
  snapshot "$ws2" >"$tmp/again-now"
  if cmp -s "$tmp/again-now" "$tmp/crash-old"; then
    run "$tmp/out" "$tmp/err" --json apply "$id7"
    if [[ "$rc:$(json "$tmp/out" 'd["conflicts"]' 2>&1)" != "0:[]" ]]; then
      recovery_ok=false
      not_ok "the apply after a crash at step $step has no conflict" "$(cat "$tmp/out" "$tmp/err")"
    fi
    snapshot "$ws2" >"$tmp/again-now"
    if ! cmp -s "$tmp/again-now" "$tmp/crash-new"; then
      recovery_ok=false
      not_ok "the apply after a crash at step $step lands every change" "$(diff "$tmp/crash-new" "$tmp/again-now" | head -n 20)"
    fi
    if [[ "$(field "$id7" 'd["last_recovery"]["recovery"]' 2>&1)" != "rolled-back" ]]; then
      recovery_ok=false
      not_ok "status shows the recovery after a crash at step $step" "$(cat "$tmp/field.json")"
    fi
  fi
  "$CTL" destroy "$id7" >/dev/null 2>&1 || true
done
check "after a crash at any step, the same apply lands every change with no conflict" $recovery_ok
check "the recovery is in the daemon's log" grep -q "Recovered an interrupted apply" "$tmp/daemon.log"

"$CTL" destroy "$id" >/dev/null 2>&1 || true
"$CTL" destroy "$id2" >/dev/null 2>&1 || true
echo "1..$n"
[[ $failures -eq 0 ]]
