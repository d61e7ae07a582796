#!/bin/bash
# test-completions.sh — paddockctl's shell completions and man pages against its --help, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Needs PADDOCK_BUILD_ROOT and PADDOCK_SOURCE_ROOT. The completions list
# paddockctl's commands by hand: every command `paddockctl --help` lists
# must be in the bash, zsh and fish files and have a man page, so that a
# new command cannot be forgotten in one of them. Then the bash completion
# is run as bash runs it, and the session-id helper against a bus that
# would activate the daemon: Tab must never start it.

set -euo pipefail

source "$(dirname "$0")/tap-lib.sh" "$@"

[[ -n "${PADDOCK_BUILD_ROOT:-}" && -n "${PADDOCK_SOURCE_ROOT:-}" ]] ||
  skip "PADDOCK_BUILD_ROOT or PADDOCK_SOURCE_ROOT is not set"
CTL="$PADDOCK_BUILD_ROOT/app/paddockctl"
[[ -x "$CTL" ]] || skip "$CTL is not built"
completions="$PADDOCK_SOURCE_ROOT/completions"

unset DBUS_SESSION_BUS_ADDRESS LANGUAGE PADDOCK_LOCALEDIR
export LC_ALL=C.UTF-8

tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-completions.XXXXXX")
bus_pid=""
cleanup ()
{
  # The stand-in daemon the bus activated, by the pid it wrote.
  [[ ! -s "$tmp/activated" ]] || kill -TERM "$(cat "$tmp/activated")" 2>/dev/null || true
  [[ -z "$bus_pid" ]] || { kill -TERM "$bus_pid" 2>/dev/null || true; wait "$bus_pid" 2>/dev/null || true; }
  rm -rf "$tmp"
}
trap cleanup EXIT

# ---- every command of --help, everywhere ---------------------------------------

mapfile -t commands < <("$CTL" --help | awk '/^Commands:/ { t = 1; next } t && !NF { exit } t { print $1 }')
if (( ${#commands[@]} >= 10 )); then
  ok "paddockctl --help lists its commands (${#commands[@]})"
else
  not_ok "paddockctl --help lists its commands" "got: ${commands[*]:-nothing}"
fi

missing_in ()
{
  local file=$1 pattern=$2 command missing=()
  for command in "${commands[@]}"; do
    grep -Eq "$(printf "$pattern" "$command")" "$file" || missing+=("$command")
  done
  echo "${missing[*]:-}"
}

# The word lists each file completes from (not just any mention).
m=$(missing_in "$completions/paddockctl.bash" '^_paddockctl_commands="([^"]* )?%s( [^"]*)?"')
check "the bash completion offers every command${m:+ (missing: $m)}" test -z "$m"
m=$(missing_in "$completions/_paddockctl" "^ +'%s:")
check "the zsh completion offers every command${m:+ (missing: $m)}" test -z "$m"
m=$(missing_in "$completions/paddockctl.fish" "^set -l paddockctl_commands( .*)? %s( |\$)")
m2=$(missing_in "$completions/paddockctl.fish" "^complete -c paddockctl .* -a %s -d ")
check "the fish completion offers every command${m:+ (missing from the list: $m)}${m2:+ (missing a complete line: $m2)}" \
  test -z "$m$m2"

if [[ -d "$PADDOCK_BUILD_ROOT/man" ]] && ls "$PADDOCK_BUILD_ROOT/man/"*.1 >/dev/null 2>&1; then
  missing=()
  for command in "${commands[@]}"; do
    [[ -s "$PADDOCK_BUILD_ROOT/man/paddockctl-$command.1" ]] || missing+=("$command")
  done
  check "every command has a man page${missing[*]:+ (missing: ${missing[*]})}" test ${#missing[@]} -eq 0
  check "paddockctl-status(1) is made of “paddockctl status --help”" \
    grep -q -- 'review' "$PADDOCK_BUILD_ROOT/man/paddockctl-status.1"
else
  ok "# SKIP the man pages are not built (-Dman=disabled or no help2man)"
fi

# ---- the bash completion, as bash calls it -------------------------------------

# complete_words WORD…: what Tab offers after the words, the last one being
# the word under the cursor, one candidate a line, sorted.
complete_words ()
{
  bash -c '
    source "$1"
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$(( $# - 1 ))
    COMP_LINE="$*"
    _paddockctl
    (( ${#COMPREPLY[@]} == 0 )) || printf "%s\n" "${COMPREPLY[@]}" | sort' complete "$completions/paddockctl.bash" "$@"
}

PATH="$PADDOCK_BUILD_ROOT/app:$PATH"
got=$(complete_words paddockctl st | tr '\n' ' ')
check "“paddockctl st<Tab>” offers status and stop (got: $got)" test "$got" = "status stop "
got=$(complete_words paddockctl "" | wc -l)
check "“paddockctl <Tab>” offers the ${#commands[@]} commands (got $got)" test "$got" -eq "${#commands[@]}"
got=$(complete_words paddockctl create --work | tr '\n' ' ')
check "“paddockctl create --work<Tab>” offers --workspace, read from create's --help (got: $got)" \
  test "$got" = "--workspace "
got=$(complete_words paddockctl ports lease --na | tr '\n' ' ')
check "“paddockctl ports lease --na<Tab>” offers --name (got: $got)" test "$got" = "--name "
got=$(complete_words paddockctl ports "" | tr '\n' ' ')
check "“paddockctl ports <Tab>” offers lease, list and release (got: $got)" test "$got" = "lease list release "
got=$(complete_words paddockctl agents "" | tr '\n' ' ')
check "“paddockctl agents <Tab>” offers list, reset and import-login (got: $got)" test "$got" = "import-login list reset "
mkdir -p "$tmp/config/paddock/agents"
echo '{}' >"$tmp/config/paddock/agents/my-agent.json"
got=$(XDG_CONFIG_HOME="$tmp/config" complete_words paddockctl create --agent my | tr '\n' ' ')
check "“create --agent my<Tab>” offers the user's preset my-agent, with no daemon (got: $got)" test "$got" = "my-agent "
mkdir "$tmp/wsdir"
got=$(cd "$tmp" && complete_words paddockctl create --workspace ws | tr '\n' ' ')
check "“--workspace ws<Tab>” offers the folder (got: $got)" test "$got" = "wsdir "
got=$(complete_words paddockctl create --workspace /tmp --na | tr '\n' ' ')
check "an option's value is not taken for the command word (got: $got)" test "$got" = "--name "

# ---- zsh and fish: they load the files, fish completes as bash does -------------

if command -v zsh >/dev/null; then
  check "zsh parses _paddockctl" zsh -n "$completions/_paddockctl"
else
  ok "# SKIP zsh is not installed"
fi
if command -v fish >/dev/null; then
  check "fish parses paddockctl.fish" fish -n "$completions/paddockctl.fish"
  # complete -C prints "candidate<tab>description"; HOME keeps fish's own
  # files away from the user's.
  fish_complete () { HOME="$tmp" fish -c "source '$completions/paddockctl.fish'; complete -C '$1'" | cut -f1 | tr '\n' ' '; }
  got=$(fish_complete "paddockctl st")
  check "fish: “paddockctl st<Tab>” offers status and stop (got: $got)" test "$got" = "status stop "
  got=$(fish_complete "paddockctl create --work")
  check "fish: “paddockctl create --work<Tab>” offers --workspace (got: $got)" test "$got" = "--workspace "
else
  ok "# SKIP fish is not installed"
fi

# ---- session ids: never by starting the daemon ---------------------------------

command -v dbus-daemon >/dev/null || { echo "1..$n"; exit $(( failures > 0 )); }

# A bus that activates org.paddock.Daemon by running a script that leaves
# a mark: `list` must start it (so activation works), Tab must not.
mkdir "$tmp/services"
cat >"$tmp/activate.sh" <<EOF
#!/bin/sh
echo \$\$ >"$tmp/activated"
exec sleep 30
EOF
chmod +x "$tmp/activate.sh"
printf '[D-BUS Service]\nName=org.paddock.Daemon\nExec=%s\n' "$tmp/activate.sh" \
  >"$tmp/services/org.paddock.Daemon.service"
cat >"$tmp/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=$tmp</listen>
  <auth>EXTERNAL</auth>
  <servicedir>$tmp/services</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
dbus-daemon --config-file="$tmp/bus.conf" --nofork --print-address=3 \
  3>"$tmp/bus.address" 2>"$tmp/bus.log" &
bus_pid=$!
wait_for 5 test -s "$tmp/bus.address" || skip "dbus-daemon did not start: $(cat "$tmp/bus.log")"
DBUS_SESSION_BUS_ADDRESS=$(head -n 1 "$tmp/bus.address")
export DBUS_SESSION_BUS_ADDRESS

rc=0
"$CTL" __complete sessions >"$tmp/out" 2>"$tmp/err" || rc=$?
if [[ $rc -eq 1 && ! -s "$tmp/out" && ! -s "$tmp/err" && ! -e "$tmp/activated" ]]; then
  ok "without a daemon, the session helper fails silently and starts none"
else
  not_ok "without a daemon, the session helper fails silently and starts none" \
    "exit $rc" "stdout: $(cat "$tmp/out")" "stderr: $(cat "$tmp/err")" \
    "activated: $(cat "$tmp/activated" 2>/dev/null || echo no)"
fi
got=$(complete_words paddockctl status "" | wc -l)
check "“paddockctl status <Tab>” offers nothing then, and starts no daemon" \
  test "$got:$(test -e "$tmp/activated" && echo started)" = "0:"

# The control: the same bus does activate the daemon for a real command
# (the stand-in never answers; the call's own timeout is not waited for).
timeout 3 "$CTL" list >"$tmp/list.out" 2>&1 || true
if [[ -e "$tmp/activated" ]]; then
  ok "the bus would have activated the daemon (“paddockctl list” did)"
else
  not_ok "the bus would have activated the daemon (“paddockctl list” did)" \
    "list: $(cat "$tmp/list.out")" "bus: $(cat "$tmp/bus.log")"
fi

echo "1..$n"
exit $(( failures > 0 ))
