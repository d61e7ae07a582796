# tap-lib.sh — the TAP helpers every shell test shares; sourced
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Sourced with the script's arguments. With --tap (how tests/meson.build
# runs the scripts, protocol 'tap') a skip is the TAP plan
# "1..0 # SKIP reason" and exit 0, since meson reports any non-zero exit of
# a TAP test as an error; without it a skip exits 77 (the automake/meson
# convention).
#
# Defines: tap_mode, n, failures; skip, ok, not_ok, check, json (needs
# $PYTHON when called), wait_for.

tap_mode=false
[[ "${1:-}" == "--tap" ]] && tap_mode=true

skip ()
{
  # After checks ran (a daemon started, say), "1..0" would contradict the
  # "ok" lines already printed, and meson reports such a TAP as an error:
  # the rest is then one skipped check and the plan counts what was said.
  if (( ${n:-0} > 0 )); then
    echo "ok $((n + 1)) # SKIP $*"
    echo "1..$((n + 1))"
    (( ${failures:-0} == 0 )) || exit 1
    if $tap_mode; then exit 0; else exit 77; fi
  fi
  echo "1..0 # SKIP $*"
  if $tap_mode; then exit 0; else exit 77; fi
}

n=0
failures=0

# skip_check DESCRIPTION REASON: one check this machine or build cannot
# make, said as a TAP skip (the script goes on with the others).
skip_check ()
{
  n=$((n + 1))
  echo "ok $n - $1 # SKIP $2"
}

# Whether this build has the Linux executor's helper (a portable build,
# -Dlinux_executor=false, has not: its safe sessions are refused).
have_sandbox ()
{
  [[ -x "${PADDOCK_BUILD_ROOT:-}/daemon/sandbox/paddock-sandbox" ]]
}

ok ()
{
  n=$((n + 1))
  echo "ok $n - $1"
}

not_ok ()
{
  local line
  n=$((n + 1))
  failures=$((failures + 1))
  echo "not ok $n - $1"
  shift
  for line in "$@"; do
    printf '%s\n' "$line" | sed 's/^/#   /'
  done
}

# check DESCRIPTION COMMAND…: ok when COMMAND succeeds. COMMAND runs when
# check does: a condition computed by the caller ("$(…)") is computed once,
# so a wait_for around it waits for nothing; give wait_for a command.
check ()
{
  local description=$1
  shift
  if "$@"; then ok "$description"; else not_ok "$description" "failed: $*"; fi
}

# json FILE EXPR: print a Python expression over the document in FILE (d).
json ()
{
  "$PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# wait_for SECONDS COMMAND…: poll COMMAND every 0.1 s.
wait_for ()
{
  local tries=$(( $1 * 10 ))
  shift
  while (( tries-- > 0 )); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  return 1
}
