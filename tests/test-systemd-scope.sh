#!/bin/bash
# test-systemd-scope.sh — an unprivileged daemon's sessions in a delegated scope, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# An unprivileged paddockd whose own cgroup it may not write asks the
# systemd user manager for a transient scope with Delegate=yes, moves into
# a leaf of it and makes its sessions' cgroups beside that leaf. This
# machine has no systemd, so tests/mock-systemd-manager plays the user
# manager on a private bus: as root it makes the scope's cgroup in a test
# folder of the cgroup v2 hierarchy, hands it to the unprivileged user
# (paddock-test) as systemd's delegation does, moves the PIDs in and emits
# JobRemoved. The daemon runs as that user. Checked from outside: where
# the daemon is (/proc/PID/cgroup), where each session's first process is
# born, what the session counts, that stop and destroy leave none. Then a
# manager that fails the job, one that never ends it, a root daemon and an
# already delegated one (neither may ask).
#
# Runs as root only (it plays the manager); skips (77, or the TAP plan
# with --tap) when cgroup v2 is not writable by root here.

set -euo pipefail

# shellcheck source=tap-lib.sh
source "$(dirname "$0")/tap-lib.sh" "$@"

[[ -n "${PADDOCK_BUILD_ROOT:-}" ]] || skip "PADDOCK_BUILD_ROOT is not set"
CTL="$PADDOCK_BUILD_ROOT/app/paddockctl"
DAEMON="$PADDOCK_BUILD_ROOT/daemon/paddockd"
MOCK="$PADDOCK_BUILD_ROOT/tests/mock-systemd-manager"
for program in "$CTL" "$DAEMON" "$MOCK"; do
  [[ -x "$program" ]] || skip "$program is not built"
done
# Decided before anything starts, so that the whole suite is a skip.
have_sandbox || skip "this build has no cgroup layer (-Dlinux_executor=false): its daemon never asks for a scope"
[[ "$(id -u)" -eq 0 ]] || skip "needs root: the mock user manager makes cgroups and hands them to another user"
command -v dbus-daemon >/dev/null || skip "dbus-daemon is not installed"
command -v setpriv >/dev/null || skip "setpriv is not installed"
PYTHON=$(command -v python3 || true)
[[ -n "$PYTHON" ]] || skip "python3 is not installed"

unset DBUS_SESSION_BUS_ADDRESS DISPLAY WAYLAND_DISPLAY LISTEN_FDS LISTEN_PID LISTEN_FDNAMES
export LC_ALL=C.UTF-8

TEST_USER=${PADDOCK_TEST_USER:-paddock-test}
if ! id -u "$TEST_USER" >/dev/null 2>&1; then
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$TEST_USER" >&2 ||
    skip "could not create the user $TEST_USER"
fi
user_uid=$(id -u "$TEST_USER")
user_gid=$(id -g "$TEST_USER")

# The daemon runs as the test user: a tree inside a private folder is made
# reachable first (this re-executes the script in a mount namespace of
# its own, so it comes before anything the script makes).
drop=(setpriv --reuid="$user_uid" --regid="$user_gid" --init-groups --inh-caps=-all --bounding-set=-all --)
# shellcheck source=reach-lib.sh
source "$(dirname "$(readlink -f "$0")")/reach-lib.sh"
reach_trees "$DAEMON" "$0" "$@"
pick_port_range

cgroup_mount=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
[[ -n "$cgroup_mount" ]] || skip "no cgroup v2 hierarchy is mounted"
test_cgroup="$cgroup_mount/paddock-scope-test.$$"
mkdir "$test_cgroup" 2>/dev/null || skip "cgroup v2 at $cgroup_mount is not writable by root here"
test_cgroup_rel=${test_cgroup#"$cgroup_mount"}

tmp=$(mktemp -d /tmp/paddock-scope-test.XXXXXX)
chmod 0755 "$tmp"
mkdir -m 0700 "$tmp/user" "$tmp/user/run"
chown -R "$TEST_USER:" "$tmp/user"

bus_pid=""
mock_pid=""
daemon_pid=""
daemon_status=0
daemon_as=""

# What of the harness's environment reaches the test user's programs: the
# sanitizers' and GLib's debugging switches, nothing else.
passed_env=()
for name in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS G_DEBUG MALLOC_CHECK_ MALLOC_PERTURB_; do
  [[ -n "${!name:-}" ]] && passed_env+=("$name=${!name}")
done

# as_user COMMAND…: COMMAND as the test user, every capability dropped,
# with a fresh environment (the private bus only); exec'd, so a
# background job's pid is the program's.
as_user ()
{
  exec setpriv --reuid="$user_uid" --regid="$user_gid" --init-groups --inh-caps=-all --bounding-set=-all -- \
    env -i PATH="$PATH" LC_ALL=C.UTF-8 HOME="$tmp/user" XDG_RUNTIME_DIR="$tmp/user/run" \
        DBUS_SESSION_BUS_ADDRESS="$DBUS_SESSION_BUS_ADDRESS" "${passed_env[@]}" "$@"
}

# ctl ARGS…: paddockctl as whoever the running daemon runs as.
ctl ()
{
  if [[ "$daemon_as" == user ]]; then (as_user "$CTL" "$@"); else "$CTL" "$@"; fi
}

stop_daemon ()
{
  local id
  daemon_status=0
  [[ -n "$daemon_pid" ]] || return 0
  for id in $(ctl --json list 2>/dev/null | "$PYTHON" -c '
import json, sys
for s in json.load(sys.stdin)["sessions"]: print(s["id"])' 2>/dev/null); do
    ctl destroy "$id" >/dev/null 2>&1 || true
  done
  kill -TERM "$daemon_pid" 2>/dev/null || true
  wait "$daemon_pid" 2>/dev/null || daemon_status=$?
  daemon_pid=""
}

# finish_daemon NAME: stops it; it must exit cleanly (under the
# sanitizers: without a leak or an error).
finish_daemon ()
{
  stop_daemon
  if [[ $daemon_status -eq 0 ]]; then
    ok "the $1 daemon exits cleanly"
  else
    not_ok "the $1 daemon exits cleanly" "exit status $daemon_status" "$(tail -n 40 "$tmp/$1.log")"
  fi
}

stop_mock ()
{
  [[ -n "$mock_pid" ]] || return 0
  kill -TERM "$mock_pid" 2>/dev/null || true
  wait "$mock_pid" 2>/dev/null || true
  mock_pid=""
}

cleanup ()
{
  local dir pid
  stop_daemon
  stop_mock
  [[ -n "$bus_pid" ]] && { kill -TERM "$bus_pid" 2>/dev/null || true; wait "$bus_pid" 2>/dev/null || true; }
  # Whatever a failed check left in the test cgroups goes, then the
  # cgroups themselves, deepest first.
  if [[ -d "$test_cgroup" ]]; then
    for dir in $(find "$test_cgroup" -depth -type d); do
      [[ -e "$dir/cgroup.kill" ]] && echo 1 >"$dir/cgroup.kill" 2>/dev/null || true
    done
    for _ in $(seq 50); do
      find "$test_cgroup" -depth -type d -exec rmdir {} \; 2>/dev/null || true
      [[ -d "$test_cgroup" ]] || break
      sleep 0.1
    done
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# ---- the private bus, open to root (the mock) and the test user ------------------

cat >"$tmp/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=$tmp</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
dbus-daemon --config-file="$tmp/bus.conf" --nofork --print-address=3 3>"$tmp/bus.address" 2>"$tmp/bus.log" &
bus_pid=$!
wait_for 5 test -s "$tmp/bus.address" || skip "dbus-daemon did not start: $(cat "$tmp/bus.log")"
DBUS_SESSION_BUS_ADDRESS=$(head -n 1 "$tmp/bus.address")
export DBUS_SESSION_BUS_ADDRESS

# start_mock MODE: the user manager, making scopes in the test cgroup.
start_mock ()
{
  stop_mock
  : >"$tmp/mock.log"
  "$MOCK" --cgroup-parent "$test_cgroup" --uid "$user_uid" --gid "$user_gid" --mode "$1" \
    --log "$tmp/mock.log" 2>>"$tmp/mock.err" &
  mock_pid=$!
  wait_for 5 grep -qx ready "$tmp/mock.log"
}

# start_daemon NAME user|root [CGROUP]: a daemon with its own state dir,
# started inside CGROUP (a folder) when given; waits until it answers.
start_daemon ()
{
  local name=$1 who=$2 cgroup=${3:-}
  stop_daemon
  mkdir -p "$tmp/$name/workspace"
  [[ "$who" == user ]] && chown -R "$TEST_USER:" "$tmp/$name"
  daemon_as=$who
  (
    if [[ -n "$cgroup" ]]; then echo "$BASHPID" >"$cgroup/cgroup.procs"; fi
    if [[ "$who" == user ]]; then as_user "$DAEMON" --port-range "$PORT_RANGE" --state-dir "$tmp/$name/state"; fi
    exec "$DAEMON" --port-range "$PORT_RANGE" --state-dir "$tmp/$name/state"
  ) >"$tmp/$name.log" 2>&1 &
  daemon_pid=$!
  wait_for 15 ctl ports list
}

# cgroup_of PID: the "0::" line of /proc/PID/cgroup, without "0::".
cgroup_of () { sed -n 's/^0:://p' "/proc/$1/cgroup"; }

# requests: how many StartTransientUnit calls the mock has seen.
requests () { grep -c '^name=' "$tmp/mock.log" || true; }

# layer ID NAME FIELD: FIELD of the boundary layer NAME in `status --review`.
layer ()
{
  ctl --json status --review "$1" >"$tmp/layer.json" 2>/dev/null || return 1
  json "$tmp/layer.json" "[l['$3'] for l in d['boundary'] if l['layer'] == '$2'][0]"
}

state_is () { [[ "$(ctl --json status "$1" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["state"])')" == "$2" ]]; }

# create NAME PROFILE ARGV…: a session in NAME's workspace; prints its id.
create ()
{
  local name=$1 profile=$2
  shift 2
  ctl create --workspace "$tmp/$name/workspace" --profile "$profile" -- "$@"
}

# logs_have ID TEXT: whether the session's output so far contains TEXT.
logs_have () { ctl logs "$1" 2>/dev/null | grep -qF -- "$2"; }

# pids_of CGROUP_DIR: the members, one a line.
pids_of () { cat "$1/cgroup.procs" 2>/dev/null || true; }

# none_alive PID…: none of them runs any more (a zombie has ended: only
# its parent's wait is left).
none_alive ()
{
  local pid state
  for pid in "$@"; do
    state=$(sed -n 's/^.*) \(.\).*$/\1/p' "/proc/$pid/stat" 2>/dev/null || true)
    if [[ -n "$state" && "$state" != Z ]]; then
      echo "# $pid is still there: state $state, $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
      return 1
    fi
  done
  return 0
}

# A tree that tries to leave: children in the background, one that
# ignores SIGTERM, one that setsid()s and double-forks.
# Safe where this build has its helper; elsewhere what is checked of a
# session (its cgroup, its daemon's) holds for a host session too.
safe=safe
have_sandbox || safe=host
tree='trap "" TERM; sleep 300 & sleep 300 & setsid sh -c "sleep 300 & sleep 300 &" ; echo tree-started; sleep 300'

# ---- 1. a systemd user manager that delegates a scope --------------------------

if ! start_mock done; then
  not_ok "the mock user manager owns org.freedesktop.systemd1" "$(cat "$tmp/mock.err" 2>/dev/null)"
  echo "1..$n"; exit 1
fi

if start_daemon scoped user; then
  ok "an unprivileged daemon starts with a user manager on the bus"
else
  not_ok "an unprivileged daemon starts with a user manager on the bus" "$(cat "$tmp/scoped.log")"
  echo "1..$n"; exit 1
fi

unit="app-org.paddock.Daemon-$daemon_pid.scope"
scope="$test_cgroup/$unit"
check "it asked once for a scope holding its own pid, mode fail, Delegate=yes, with a description" \
  test "$(requests):$(grep '^name=' "$tmp/mock.log" | sed 's/ description=.\+$/ description=SOME/')" \
       = "1:name=$unit mode=fail pids=$daemon_pid delegate=true description=SOME"
check "it moved itself into a leaf of the scope (/proc/PID/cgroup)" \
  test "$(cgroup_of "$daemon_pid")" = "$test_cgroup_rel/$unit/paddockd"
check "the scope's cgroup belongs to the user, as delegation makes it" \
  test "$(stat -c %u "$scope"):$(stat -c %u "$scope/cgroup.procs")" = "$user_uid:$user_uid"
ctl --json info >"$tmp/info.json"
check "info names the scope as where sessions' cgroups go" \
  test "$(json "$tmp/info.json" '(d["cgroup"], "cgroup-unavailable" in d)')" = "('$scope', False)"

if have_sandbox; then
  id=$(create scoped safe sh -c "$tree" 2>"$tmp/create.err" || true)
  if wait_for 10 state_is "$id" running && wait_for 10 logs_have "$id" tree-started; then
    ok "a sandboxed session starts and runs its tree"
  else
    not_ok "a sandboxed session starts and runs its tree" "$(cat "$tmp/create.err")" "$(tail -n 20 "$tmp/scoped.log")"
  fi
  session_cgroup="$scope/paddock-session-$id"
  ctl --json status "$id" >"$tmp/status.json"
  agent=$(json "$tmp/status.json" 'd["pid"]')
  check "the session's cgroup is the daemon's sibling in the scope" test -d "$session_cgroup"
  check "its first process was born in it (/proc/$agent/cgroup)" \
    test "$(cgroup_of "$agent")" = "$test_cgroup_rel/$unit/paddock-session-$id"
  mapfile -t members < <(pids_of "$session_cgroup")
  check "every process of its tree is a member, the setsid and double-forked ones too (${#members[@]} ≥ 6)" \
    test "${#members[@]}" -ge 6
  # The session's keeper (the sandbox helper's parent, which holds the
  # session for the next daemon) is in the cgroup too, but it is the
  # daemon's helper, not one of the session's processes.
  not_keepers ()
  {
    local pid
    for pid in $(pids_of "$1"); do
      [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == paddock-keeper ]] || echo "$pid"
    done
  }
  counts_match ()
  {
    [[ "$(ctl --json status "$1" | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["processes"])')" \
         == "$(not_keepers "$2" | wc -l)" ]]
  }
  check "the session counts its processes from the cgroup" wait_for 5 counts_match "$id" "$session_cgroup"
  check "the boundary's cgroup layer: enforced, the agent observed a member" \
    test "$(layer "$id" cgroup status):$(layer "$id" cgroup evidence | cut -c1-10)" = "enforced:member of "
  ctl --json stop --grace 1 "$id" >"$tmp/stop.json" 2>&1 || true
  check "stop: 0 survivors" test "$(json "$tmp/stop.json" 'd["survivors"]' 2>&1)" = 0
  check "…and none of the ${#members[@]} processes is left (from /proc)" none_alive "${members[@]}"
  ctl destroy "$id" >/dev/null 2>&1 || true
  check "destroy removes the session's cgroup" wait_for 5 test ! -d "$session_cgroup"
else
  skip_check "a sandboxed session starts, its tree in its own cgroup, none left after stop" \
    "paddock-sandbox is not built (a portable build): no safe session"
fi

# A host session has no PID namespace: only the cgroup finds what
# setsid()s away from its process group.
id=$(create scoped host sh -c "$tree" 2>"$tmp/create.err" || true)
wait_for 10 logs_have "$id" tree-started || true
session_cgroup="$scope/paddock-session-$id"
mapfile -t members < <(pids_of "$session_cgroup")
check "a host session's tree is in its own cgroup too (${#members[@]} ≥ 6)" test "${#members[@]}" -ge 6
ctl --json destroy "$id" >"$tmp/destroy.json" 2>&1 || true
check "destroy: 0 survivors" test "$(json "$tmp/destroy.json" 'd["survivors"]' 2>&1)" = 0
check "…none of its processes is left, the setsid ones included (from /proc)" none_alive "${members[@]}"
check "…and its cgroup is gone" wait_for 5 test ! -d "$session_cgroup"
finish_daemon scoped

# ---- 2. a user manager that fails the job ---------------------------------------

start_mock failed
own_cgroup=$(cgroup_of $$)
if start_daemon failed user; then
  ok "with the job failed, the daemon still starts"
else
  not_ok "with the job failed, the daemon still starts" "$(cat "$tmp/failed.log")"
fi
check "it asked once" test "$(requests)" = 1
check "it stayed where it was started" test "$(cgroup_of "$daemon_pid")" = "$own_cgroup"
ctl --json info >"$tmp/info.json"
check "info says why sessions get no cgroups" \
  grep -q "job for app-org.paddock.Daemon-$daemon_pid.scope ended “failed”" \
    <(json "$tmp/info.json" 'd["cgroup-unavailable"]')
id=$(create failed "$safe" sh -c 'echo up; sleep 300' 2>"$tmp/create.err" || true)
check "a session still runs" wait_for 10 state_is "$id" running
check "its cgroup layer: unenforced, saying the job failed" \
  test "$(layer "$id" cgroup status):$(layer "$id" cgroup evidence | grep -c 'ended “failed”')" = "unenforced:1"
ctl --json destroy "$id" >"$tmp/destroy.json" 2>&1 || true
check "…and it is destroyed with 0 survivors" test "$(json "$tmp/destroy.json" 'd["survivors"]' 2>&1)" = 0
check "the mock made no cgroup" test ! -e "$test_cgroup/app-org.paddock.Daemon-$daemon_pid.scope"
finish_daemon failed

# ---- 3. a user manager that never ends the job ------------------------------------

start_mock silent
if start_daemon silent user; then
  ok "with the job never ending, the daemon still starts (after its timeout)"
else
  not_ok "with the job never ending, the daemon still starts (after its timeout)" "$(cat "$tmp/silent.log")"
fi
ctl --json info >"$tmp/info.json"
check "info says the manager did not answer in time" \
  grep -q "did not start the scope .* within" <(json "$tmp/info.json" 'd["cgroup-unavailable"]')
id=$(create silent "$safe" sh -c 'echo up; sleep 300' 2>"$tmp/create.err" || true)
check "a session still runs" wait_for 10 state_is "$id" running
ctl destroy "$id" >/dev/null 2>&1 || true
finish_daemon silent

# Asked to quit while the manager has not answered: the daemon stops
# waiting (the request is cancelled, not timed out) and exits cleanly.
: >"$tmp/mock.log"
echo ready >"$tmp/mock.log"
mkdir -p "$tmp/quitting"
chown "$TEST_USER:" "$tmp/quitting"
(as_user "$DAEMON" --port-range "$PORT_RANGE" --state-dir "$tmp/quitting/state") >"$tmp/quitting.log" 2>&1 &
quitting_pid=$!
asked () { [[ "$(requests)" == 1 ]]; }
wait_for 10 asked || true
kill -TERM "$quitting_pid"
quitting_status=0
wait "$quitting_pid" || quitting_status=$?
if [[ "$quitting_status:$(grep -c "the daemon stopped before the systemd user manager answered" "$tmp/quitting.log")" == "0:1" ]]; then
  ok "SIGTERM while the manager has not answered: the daemon exits cleanly, the request cancelled"
else
  not_ok "SIGTERM while the manager has not answered: the daemon exits cleanly, the request cancelled" \
    "exit status $quitting_status" "$(cat "$tmp/quitting.log")"
fi

# ---- 4. no user manager on the bus ---------------------------------------------------

stop_mock
: >"$tmp/mock.log"
start_daemon nomanager user || true
ctl --json info >"$tmp/info.json"
check "without a user manager, info says there is none to ask" \
  grep -q "no systemd user manager" <(json "$tmp/info.json" 'd["cgroup-unavailable"]')
finish_daemon nomanager

# ---- 5. root and an already delegated cgroup ask nobody ------------------------------

start_mock done
mkdir "$test_cgroup/root-daemon"
if start_daemon root root "$test_cgroup/root-daemon"; then ok "a root daemon starts"; else not_ok "a root daemon starts" "$(cat "$tmp/root.log")"; fi
check "root does not ask the user manager" test "$(requests)" = 0
id=$(create root host sh -c 'echo up; sleep 300' 2>"$tmp/create.err" || true)
wait_for 10 state_is "$id" running || true
check "…its sessions' cgroups go below its own" test -d "$test_cgroup/root-daemon/paddock-session-$id"
ctl destroy "$id" >/dev/null 2>&1 || true
finish_daemon root

delegated="$test_cgroup/delegated"
mkdir "$delegated"
chown "$user_uid:$user_gid" "$delegated" "$delegated/cgroup.procs" "$delegated/cgroup.subtree_control" "$delegated/cgroup.threads"
if start_daemon delegated user "$delegated"; then ok "a daemon in a delegated cgroup starts"; else not_ok "a daemon in a delegated cgroup starts" "$(cat "$tmp/delegated.log")"; fi
check "a daemon whose cgroup is already delegated does not ask the user manager" test "$(requests)" = 0
check "…and stays in its cgroup" test "$(cgroup_of "$daemon_pid")" = "$test_cgroup_rel/delegated"
id=$(create delegated "$safe" sh -c 'echo up; sleep 300' 2>"$tmp/create.err" || true)
wait_for 10 state_is "$id" running || true
check "…its sessions' cgroups go below it" test -d "$delegated/paddock-session-$id"
ctl --json destroy "$id" >"$tmp/destroy.json" 2>&1 || true
check "…and destroy leaves 0 survivors and no cgroup" \
  test "$(json "$tmp/destroy.json" 'd["survivors"]' 2>&1):$(test -d "$delegated/paddock-session-$id" && echo left || echo gone)" = "0:gone"
finish_daemon delegated
stop_mock

echo "1..$n"
[[ $failures -eq 0 ]]
