#!/bin/bash
# test-paddockctl-full-disk.sh — a daemon whose state dir is full starts, serves read-only, recovers, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The state dir lives on a small tmpfs of this test's own mount namespace
# (as root: `unshare -m`; unprivileged: a user namespace too, whose
# capabilities are dropped again before anything else runs). A session is
# made, the daemon stopped, the filesystem filled to the last byte, and a
# new daemon started: it must come up, list the session, show its status,
# log and review, say "read-only: no space left on MOUNT" in GetInfo and
# the log, refuse create and lease with org.paddock.Error.NoSpace naming
# MOUNT, release the session's port all the same (for good: a daemon
# started again, the disk still full, does not bring it back), and take
# create and lease again once a file is removed. The same with no
# inode left, where not even the lease journal can be made at start.

if [[ -z "${PADDOCK_FULL_DISK_MOUNT:-}" ]]; then
  # shellcheck source=tap-lib.sh
  source "$(dirname "$0")/tap-lib.sh" "$@"
  command -v unshare >/dev/null || skip "unshare is not installed"
  small=$(mktemp -d "${TMPDIR:-/tmp}/paddock-full-disk.XXXXXX")
  few=$(mktemp -d "${TMPDIR:-/tmp}/paddock-few-inodes.XXXXXX")
  trap 'rmdir "$small" "$few" 2>/dev/null || true' EXIT
  # The mounts are private to the namespace and go with it: nothing to undo.
  # shellcheck disable=SC2016  # expanded by the inner shell
  inner='mount -t tmpfs -o size=16m,mode=0700 paddock-full-disk "$1" || exit 99
         mount -t tmpfs -o size=16m,nr_inodes=64,mode=0700 paddock-few-inodes "$2" || exit 99
         export PADDOCK_FULL_DISK_MOUNT=$1 PADDOCK_FEW_INODES_MOUNT=$2; shift 2
         if [ "$(id -u)" -eq 0 ] && [ -z "$PADDOCK_FULL_DISK_USERNS" ]; then exec "$@"; fi
         exec setpriv --inh-caps=-all --ambient-caps=-all "$@"'
  if [[ "$(id -u)" == 0 ]]; then
    ns=(unshare -m --propagation private)
  else
    ns=(unshare -c -m --keep-caps --propagation private)
    export PADDOCK_FULL_DISK_USERNS=1
    command -v setpriv >/dev/null || skip "setpriv is not installed"
  fi
  "${ns[@]}" true 2>/dev/null || skip "cannot make a mount namespace here (${ns[*]})"
  rc=0
  "${ns[@]}" sh -c "$inner" sh "$small" "$few" "$0" "$@" || rc=$?
  [[ $rc == 99 ]] && skip "cannot mount a tmpfs in a mount namespace here"
  exit $rc
fi

# shellcheck source=paddockctl-lib.sh
source "$(dirname "$0")/paddockctl-lib.sh" "$@"

mnt=$PADDOCK_FULL_DISK_MOUNT
state="$mnt/state"
mkdir -m 0700 "$state"

start_daemon ()
{
  "$DAEMON" --port-range "$PORT_RANGE" --state-dir "$state" >>"$tmp/daemon.log" 2>&1 &
  daemon_pid=$!
  wait_for 10 sh -c "'$CTL' ports list >/dev/null"
}
stop_daemon ()
{
  kill -TERM "$daemon_pid" 2>/dev/null || true
  wait "$daemon_pid" 2>/dev/null || true
  daemon_pid=""
}
field ()
{
  "$CTL" --json status "$1" >"$tmp/field.json" 2>/dev/null || return 1
  json "$tmp/field.json" "$2"
}
state_is () { [[ "$(field "$1" 'd["state"]')" == "$2" ]]; }
error_name () { json "$1" 'd["error"]["name"]' 2>/dev/null; }

ws="$tmp/workspace"
mkdir -p "$ws"
printf 'old\n' >"$ws/kept.txt"
ws=$(realpath "$ws")
# The session runs on the library's daemon (its state dir has room: a
# 16 MiB disk is under the stage guard's reserve and would hold the agent
# still), then its state dir is moved to the small disk.
# A staging profile: safe, or in a portable build (no helper) host, whose
# sessions stage by copy there.
profile=safe
have_sandbox || profile=host
run "$tmp/create.json" "$tmp/create.err" --json create --workspace "$ws" --profile "$profile" --port web \
  -- sh -c 'echo hello-before-full; echo staged >new.txt'
id=$(json "$tmp/create.json" 'd["id"]' 2>/dev/null || true)
if [[ $rc == 0 && -n "$id" ]] && wait_for 30 state_is "$id" exited; then
  ok "a session stages a file and exits"
else
  not_ok "a session stages a file and exits" "$(cat "$tmp/create.json" "$tmp/create.err")"
fi

stop_daemon
# Not overlayfs's own scratch folder (work/work, mode 0 as an unprivileged
# user's): the next mount makes it again.
tar -C "$tmp/state" --exclude='./sessions/*/stage/work/work' -cf - . | tar -C "$state" -xpf -
check "the state dir holds leases.json on the small disk" test -s "$state/leases.json"
# A daemon that ran on the small disk before it filled up (as the user's
# does): it keeps room in the lease journal for releases.
start_daemon || true
stop_daemon
# …and was killed in the middle of an append: the journal ends in half a
# line, which a release appended on the full disk must not follow.
printf '{"op":"remove","po' >>"$state/leases.json.journal"
# To the last byte: dd stops at ENOSPC (its failure is the point).
dd if=/dev/zero of="$mnt/filler" bs=64k 2>/dev/null || true
free=$(df -B1 --output=avail "$mnt" | tail -n 1 | tr -d ' ')
check "the state dir's filesystem is full ($free bytes free)" test "$free" -lt 65536

if start_daemon && kill -0 "$daemon_pid" 2>/dev/null; then
  ok "the daemon starts on a full disk"
else
  not_ok "the daemon starts on a full disk" "$(tail -20 "$tmp/daemon.log")"
fi

run "$tmp/info.json" "$tmp/info.err" --json info
check "info says read-only: no space left on $mnt" \
  test "$(json "$tmp/info.json" 'd["state"]' 2>/dev/null)" == "read-only: no space left on $mnt"
check "the log says the state dir is full" grep -q "No space left on $mnt" "$tmp/daemon.log"

run "$tmp/list.json" "$tmp/list.err" --json list
check "list still shows the session" \
  test "$(json "$tmp/list.json" '[s["id"] for s in d["sessions"]]' 2>/dev/null)" == "['$id']"
ended () { state_is "$1" stopped || state_is "$1" exited; }
check "status still answers (the session ended with the earlier daemon)" wait_for 10 ended "$id"
# The scrollback lives in the daemon (it does not survive a restart yet):
# that logs answers at all is what is checked.
check "logs still answers, with what the agent wrote" sh -c "'$CTL' logs '$id' | grep -q hello-before-full"
run "$tmp/review.json" "$tmp/review.err" --json review "$id"
check "review still lists the staged file" \
  test "$(json "$tmp/review.json" '[c["path"] for c in d["changes"]]' 2>/dev/null)" == "['new.txt']"

run "$tmp/create2.json" "$tmp/create2.err" --json create --workspace "$ws" -- true
if [[ $rc != 0 && "$(error_name "$tmp/create2.json")" == org.paddock.Error.NoSpace ]] &&
   grep -qF "No space left on $mnt" "$tmp/create2.json"; then
  ok "create is refused with NoSpace naming $mnt"
else
  not_ok "create is refused with NoSpace naming $mnt" "rc $rc: $(cat "$tmp/create2.json" "$tmp/create2.err")"
fi
run "$tmp/lease.json" "$tmp/lease.err" --json ports lease --name web -- true
if [[ $rc != 0 && "$(error_name "$tmp/lease.json")" == org.paddock.Error.NoSpace ]]; then
  ok "a lease is refused with NoSpace"
else
  not_ok "a lease is refused with NoSpace" "rc $rc: $(cat "$tmp/lease.json" "$tmp/lease.err")"
fi
check "the daemon still serves after the refusals" sh -c "'$CTL' ports list >/dev/null"

# Freeing things must work on a full disk, and last: the session's lease
# is released, and a daemon started again (the disk still full) does not
# bring it back.
# The port of the lease named web; "unlisted" when no daemon answers.
web_port () { "$CTL" --json ports list >"$tmp/ports.json" 2>/dev/null || { echo unlisted; return; }
              json "$tmp/ports.json" '" ".join(str(l["port"]) for l in d["leases"] if l["name"] == "web")'; }
web=$(web_port 2>/dev/null || true)
check "the session's port web is leased ($web)" test -n "$web" -a "$web" != unlisted
run "$tmp/release.json" "$tmp/release.err" --json ports release "${web:-0}"
check "release works on the full disk" test "$rc" == 0
check "…the port is no longer listed" test -z "$(web_port 2>&1)"
check "…the disk is still full" \
  test "$(df -B1 --output=avail "$mnt" | tail -n 1 | tr -d ' ')" -lt 65536
stop_daemon
start_daemon || true
check "…and a daemon started again (the journal whole) does not list it either" test -z "$(web_port 2>&1)"

# Space is back: the very next calls succeed, without a restart.
rm -f "$mnt/filler"
run "$tmp/info2.json" "$tmp/info2.err" --json info
check "info says writable once space is back" \
  test "$(json "$tmp/info2.json" 'd["state"]' 2>/dev/null)" == writable
run "$tmp/lease2.json" "$tmp/lease2.err" --json ports lease --name web -- true
check "a lease succeeds once space is back" test "$rc" == 0
run "$tmp/create3.json" "$tmp/create3.err" --json create --workspace "$ws" --profile "$profile" -- true
id3=$(json "$tmp/create3.json" 'd["id"]' 2>/dev/null || true)
check "create succeeds once space is back" test "$rc" == 0 -a -n "$id3"
check "the log says space is back" grep -q "Space is back on $mnt" "$tmp/daemon.log"
# What was written since is durable: a new daemon reads it back.
stop_daemon
start_daemon || true
run "$tmp/list2.json" "$tmp/list2.err" --json list
check "a new daemon lists both sessions" \
  test "$(json "$tmp/list2.json" 'len(d["sessions"])' 2>/dev/null)" == 2

# No inode left, and no lease journal: the daemon starts without one
# (read-only), and makes it at the first change once an inode is free.
stop_daemon
state="$PADDOCK_FEW_INODES_MOUNT/state"
mkdir -m 0700 "$state"
start_daemon || true
stop_daemon
rm -f "$state/leases.json.journal"
i=0
while touch "$PADDOCK_FEW_INODES_MOUNT/inode-$i" 2>/dev/null; do i=$((i + 1)); done
check "the small disk has no inode left" test ! -e "$state/leases.json.journal" -a "$i" -gt 0
if start_daemon && kill -0 "$daemon_pid" 2>/dev/null; then
  ok "the daemon starts when it cannot make its lease journal"
else
  not_ok "the daemon starts when it cannot make its lease journal" "$(tail -20 "$tmp/daemon.log")"
fi
check "the log says the journal could not be made" grep -q "Could not open the lease journal" "$tmp/daemon.log"
run "$tmp/info3.json" "$tmp/info3.err" --json info
check "info says read-only there too" \
  test "$(json "$tmp/info3.json" 'd["state"]' 2>/dev/null)" == "read-only: no space left on $PADDOCK_FEW_INODES_MOUNT"
run "$tmp/lease3.json" "$tmp/lease3.err" --json ports lease --name web -- true
check "a lease is refused with NoSpace without inodes" \
  test "$(error_name "$tmp/lease3.json")" == org.paddock.Error.NoSpace
rm -f "$PADDOCK_FEW_INODES_MOUNT"/inode-*
run "$tmp/lease4.json" "$tmp/lease4.err" --json ports lease --name web -- true
check "a lease succeeds once inodes are free" test "$rc" == 0
check "and the lease journal exists again" test -e "$state/leases.json.journal"

echo "1..$n"
(( failures == 0 ))
