#!/bin/bash
# test-completions-sessions.sh — Tab offers the daemon's session ids, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Needs PADDOCK_BUILD_ROOT and PADDOCK_SOURCE_ROOT; paddockctl-lib.sh sets
# up the private bus and daemon, and says how it skips.

# shellcheck source=paddockctl-lib.sh
source "$(dirname "$0")/paddockctl-lib.sh" "$@"

completions="${PADDOCK_SOURCE_ROOT:?}/completions"
PATH="$PADDOCK_BUILD_ROOT/app:$PATH"

complete_words ()
{
  bash -c '
    source "$1"
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$(( $# - 1 ))
    _paddockctl
    (( ${#COMPREPLY[@]} == 0 )) || printf "%s\n" "${COMPREPLY[@]}" | sort' complete "$completions/paddockctl.bash" "$@"
}

ws="$tmp/workspace"
mkdir "$ws"
run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile host --name "tab	name" -- sleep 30
id=$(head -n 1 "$tmp/out")
[[ $rc -eq 0 && "$id" =~ ^[0-9a-f]{12}$ ]] || { not_ok "a session to complete" "$(cat "$tmp/out" "$tmp/err")"; echo "1..$n"; exit 1; }

run "$tmp/out" "$tmp/err" __complete sessions
check "the helper prints “ID<tab>NAME”, a tab in the name made a space" \
  test "$rc:$(cat "$tmp/out")" = "0:$id	tab name"

got=$(complete_words paddockctl status "" | tr '\n' ' ')
check "“paddockctl status <Tab>” offers the session's id (got: $got)" test "$got" = "$id "
got=$(complete_words paddockctl --json stop "${id:0:4}" | tr '\n' ' ')
check "“paddockctl --json stop ${id:0:4}<Tab>” completes it (got: $got)" test "$got" = "$id "
got=$(complete_words paddockctl status "$id" "" | wc -l)
check "no second id after the first (got $got)" test "$got" -eq 0
got=$(complete_words paddockctl checkpoint "$id" "" | tr '\n' ' ')
check "“paddockctl checkpoint ID <Tab>” offers its actions (got: $got)" test "$got" = "create list restore "

echo "1..$n"
exit $(( failures > 0 ))
