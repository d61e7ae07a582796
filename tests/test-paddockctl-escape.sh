#!/bin/bash
# test-paddockctl-escape.sh — nothing an agent stages or prints drives the reviewer's terminal, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# A safe session stages a file whose lines hide one another (cursor up,
# erase line), clear the screen, write the clipboard (OSC 52) and reorder
# text (U+202E), under a name that does the same, and prints the same to
# its terminal. On a terminal (a pseudo-terminal from script(1)) review,
# review --diff, logs, list and error messages show all of it as escapes
# and no ESC of the agent's reaches the terminal; --raw, and a pipe, give
# the exact bytes.

needs_safe_sessions=true
# shellcheck source=paddockctl-lib.sh
source "$(dirname "$0")/paddockctl-lib.sh" "$@"

SANDBOX="$PADDOCK_BUILD_ROOT/daemon/sandbox/paddock-sandbox"
[[ -x "$SANDBOX" ]] || skip "paddock-sandbox is not built"
command -v script >/dev/null || skip "script (util-linux) is not installed: no pseudo-terminal to test with"
if ! unshare -Urm true 2>/dev/null; then
  skip "user namespaces are unavailable here, so no safe session can run"
fi

logs_have () { "$CTL" logs "$1" 2>/dev/null | grep -qF -- "$2"; }

# on_tty OUT ARGS…: run paddockctl on a pseudo-terminal (stdout and stderr
# both), what the terminal received in OUT; sets $rc. script(1) runs the
# command with $SHELL, and the quoting of printf %q is bash's ($'…'), so
# the shell is this bash whatever the caller's $SHELL is (CI's is sh).
on_tty ()
{
  local out=$1 command=""
  shift
  printf -v command '%q ' "$CTL" "$@"
  rc=0
  SHELL=$BASH script -qefc "$command" /dev/null </dev/null >"$out" 2>&1 || rc=$?
}

# bytes_check FILE EXPR: a Python expression over the bytes of FILE (b),
# with our own reverse video taken out (v); prints why it failed.
bytes_check ()
{
  "$PYTHON" - "$1" "$2" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
v = b.replace(b"\x1b[7m", b"").replace(b"\x1b[27m", b"")
if not eval(sys.argv[2]):
    print("#   not true of %r: %s" % (b[:2000], sys.argv[2]))
    sys.exit(1)
PY
}

ws="$tmp/workspace"
mkdir -p "$ws"
printf 'untouched\n' >"$ws/README"
ws=$(realpath "$ws")

# \033[1A\033[2K: up one line and erase it, so "hidden line" overwrites
# the line before; \033[2J clears the screen; OSC 52 sets the clipboard;
# U+202E (\342\200\256) reverses what follows; \r rewrites the line.
agent='
printf "+shown line\n\033[1A\033[2Khidden line\n\033[2J\033]52;c;cGFkZG9jaw==\007rtl:\342\200\256evil\342\200\254 cr:safe\rEVIL\n" > trick.txt
printf "x\n" > "$(printf "name\342\200\256\033[2Jtxt.sh")"
printf "LOGS-\033]52;c;cGFkZG9jaw==\007\033[2J-\342\200\256-DONE\n"
echo ESCAPE-READY
exec sleep 600'

run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile safe --name "$(printf 'tab\033[2Jname')" -- sh -c "$agent"
id=$(head -n 1 "$tmp/out")
if [[ $rc -ne 0 ]]; then
  not_ok "a safe session starts" "$(cat "$tmp/out" "$tmp/err")" "$(tail -n 20 "$tmp/daemon.log")"
  echo "1..$n"
  exit 1
fi
ok "a safe session starts"
check "the session staged its files and printed its output" wait_for 20 logs_have "$id" ESCAPE-READY

# ---- review --diff ------------------------------------------------------------

on_tty "$tmp/tty" review --diff "$id" trick.txt
check "review --diff on a terminal: exit 0" test "$rc" -eq 0
check "…no ESC of the agent's reaches the terminal, only our reverse video" \
  bytes_check "$tmp/tty" 'b"\x1b" not in v and b"\x1b[7m^[\x1b[27m" in b'
check "…cursor-up, erase-line, clear-screen and OSC 52 are shown as ^[ escapes" \
  bytes_check "$tmp/tty" 'b"^[[1A^[[2Khidden line" in v and b"^[[2J^[]52;c;cGFkZG9jaw==^Grtl:" in v'
check "…U+202E and U+202C are shown as <U+…>, not reordering the line" \
  bytes_check "$tmp/tty" 'b"\xe2\x80\xae" not in b and b"rtl:<U+202E>evil<U+202C>" in v'
check "…a \\r that rewrites the line is shown as ^M" \
  bytes_check "$tmp/tty" 'b"cr:safe^MEVIL" in v'
check "…the rest of the diff is as it is" \
  bytes_check "$tmp/tty" 'b"+shown line" in v and b"+++ b/trick.txt" in v'

on_tty "$tmp/tty-raw" review --diff --raw "$id" trick.txt
check "review --diff --raw on a terminal: the exact bytes" \
  bytes_check "$tmp/tty-raw" 'b"\x1b[1A\x1b[2Khidden line" in b and b"\x1b]52;c;cGFkZG9jaw==\x07rtl:\xe2\x80\xaeevil" in b and b"^[" not in b'

run "$tmp/pipe" "$tmp/err" review --diff "$id" trick.txt
check "review --diff to a pipe: the exact bytes, as before" \
  bytes_check "$tmp/pipe" 'b"+\x1b[1A\x1b[2Khidden line\n+\x1b[2J\x1b]52;c;cGFkZG9jaw==\x07rtl:\xe2\x80\xaeevil\xe2\x80\xac cr:safe\rEVIL\n" in b and b"^[" not in b'
run "$tmp/pipe-raw" "$tmp/err" review --diff --raw "$id" trick.txt
check "review --diff --raw to a pipe: the same bytes" cmp -s "$tmp/pipe" "$tmp/pipe-raw"

on_tty "$tmp/tty-all" review --diff "$id"
check "review --diff of every change on a terminal: no ESC of the agent's either" \
  bytes_check "$tmp/tty-all" 'b"\x1b" not in v and b"\xe2\x80\xae" not in b and b"^[[2J" in v'

# --json is JSON-escaped: a terminal that shows the document is not driven
# by it, and a script reads the exact text.
on_tty "$tmp/tty-json" --json review --diff "$id" trick.txt
check "--json review --diff on a terminal: no raw ESC, U+202E or C1 in the document" \
  bytes_check "$tmp/tty-json" 'b"\x1b" not in b and b"\xe2\x80\xae" not in b and b"\\u202e" in b and b"\\u001b[2J" in b'
run "$tmp/json" "$tmp/err" --json review --diff "$id" trick.txt
check "--json review --diff: the diff reads back as the exact text" \
  test "$(json "$tmp/json" '"\x1b[1A\x1b[2Khidden line\n+\x1b[2J\x1b]52;c;cGFkZG9jaw==\x07rtl:\u202eevil" in d["diff"]')" = True

# ---- review rows: the file name ------------------------------------------------

on_tty "$tmp/tty-rows" review "$id"
check "review on a terminal: the file name's ESC and U+202E are shown as escapes" \
  bytes_check "$tmp/tty-rows" 'b"\x1b" not in v and b"\xe2\x80\xae" not in b and b"A  name<U+202E>^[[2Jtxt.sh" in v'
run "$tmp/rows" "$tmp/err" review "$id"
check "review to a pipe: the name escaped too (as before), without reverse video" \
  bytes_check "$tmp/rows" 'b"\x1b" not in b and b"A  name<U+202E>^[[2Jtxt.sh" in b'

# ---- logs ----------------------------------------------------------------------

on_tty "$tmp/tty-logs" logs "$id"
check "logs on a terminal: exit 0" test "$rc" -eq 0
check "…OSC 52, clear-screen and U+202E of the output are shown as escapes" \
  bytes_check "$tmp/tty-logs" 'b"\x1b" not in v and b"\xe2\x80\xae" not in b and b"LOGS-^[]52;c;cGFkZG9jaw==^G^[[2J-<U+202E>-DONE" in v'
# (The pseudo-terminal adds a \r before each \n, as terminals do.)
check "…its \\r\\n line ends stay line ends" \
  bytes_check "$tmp/tty-logs" 'b"^M" not in v and b"ESCAPE-READY\r\r\n" in v'

on_tty "$tmp/tty-logs-raw" logs --raw "$id"
check "logs --raw on a terminal: the exact bytes" \
  bytes_check "$tmp/tty-logs-raw" 'b"LOGS-\x1b]52;c;cGFkZG9jaw==\x07\x1b[2J-\xe2\x80\xae-DONE" in b'

run "$tmp/logs" "$tmp/err" logs "$id"
run "$tmp/logs-raw" "$tmp/err" logs --raw "$id"
check "logs to a pipe: the exact bytes, as before" \
  bytes_check "$tmp/logs" 'b"LOGS-\x1b]52;c;cGFkZG9jaw==\x07\x1b[2J-\xe2\x80\xae-DONE\r\n" in b'
check "logs --raw to a pipe: the same bytes" cmp -s "$tmp/logs" "$tmp/logs-raw"

# A stopped session's output has ended: --follow prints it and returns.
run "$tmp/out" "$tmp/err" stop "$id"
on_tty "$tmp/tty-follow" logs --follow "$id"
check "logs --follow on a terminal: escaped as well" \
  bytes_check "$tmp/tty-follow" 'b"\x1b" not in v and b"LOGS-^[]52;c;cGFkZG9jaw==^G^[[2J-<U+202E>-DONE" in v'

# ---- names and messages ---------------------------------------------------------

on_tty "$tmp/tty-list" list
check "list on a terminal: an ESC in a session's name is shown as ^[" \
  bytes_check "$tmp/tty-list" 'b"\x1b" not in v and b"tab^[[2Jname" in v'
check "…and the columns still line up (the reverse video takes no room)" \
  bytes_check "$tmp/tty-list" '[l.index(b"PROFILE") for l in v.split(b"\r\n") if b"PROFILE" in l] == [l.index(b"safe") for l in v.split(b"\r\n") if b"tab^[[2Jname" in l]'
on_tty "$tmp/tty-status" status "$id"
check "status on a terminal: the same" \
  bytes_check "$tmp/tty-status" 'b"\x1b" not in v and b"name:        tab^[[2Jname" in v'
run "$tmp/list" "$tmp/err" list
check "list to a pipe: the name's bytes as before" bytes_check "$tmp/list" 'b"tab\x1b[2Jname" in b'

on_tty "$tmp/tty-error" review "$(printf 'bad\033[2J\342\200\256id')"
check "an error message on a terminal that echoes an argument: exit 2, escaped" \
  bytes_check "$tmp/tty-error" 'b"\x1b" not in v and b"\xe2\x80\xae" not in b and b"bad^[[2J<U+202E>id" in v'
check "…and the exit status is the command's" test "$rc" -eq 2

run "$tmp/out" "$tmp/err" destroy "$id"
check "the session is destroyed" test "$rc" -eq 0

echo "1..$n"
[[ $failures -eq 0 ]]
