#!/bin/bash
# bench-peers.sh — `make bench-peers`: Paddock as a user meets it, beside its peers (issue #23)
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Every figure goes through the user's path (paddockctl, D-Bus, a private
# bus and daemon as bench-soak.sh makes them), interleaved round by round
# with the peer a user would pick instead, installed here when missing:
# bubblewrap, Google's portserver (python3-portpicker) and Anthropic's
# sandbox-runtime (`srt`, npm, into a private prefix of the build folder;
# it wants ripgrep and socat). Each round prints ours, theirs and the
# ratio; each figure ends with the medians. Timing is peers-clock's (a
# shell cannot time a 3 ms command).
#
# Each figure also has its floor, measured in the same rounds: the same
# work done by the kernel or a minimal C program, with nothing of
# Paddock's (issue #23's "Done when": a target that is not met is
# reported with the floor that stops it). The start's floor is
# peers-floor-start (a libc-only bus login and one call to the daemon,
# then exec of `unshare -Urmpf --mount-proc`), and beside it
# peers-floor-start-glib (the same on GIO, with paddockctl's libraries:
# what a GNOME client costs before it can ask); git's, the same overlay a
# safe session's stage is, mounted by `unshare -Urm` with nothing else;
# the proxy's, bench-network's one-thread C relay; the leases', the same
# racers calling Peer.Ping; teardown's, the kernel's SIGKILL of a PID
# namespace. The run ends with a table: each target, Paddock's ratio to
# its peer, met or not, the floor, and Paddock's ratio to that floor.
#
# Usage: bench-peers.sh [BUILDDIR] [ROUNDS]   (ROUNDS ≥ 10 for the record)
# PADDOCK_PEERS_ONLY="start leases git proxy teardown" picks figures;
# PADDOCK_PEERS_OTHER_CTL=PATH adds another build's paddockctl to the start;
# PADDOCK_PEERS_DAEMON=PATH runs another paddockd (a copy of an earlier build).

set -euo pipefail

builddir=$(cd "${1:-build}" && pwd)
rounds=${2:-10}
only=${PADDOCK_PEERS_ONLY:-start leases git proxy teardown}
CTL="$builddir/app/paddockctl"
DAEMON="${PADDOCK_PEERS_DAEMON:-$builddir/daemon/paddockd}"
CLOCK="$builddir/bench/peers/peers-clock"
FLOOR_START="$builddir/bench/peers/peers-floor-start"
FLOOR_START_GLIB="$builddir/bench/peers/peers-floor-start-glib"
here=$(cd "$(dirname "$0")" && pwd)
for program in "$CTL" "$DAEMON" "$CLOCK" "$FLOOR_START" "$FLOOR_START_GLIB"; do
  [ -x "$program" ] || { echo "bench-peers: build first ($program)" >&2; exit 1; }
done

# ---- the peers -------------------------------------------------------------------------

sudo_if_needed () { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
missing=()
for package in bubblewrap python3-portpicker ripgrep socat; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if (( ${#missing[@]} )); then
  echo "bench-peers: installing ${missing[*]}"
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" >/dev/null
fi
npm_prefix="$builddir/bench-peers-npm"
SRT="$npm_prefix/node_modules/.bin/srt"
if [ ! -x "$SRT" ] && command -v npm >/dev/null; then
  echo "bench-peers: installing @anthropic-ai/sandbox-runtime into $npm_prefix"
  npm install --prefix "$npm_prefix" --no-audit --no-fund @anthropic-ai/sandbox-runtime >/dev/null
fi
[ -x "$SRT" ] || { echo "bench-peers: no npm: sandbox-runtime left out"; SRT=""; }

# ---- a private bus and daemon, as the tests make them ------------------------------------

tmp=$(mktemp -d "${TMPDIR:-/tmp}/paddock-peers.XXXXXX")
ws="$tmp/ws"
mkdir -p "$ws"
unset DISPLAY WAYLAND_DISPLAY
bus_pid="" daemon_pid="" portserver_pid=""
cleanup ()
{
  # Every step, whatever the one before returned (a killed daemon's wait
  # fails, and errexit would end the trap there, leaving the rest running).
  set +e
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
  [ -n "$portserver_pid" ] && kill "$portserver_pid" 2>/dev/null && wait "$portserver_pid" 2>/dev/null
  [ -n "$bus_pid" ] && kill "$bus_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

# Room for 20 racers' leases at once, in a pool of our own (as the tests'
# daemons have: tests/tap-lib.sh).
# shellcheck source=../../tests/tap-lib.sh
source "$here/../../tests/tap-lib.sh"
private_session_bus "$tmp" || { echo "bench-peers: dbus-daemon did not start" >&2; exit 1; }
pick_port_range 2500
"$DAEMON" --port-range "$PORT_RANGE" --state-dir "$tmp/state" --max-leases 2000 --max-leases-per-owner 500 >"$tmp/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do "$CTL" ports list >/dev/null 2>&1 && break; sleep 0.1; done

destroy_all ()
{
  local id
  for id in $("$CTL" list --json | /usr/bin/python3 -c 'import json,sys; [print(s["id"]) for s in json.load(sys.stdin)["sessions"]]'); do
    "$CTL" destroy "$id" >/dev/null
  done
}
median () { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio () { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# The closing table: a row per target, "|"-separated (see the end).
table="$tmp/table"
: >"$table"
row () { local IFS='|'; echo "$*" >>"$table"; }
# met VALUE OP LIMIT: "yes" or "no" (OP: le or ge).
met () { awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN { print ((op == "le" ? v <= l : v >= l) ? "yes" : "no") }'; }
# field FILE LABEL N: field N of LABEL's line in a peers-clock --summary.
field () { awk -v l="$2" -v n="$3" '$1 == l { print $n }' "$1"; }

# A typical agent set-up of bubblewrap: the system read-only, the project
# read-write, fresh /proc /dev /tmp, every namespace, killed with its parent.
bwrap_args=(bwrap --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib
            --symlink usr/lib64 /lib64 --symlink usr/sbin /sbin --ro-bind /etc /etc
            --proc /proc --dev /dev --tmpfs /tmp --unshare-all --die-with-parent --new-session)

echo "bench-peers: $(nproc) cores, kernel $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rounds interleaved, order rotating each round; the machine may be shared: compare ratios within this run"

# ---- 1. first output of `echo hi` in a fresh sandbox, and the client's exit -------------

if [[ " $only " == *" start "* ]]; then
  echo
  echo "1. first output of \`echo hi\` in a fresh sandbox / the client's exit / exit after first output"
  start_cmds=(paddock "$CTL" create --workspace "$ws" --profile safe --attach -- sh -c 'echo hi'
              :: bwrap "${bwrap_args[@]}" --bind "$ws" "$ws" --chdir "$ws" sh -c 'echo hi'
              :: unshare unshare -Urmpf --mount-proc sh -c 'echo hi'
              :: floor "$FLOOR_START" unshare -Urmpf --mount-proc sh -c 'echo hi'
              :: floor-gio "$FLOOR_START_GLIB" unshare -Urmpf --mount-proc sh -c 'echo hi')
  [ -n "$SRT" ] && start_cmds+=(:: srt "$SRT" -c 'echo hi')
  # Another build's client against the same daemon: before/after in one run.
  [ -n "${PADDOCK_PEERS_OTHER_CTL:-}" ] &&
    start_cmds+=(:: other-ctl "$PADDOCK_PEERS_OTHER_CTL" create --workspace "$ws" --profile safe --attach -- sh -c 'echo hi')
  (cd "$ws" && "$CLOCK" time --rounds "$rounds" --marker hi --summary "$tmp/start.sum" "${start_cmds[@]}") 2> >(grep -v -e '^paddockctl: session ' >&2)
  echo "   targets: first output <= 1.5x bwrap; the client exits within 5 ms of the agent's exit (the last column bounds it)"
  echo "   floor: peers-floor-start = a libc-only client's bus login (connect, EXTERNAL, Hello) and one call to the daemon (Peer.Ping), then exec of the same unshare"
  echo "   floor-gio: peers-floor-start-glib = the same with paddockctl's libraries, locale and g_bus_get_sync(): what a GIO client costs before it can ask"
  s="$tmp/start.sum"
  r_bwrap=$(field "$s" bwrap 5); r_floor=$(field "$s" floor 5); r_gio=$(field "$s" floor-gio 5)
  echo "   paddock / bwrap $(ratio "$r_bwrap" 1)x, paddock / floor $(ratio "$r_floor" 1)x, paddock / floor-gio $(ratio "$r_gio" 1)x first output (medians of per-round ratios); floor $(field "$s" floor 2) ms, floor-gio $(field "$s" floor-gio 2) ms, unshare alone $(field "$s" unshare 2) ms"
  row "first output, create --attach ÷ bwrap" "<= 1.5x" "$(field "$s" paddock 2) ms" "$(ratio "$r_bwrap" 1)x" "$(met "$r_bwrap" le 1.5)" \
      "floor client + unshare $(field "$s" floor 2) ms" "$(ratio "$r_floor" 1)x"
  row "… the same floor with a GIO client" "" "" "floor-gio ÷ bwrap $(ratio "$(field "$s" floor-gio 2)" "$(field "$s" bwrap 2)")x" "" \
      "GIO client + unshare $(field "$s" floor-gio 2) ms" "$(ratio "$r_gio" 1)x"
  tail_ms=$(field "$s" paddock 4)
  row "client exit after the first output" "<= 5 ms" "$(ratio "$tail_ms" 1) ms" "bwrap $(ratio "$(field "$s" bwrap 4)" 1) ms" "$(met "$tail_ms" le 5)" \
      "floor $(ratio "$(field "$s" floor 4)" 1) ms" "+$(awk -v a="$tail_ms" -v b="$(field "$s" floor 4)" 'BEGIN { printf "%.2f", a - b }') ms"
  destroy_all
fi

# ---- 2. held port leases, 20 racing processes --------------------------------------------

if [[ " $only " == *" leases "* ]]; then
  echo
  echo "2. held port leases, 20 racing processes x 25 (D-Bus Ports1.Lease, one call each, or LeaseMany, 16 a call, vs portserver through portpicker)"
  portserver_address="@paddock-peers-$$"
  /usr/bin/python3 /usr/bin/portserver --portserver_address "$portserver_address" >"$tmp/portserver.log" 2>&1 &
  portserver_pid=$!
  sleep 1
  ours=() many=() theirs=() pings=()
  for round in $(seq 1 "$rounds"); do
    for k in 0 1 2 3; do
      case $(( (round + k) % 4 )) in
        0) a=$("$CLOCK" lease-race 20 25) ;;
        1) c=$("$CLOCK" lease-race 20 25 --many) ;;
        2) b=$(/usr/bin/python3 "$here/portserver-race.py" "$portserver_address" 20 25) ;;
        3) p=$("$CLOCK" lease-race 20 25 --ping) ;;
      esac
    done
    ours+=("${a%% *}"); many+=("${c%% *}"); theirs+=("${b%% *}"); pings+=("${p%% *}")
    printf 'round %2d:  paddock Lease     %s   (%sx)\n           paddock LeaseMany %s   (%sx)\n           portserver        %s\n           floor: Peer.Ping  %s   (Lease %sx of it)\n' \
      "$round" "$a" "$(ratio "${a%% *}" "${b%% *}")" "$c" "$(ratio "${c%% *}" "${b%% *}")" "$b" "$p" "$(ratio "${a%% *}" "${p%% *}")"
  done
  m_ours=$(printf '%s\n' "${ours[@]}" | median); m_many=$(printf '%s\n' "${many[@]}" | median)
  m_theirs=$(printf '%s\n' "${theirs[@]}" | median); m_ping=$(printf '%s\n' "${pings[@]}" | median)
  echo "medians: paddock Lease $m_ours/s ($(ratio "$m_ours" "$m_theirs")x), LeaseMany (16 a call) $m_many/s ($(ratio "$m_many" "$m_theirs")x), portserver $m_theirs/s   (target >= 1x)"
  echo "floor: the same 20 processes calling the daemon's Peer.Ping (the bus round trip, nothing of a lease) $m_ping/s = $(ratio "$m_ping" "$m_theirs")x portserver; Lease is $(ratio "$m_ours" "$m_ping")x of it"
  row "held leases, Lease ÷ portserver" ">= 1x" "$m_ours/s" "$(ratio "$m_ours" "$m_theirs")x" "$(met "$(ratio "$m_ours" "$m_theirs")" ge 1)" \
      "Peer.Ping $m_ping/s" "$(ratio "$m_ours" "$m_ping")x"
  row "held leases, LeaseMany ÷ portserver" ">= 1x" "$m_many/s" "$(ratio "$m_many" "$m_theirs")x" "$(met "$(ratio "$m_many" "$m_theirs")" ge 1)" \
      "Peer.Ping $m_ping/s" "$(ratio "$m_many" "$m_ping")x"

  echo "2b. one lease from the command line: \`paddockctl ports lease -- true\` vs portpicker's client"
  (cd "$tmp" && PORTSERVER_ADDRESS="$portserver_address" "$CLOCK" time --rounds "$rounds" --summary "$tmp/lease.sum" \
     paddockctl "$CTL" ports lease --name bench -- true \
     :: portpicker /usr/bin/python3 -c 'import portpicker; assert portpicker.pick_unused_port()')
  echo "   target: within 2x of portserver's client"
  r=$(field "$tmp/lease.sum" portpicker 6)
  row "\`ports lease -- true\` ÷ portpicker's client" "<= 2x" "$(field "$tmp/lease.sum" paddockctl 3) ms" "$(ratio "$r" 1)x" "$(met "$r" le 2)" "(none measured)" ""
  kill "$portserver_pid"; wait "$portserver_pid" 2>/dev/null || true; portserver_pid=""
fi

# ---- 3. git status in a 10,000-file repository, timed inside each sandbox ---------------

if [[ " $only " == *" git "* ]]; then
  echo
  echo "3. \`git status --porcelain\` in a 10,000-file repository, timed inside (bash's \$EPOCHREALTIME, best of 9 per round)"
  echo "   floor: the same overlay a safe session's stage is (lower: the repository; upper and work: a fresh folder each round; userxattr), mounted by unshare -Urm, nothing else"
  repo="$tmp/repo"
  mkdir -p "$repo"
  for d in $(seq 0 99); do
    mkdir "$repo/d$d"
    for f in $(seq 0 99); do echo "file $d $f" >"$repo/d$d/f$f.txt"; done
  done
  git -C "$repo" init -q && git -C "$repo" add -A && git -C "$repo" -c user.name=b -c user.email=b@b commit -qm tree
  # Microseconds: bash's `time` prints whole milliseconds of a ~20 ms run.
  # shellcheck disable=SC2016 # expanded by the inner bash
  inner='for i in 1 2 3 4 5 6 7 8 9; do s=$EPOCHREALTIME; git status --porcelain >/dev/null; echo "$s $EPOCHREALTIME"; done'
  best () { awk 'NF == 2 { d = $2 - $1; if (n++ == 0 || d < m) m = d } END { if (n) printf "%.6f\n", m }'; }
  id=$("$CTL" create --workspace "$repo" --profile safe -- sleep 100000)
  for _ in $(seq 50); do "$CTL" exec "$id" -- true >/dev/null 2>&1 && break; sleep 0.1; done
  declare -A git_times=() git_ratios=()
  kinds=(native paddock floor bwrap)
  ovl="$tmp/ovl"
  mkdir -p "$ovl"
  # shellcheck disable=SC2016 # expanded by the inner shell
  floor_cmd='rm -rf "$0/upper" "$0/work" && mkdir -p "$0/upper" "$0/work" "$0/merged" &&
    mount -t overlay overlay -o "lowerdir=$1,upperdir=$0/upper,workdir=$0/work,userxattr" "$0/merged" &&
    cd "$0/merged" && bash -c "$2"'
  [ -n "$SRT" ] && kinds+=(srt)
  for round in $(seq 1 "$rounds"); do
    line="round $(printf '%2d' "$round"):"
    for k in $(seq 0 $(( ${#kinds[@]} - 1 ))); do
      kind=${kinds[$(( (round + k) % ${#kinds[@]} ))]}
      case $kind in
        native)  t=$(cd "$repo" && bash -c "$inner" | best) ;;
        paddock) t=$("$CTL" exec "$id" -- bash -c "$inner" | best) ;;
        floor)   t=$(unshare -Urm bash -c "$floor_cmd" "$ovl" "$repo" "$inner" | best) ;;
        bwrap)   t=$("${bwrap_args[@]}" --bind "$repo" "$repo" --chdir "$repo" bash -c "$inner" | best) ;;
        srt)     t=$(cd "$repo" && "$SRT" -c "$inner" 2>/dev/null | best) ;;
      esac
      git_times[$kind]+="$t "
      eval "t_$kind=$t"
    done
    for kind in "${kinds[@]}"; do
      eval "t=\$t_$kind"
      line+="  $kind $(awk -v t="$t" 'BEGIN { printf "%.1f", t * 1000 }') ms"
      if [ "$kind" != native ]; then
        line+=" ($(ratio "$t" "$t_native")x native)"
        git_ratios[$kind]+="$(ratio "$t" "$t_native") "
      fi
    done
    git_ratios[paddock_floor]+="$(ratio "$t_paddock" "$t_floor") "
    echo "$line  paddock / floor $(ratio "$t_paddock" "$t_floor")x"
  done
  m_native=$(printf '%s\n' ${git_times[native]} | median)
  summary="medians:"
  for kind in "${kinds[@]}"; do
    m=$(printf '%s\n' ${git_times[$kind]} | median)
    summary+="  $kind $(awk -v t="$m" 'BEGIN { printf "%.1f", t * 1000 }') ms"
    [ "$kind" != native ] &&
      summary+=" ($(ratio "$m" "$m_native")x; per-round ratios' median $(printf '%s\n' ${git_ratios[$kind]} | median)x)"
  done
  echo "$summary   (target: paddock <= 1.15x native)"
  r=$(printf '%s\n' ${git_ratios[paddock]} | median); r_floor=$(printf '%s\n' ${git_ratios[floor]} | median)
  r_pf=$(printf '%s\n' ${git_ratios[paddock_floor]} | median)
  echo "paddock / floor: $r_pf (median of per-round ratios); the floor is ${r_floor}x native"
  row "git status inside ÷ native" "<= 1.15x" "$(awk -v t="$(printf '%s\n' ${git_times[paddock]} | median)" 'BEGIN { printf "%.1f", t * 1000 }') ms" \
      "${r}x" "$(met "$r" le 1.15)" "bare overlay ${r_floor}x native" "${r_pf}x"
  "$CTL" destroy "$id" >/dev/null
fi

# ---- 4. the session proxy with 8 and 64 clients ------------------------------------------

if [[ " $only " == *" proxy "* ]]; then
  # bench-network's proxy is the session's (PaddockProxy, allowlist,
  # journal, keep-alive pool), in-process, against the same origin direct,
  # rounds interleaved. sandbox-runtime's proxy is not driven here yet (it
  # wants a settings file allowing the origin's domain, and a client inside
  # srt): ANCHORS.md has its 7.57x.
  for clients in 8 64; do
    echo
    echo "4. proxy round trip of a small request, $clients clients at once, vs direct (bench-network)"
    "$builddir/bench/network/bench-network" --clients "$clients" --rounds "$rounds" | sed -n '/^small request/,/^proxy vs that floor/p' |
      tee "$tmp/proxy-$clients.out"
  done
  p=$tmp/proxy-64.out
  r=$(awk '/^small request round trip/ { sub(/x$/, "", $NF); print $NF }' "$p")
  r_floor=$(awk '/^floor: a minimal/ { sub(/x$/, "", $NF); print $NF }' "$p")
  r_pf=$(awk '/^proxy vs that floor/ { sub(/x$/, "", $NF); print $NF }' "$p")
  row "proxy, 64 clients ÷ direct" "<= 1.5x" "$(awk '/^small request round trip/ { print $(NF - 4) }' "$p") ms" "${r}x" "$(met "$r" le 1.5)" \
      "one-thread C relay ${r_floor}x direct" "${r_pf}x"
  echo "   target: <= 1.5x direct with 64 clients; the floor lines: the same hop by a minimal one-thread C relay (bench/network/bench-floor-relay.c)"
fi

# ---- 5. teardown of 500 escaped processes -------------------------------------------------

if [[ " $only " == *" teardown "* ]]; then
  echo
  echo "5. teardown of 500 processes, half of them setsid'd (paddockctl destroy vs SIGKILL of an unshare'd pid 1)"
  spawn='for i in $(seq 250); do sleep 1001 & setsid sleep 1001 & done; echo ready; wait'
  ours=() theirs=() daemons=()
  for round in $(seq 1 "$rounds"); do
    id=$("$CTL" create --workspace "$ws" --profile safe -- sh -c "$spawn")
    for _ in $(seq 600); do
      n=$("$CTL" status "$id" --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin).get("processes", 0))')
      (( n >= 501 )) && break
      sleep 0.1
    done
    a=$("$CLOCK" once --output "$tmp/destroy.out" "$CTL" destroy "$id")
    # The daemon's own part: from the call's arrival to its answer
    # (Destroy's elapsed-ms, whole ms); the rest is paddockctl's start,
    # bus login and exit.
    d=$(sed -n 's/.* in \([0-9]*\) ms.*/\1/p' "$tmp/destroy.out" | head -n 1)
    left=$(pgrep -f -c '^sleep 1001$' || true)
    b=$("$CLOCK" kill-ns ready unshare -Urpf --mount-proc sh -c "$spawn" 2>/dev/null)
    ours+=("$a"); theirs+=("$b"); daemons+=("${d:-0}")
    printf 'round %2d:  paddock %s ms (daemon %s ms; %s left)  kernel %s ms  (%sx)\n' "$round" "$a" "${d:-?}" "$left" "$b" "$(ratio "$a" "$b")"
  done
  m_ours=$(printf '%s\n' "${ours[@]}" | median); m_theirs=$(printf '%s\n' "${theirs[@]}" | median)
  m_daemon=$(printf '%s\n' "${daemons[@]}" | median)
  echo "medians: paddock $m_ours ms (the daemon's own $m_daemon ms), kernel $m_theirs ms: $(ratio "$m_ours" "$m_theirs")x   (target <= 1.5x; the kernel is also the floor)"
  row "teardown of 500, destroy ÷ the kernel's" "<= 1.5x" "$m_ours ms" "$(ratio "$m_ours" "$m_theirs")x" "$(met "$(ratio "$m_ours" "$m_theirs")" le 1.5)" \
      "the kernel's SIGKILL of the pid ns $m_theirs ms" "$(ratio "$m_ours" "$m_theirs")x (daemon alone $(ratio "$m_daemon" "$m_theirs")x)"
fi

# ---- the closing table -------------------------------------------------------------------

echo
echo "targets (load now $(cut -d' ' -f1-3 /proc/loadavg); ratios: medians, of per-round ratios where rounds pair up):"
{
  echo "target|limit|paddock|ratio to peer|met?|floor (same rounds)|ratio to floor"
  cat "$table"
} >"$tmp/table.all"
if column -t -s '|' -o ' | ' "$tmp/table.all" 2>/dev/null; then :; else cat "$tmp/table.all"; fi
