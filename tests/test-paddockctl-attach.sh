#!/bin/bash
# test-paddockctl-attach.sh — `paddockctl attach` on a real terminal, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Drives paddockctl as a person would: on the slave of a PTY made by
# Python's pty module, typing into the master, resizing it and pressing
# Ctrl-]. Also the scriptable form (stdin not a terminal) and the errors.
#
# Needs PADDOCK_BUILD_ROOT (the meson build dir); paddockctl-lib.sh sets up
# the private bus and daemon, and says how it skips.

# The private bus, the daemon and the TAP helpers.
# shellcheck source=paddockctl-lib.sh
source "$(dirname "$0")/paddockctl-lib.sh" "$@"

# ---- helpers for sessions ----------------------------------------------------------

# field ID EXPR: EXPR over `status --json ID` (d).
field ()
{
  "$CTL" --json status "$1" >"$tmp/field.json" 2>/dev/null || return 1
  json "$tmp/field.json" "$2"
}

state_is () { [[ "$(field "$1" 'd["state"]')" == "$2" ]]; }

logs_have () { "$CTL" logs "$1" 2>/dev/null | grep -qF -- "$2"; }

ws="$tmp/workspace"
mkdir "$ws"

# create OUT-VAR CMD…: a host-profile session running CMD; its id in OUT-VAR.
create ()
{
  local var=$1 created
  shift
  created=$("$CTL" create --workspace "$ws" --profile host -- "$@" 2>"$tmp/create.err") || {
    not_ok "create a session for: $*" "$(cat "$tmp/create.err")"
    echo "1..$n"
    exit 1
  }
  printf -v "$var" '%s' "$created"
}

# ---- the PTY driver ------------------------------------------------------------------
#
# drive.py CTL ID SCENARIO: runs `paddockctl attach ID` on the slave of a
# new PTY (its controlling terminal, as in a terminal emulator) and prints
# "PASS what" or "FAIL what<TAB>detail" lines, turned into TAP below.

cat >"$tmp/drive.py" <<'PY'
import fcntl, os, pty, select, signal, struct, subprocess, sys, termios, time

ctl, sid, scenario = sys.argv[1:4]
extra = ["--no-input"] if scenario == "readonly" else []

def report(ok, what, detail=""):
    print(("PASS " if ok else "FAIL ") + what + ("" if ok else "\t" + detail), flush=True)

def set_size(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

master, slave = pty.openpty()
set_size(master, 30, 100)
# Cooked mode with echo, as a shell leaves a terminal.
before = termios.tcgetattr(slave)

def make_controlling_terminal():
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)

if scenario == "create":
    # sid is the workspace: `create --attach` makes the session it shows.
    argv = [ctl, "create", "--attach", "--workspace", sid, "--profile", "host", "--",
            "sh", "-c", 'echo ready; stty size; read l; echo "got: $l"; exit 6']
elif scenario == "create-size":
    # As create, with a size of its own: read after the relay started
    # (and so after a resize to ours, were one sent).
    argv = [ctl, "create", "--attach", "--size", "90x20", "--workspace", sid, "--profile", "host", "--",
            "sh", "-c", 'echo ready; read l; echo "size: $(stty size)"; exit 0']
elif scenario == "create-piped-out":
    # Typed on the terminal, the output into a pipe (`… | tee log`).
    argv = [ctl, "create", "--attach", "--workspace", sid, "--profile", "host", "--",
            "sh", "-c", 'echo "size: $(stty size)"; exit 0']
else:
    argv = [ctl, "attach"] + extra + [sid]

if scenario == "create-piped-out":
    proc = subprocess.Popen(argv, stdin=slave, stdout=subprocess.PIPE, stderr=slave,
                            preexec_fn=make_controlling_terminal, close_fds=True)
    try:
        out, _ = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    report(proc.returncode == 0, "create --attach with stdout a pipe: exit 0", "exit %r" % proc.returncode)
    report(out.startswith(b"size: 30 100"), "…the session starts at the size of the terminal typed on",
           repr(out[:200]))
    sys.exit(0)

proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave,
                        preexec_fn=make_controlling_terminal, close_fds=True)
buf = bytearray()

def pump(timeout):
    ready, _, _ = select.select([master], [], [], timeout)
    if ready:
        try:
            buf.extend(os.read(master, 65536))
        except OSError:
            time.sleep(timeout)

def wait_for(text, start=0, timeout=5.0):
    deadline = time.monotonic() + timeout
    while text not in buf[start:]:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        pump(min(left, 0.1))
    return True

def tail():
    return repr(bytes(buf[-400:]))

def exit_within(seconds):
    try:
        return proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return None

def modes_restored(what):
    after = termios.tcgetattr(slave)
    report(after == before, what, "before %r\nafter  %r" % (before, after))

def finish():
    if proc.poll() is None:
        proc.kill()
        proc.wait()

report(wait_for(b"press Ctrl-] to detach"), "a one-line hint names the detach key", tail())
report(wait_for(b"ready"), "the replay shows what the session wrote before" if not scenario.startswith("create")
       else "create --attach shows the session's first words", tail())
lflag = termios.tcgetattr(slave)[3]
report(not (lflag & (termios.ICANON | termios.ECHO | termios.ISIG)),
       "the terminal is in raw mode while attached", "lflag %#o" % lflag)

if scenario == "interactive":
    report(wait_for(b"winch: 30 100"), "attaching gives the session our terminal's size", tail())

    mark = len(buf)
    os.write(master, b"hello\r")
    report(wait_for(b"got: hello", mark), "typing “hello⏎” reaches the program", tail())

    mark = len(buf)
    os.write(master, b"\x03")
    report(wait_for(b"interrupted", mark) and proc.poll() is None,
           "Ctrl-C goes to the session (its trap runs), paddockctl stays attached",
           "paddockctl: %r; %s" % (proc.poll(), tail()))

    mark = len(buf)
    set_size(master, 40, 120)
    os.kill(proc.pid, signal.SIGWINCH)
    report(wait_for(b"winch: 40 120", mark), "a resize (SIGWINCH) reaches the program", tail())

    # What precedes Ctrl-] in the same read is typed; what follows is not.
    os.write(master, b"kept\x1dnot-sent\r")
    rc = exit_within(2)
    report(rc == 0, "Ctrl-] detaches: exit 0 within 2 s", "exit %r; %s" % (rc, tail()))
    modes_restored("the terminal's modes are restored after detaching")
    wait_for(b"keeps running", timeout=1)
    report(b"detached from" in buf, "a note says paddockctl detached", tail())
elif scenario == "create":
    report(wait_for(b"30 100"), "create --attach starts the session at our terminal's size", tail())
    mark = len(buf)
    os.write(master, b"hello\r")
    report(wait_for(b"got: hello", mark), "typing “hello⏎” reaches the program it made", tail())
    rc = exit_within(5)
    report(rc == 0, "create --attach exits 0 when the session ends", "exit %r; %s" % (rc, tail()))
    wait_for(b"exit status 6", timeout=1)
    report(b"ended (exited, exit status 6)" in buf, "…and says how it ended", tail())
    modes_restored("the terminal's modes are restored after create --attach")
elif scenario == "create-size":
    mark = len(buf)
    os.write(master, b"now\r")
    report(wait_for(b"size: 20 90", mark), "create --attach --size 90x20 keeps the session at 90x20, "
           "not our 100x30", tail())
    rc = exit_within(5)
    report(rc == 0, "…and exits 0 when the session ends", "exit %r; %s" % (rc, tail()))
elif scenario == "sigterm":
    time.sleep(0.3)
    os.kill(proc.pid, signal.SIGTERM)
    rc = exit_within(2)
    report(rc == 128 + signal.SIGTERM, "SIGTERM ends attach with 128+15", "exit %r" % rc)
    modes_restored("the terminal's modes are restored after SIGTERM")
elif scenario == "sighup":
    time.sleep(0.3)
    os.kill(proc.pid, signal.SIGHUP)
    rc = exit_within(2)
    report(rc == 128 + signal.SIGHUP, "SIGHUP ends attach with 128+1", "exit %r" % rc)
    modes_restored("the terminal's modes are restored after SIGHUP")
elif scenario == "readonly":
    report(b"(read-only)" in buf, "with --no-input the hint says read-only", tail())
    mark = len(buf)
    os.write(master, b"ro-typed\r")
    time.sleep(0.5)
    report(b"got: ro-typed" not in buf[mark:] and proc.poll() is None,
           "with --no-input keys are not typed into the session", tail())
    os.write(master, b"\x03")
    rc = exit_within(2)
    report(rc == 0, "with --no-input Ctrl-C detaches: exit 0", "exit %r; %s" % (rc, tail()))
    modes_restored("the terminal's modes are restored after a read-only attach")

finish()
PY

# drive ID SCENARIO: the driver's verdicts as TAP lines.
drive ()
{
  local verdict what detail
  timeout 60 "$PYTHON" "$tmp/drive.py" "$CTL" "$1" "$2" >"$tmp/drive.out" 2>&1 || true
  if ! grep -q '^PASS \|^FAIL ' "$tmp/drive.out"; then
    not_ok "the PTY driver ($2) reports" "$(cat "$tmp/drive.out")"
    return
  fi
  while IFS= read -r verdict; do
    case "$verdict" in
      PASS\ *) ok "${verdict#PASS }" ;;
      FAIL\ *)
        what=${verdict#FAIL }
        detail=${what#*$'\t'}
        not_ok "${what%%$'\t'*}" "$detail"
        ;;
      *) echo "# $verdict" ;;
    esac
  done <"$tmp/drive.out"
}

# ---- interactive, on a PTY -------------------------------------------------------------

# A trapped signal interrupts `read` (its status then is > 128), so the
# loop carries on after one rather than ending at the first SIGWINCH; the
# INT trap shows that Ctrl-C reached the session rather than paddockctl.
create id sh -c 'echo ready; trap "echo winch: \$(stty size)" WINCH; trap "echo interrupted" INT; while :; do read l && echo "got: $l"; done'
check "the session reaches “running”" wait_for 5 state_is "$id" running
check "…and has written “ready”" wait_for 5 logs_have "$id" ready

drive "$id" interactive

check "the session is still running after the detach" state_is "$id" running
"$CTL" send "$id" $'\n' >/dev/null 2>&1 || true
check "…what preceded Ctrl-] in the same read was typed into it" \
  wait_for 5 logs_have "$id" "got: kept"
check "…and what followed Ctrl-] was not" eval "! logs_have $id not-sent"

drive "$id" sigterm
drive "$id" sighup
drive "$id" readonly
check "the session is still running after the signals" state_is "$id" running

# ---- scriptable: stdin is not a terminal ------------------------------------------------

"$CTL" attach "$id" >"$tmp/pipe.out" 2>"$tmp/pipe.err" < <(printf 'abc\n') &
attacher=$!
background_pids+=("$attacher")
check "printf 'abc\\n' | attach: the program answers “got: abc”" \
  wait_for 5 grep -qF "got: abc" "$tmp/pipe.out"
check "…and attach keeps running after stdin's end" kill -0 "$attacher"
kill -INT "$attacher" 2>/dev/null || true
rc=0
wait "$attacher" || rc=$?
check "…until Ctrl-C (SIGINT): exit 0" test "$rc" -eq 0
check "…without any hint or note (nothing on stderr)" test ! -s "$tmp/pipe.err"
check "…and without raw-mode mangling: the replay is there too" grep -qF ready "$tmp/pipe.out"

"$CTL" attach --no-input "$id" >"$tmp/ro.out" 2>"$tmp/ro.err" < <(printf 'zzz\n') &
attacher=$!
background_pids+=("$attacher")
wait_for 5 grep -qF "got: abc" "$tmp/ro.out" || true
sleep 0.5
kill -INT "$attacher" 2>/dev/null || true
rc=0
wait "$attacher" || rc=$?
check "attach --no-input shows the output, exit 0 on SIGINT" \
  test "$rc:$(grep -cF 'got: abc' "$tmp/ro.out")" = "0:1"
check "…and sends nothing from stdin" eval "! logs_have $id zzz"

# A session that ends while attached: the stream ends, attach says how.
create id2 sh -c 'read x; echo "x=$x"; exit 5'
wait_for 5 state_is "$id2" running || true
rc=0
printf 'q\n' | timeout 10 "$CTL" attach "$id2" >"$tmp/end.out" 2>"$tmp/end.err" || rc=$?
check "attach exits 0 when the session ends" test "$rc" -eq 0
check "…having printed all of its output" grep -qF "x=q" "$tmp/end.out"
check "…and says so on stderr: “session ID ended (exited, exit status 5)”" \
  grep -qF "session $id2 ended (exited, exit status 5)" "$tmp/end.err"

# An ended session: the replay, then the end at once.
rc=0
timeout 10 "$CTL" attach "$id2" </dev/null >"$tmp/ended.out" 2>"$tmp/ended.err" || rc=$?
check "attach to an ended session replays its output and exits 0" \
  test "$rc:$(grep -c 'x=q' "$tmp/ended.out")" = "0:1"
check "…with the same note" grep -qF "session $id2 ended (exited, exit status 5)" "$tmp/ended.err"

rc=0
timeout 10 "$CTL" attach --offset 2 "$id2" </dev/null >"$tmp/offset.out" 2>/dev/null || rc=$?
check "attach --offset 2 replays from the third byte on" \
  eval "test $rc -eq 0 && tail -c +3 '$tmp/ended.out' | cmp -s - '$tmp/offset.out'"

# A program that does not read its terminal for a while: what the viewer
# types waits (in the daemon, then in the viewer's socket, then in
# paddockctl) rather than being dropped — 3 MB, three times the daemon's
# own input queue, all arrive once the program reads.
create id5 sh -c 'stty raw -echo; echo ready; sleep 2; head -c 3000000 | wc -c'
check "a session that will read 3 MB only later says “ready”" wait_for 10 logs_have "$id5" ready
rc=0
head -c 3000000 /dev/zero | tr '\0' x | timeout 60 "$CTL" attach "$id5" >"$tmp/typed.out" 2>/dev/null || rc=$?
check "…and every typed byte reaches it: it counts 3000000" \
  eval "test $rc -eq 0 && tr -d '\r' <'$tmp/typed.out' | grep -qx ' *3000000'"

# A slow reader of our stdout: nothing is lost or torn, whatever the
# writes' sizes (1.3 MB, well inside the scrollback).
create id4 seq 1 200000
wait_for 10 eval "! state_is $id4 running && ! state_is $id4 starting" || true
rc=0
timeout 30 "$CTL" attach "$id4" </dev/null 2>/dev/null | (sleep 1; cat) >"$tmp/slow.out" || rc=$?
check "a slow pipe on stdout gets the whole output, in order" \
  eval "test $rc -eq 0 && tr -d '\r' <'$tmp/slow.out' | cmp -s - <(seq 1 200000)"

# Destroyed while attached: the stream ends, exit 0, a note.
create id3 sleep 60
wait_for 5 state_is "$id3" running || true
"$CTL" attach "$id3" </dev/null >"$tmp/gone.out" 2>"$tmp/gone.err" &
attacher=$!
background_pids+=("$attacher")
sleep 0.5
"$CTL" destroy "$id3" >/dev/null 2>&1 || true
rc=0
wait_for 5 eval "! kill -0 $attacher" || kill -INT "$attacher" 2>/dev/null || true
wait "$attacher" || rc=$?
check "destroying the session ends attach with exit 0" test "$rc" -eq 0
check "…and a note that it was destroyed or ended" grep -Eq "session $id3 (was destroyed|ended)" "$tmp/gone.err"

# ---- create --attach: the terminal of a new session, from its first byte -----------------

drive "$ws" create
drive "$ws" create-size
drive "$ws" create-piped-out

rc=0
printf 'typed\n' | timeout 20 "$CTL" create --attach --workspace "$ws" --profile host -- \
  sh -c 'echo first-words; read l; echo "got: $l"; exit 4' >"$tmp/ca.out" 2>"$tmp/ca.err" || rc=$?
cid=$(sed -n 's/^paddockctl: session \([0-9a-f]\{12\}\)$/\1/p' "$tmp/ca.err")
check "printf 'typed\\n' | create --attach: exit 0 when the session ends" test "$rc" -eq 0
check "…its whole terminal, from the first byte on: the same bytes as “logs”" \
  eval "grep -qF first-words '$tmp/ca.out' && \"\$CTL\" logs $cid | cmp -s - '$tmp/ca.out'"
check "…what was piped in reached the program" grep -qF "got: typed" "$tmp/ca.out"
check "…the new session's id is on stderr, not in the output" test -n "$cid"
check "…with how it ended: “session ID ended (exited, exit status 4)”" \
  grep -qF "session $cid ended (exited, exit status 4)" "$tmp/ca.err"
run "$tmp/out" "$tmp/err" --json create --attach --workspace "$ws" --profile host -- \
  sh -c 'echo json-words; exit 5' </dev/null
jid=$(sed -n 's/^paddockctl: session \([0-9a-f]\{12\}\)$/\1/p' "$tmp/err")
check "--json create --attach: exit 0, the terminal on stdout" \
  eval "test '$rc' -eq 0 && grep -qF json-words '$tmp/out'"
check "…and the new session's id still on stderr, the only place that names it" \
  eval "test -n '$jid' && \"\$CTL\" logs '$jid' | grep -qF json-words"
run "$tmp/out" "$tmp/err" create --attach --workspace "$tmp/no-such-folder" --profile host -- true </dev/null
check "create --attach in a missing folder: exit 1, one line on stderr, nothing made" \
  test "$rc:$(lines "$tmp/err"):$("$CTL" list | grep -c no-such-folder)" = "1:1:0"

# ---- errors ------------------------------------------------------------------------------

run "$tmp/out" "$tmp/err" --json attach "$id3" </dev/null
check "attach to a destroyed session: exit 1, org.paddock.Error.NotFound" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.NotFound"
run "$tmp/out" "$tmp/err" attach 0123456789ab </dev/null
check "attach to an unknown id: exit 1, one line on stderr" \
  test "$rc:$(lines "$tmp/err")" = "1:1" -a ! -s "$tmp/out"
run "$tmp/out" "$tmp/err" --json attach 0123456789ab </dev/null
check "…with --json: NotFound" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.NotFound"

usage_ok ()
{
  run "$tmp/out" "$tmp/err" "$@" </dev/null
  [[ $rc -eq 2 && -s "$tmp/err" && ! -s "$tmp/out" ]]
}
check "attach without ID is a usage error (2)" usage_ok attach
check "attach of a non-hex id is a usage error (2)" usage_ok attach not-an-id-xx
check "attach with two ids is a usage error (2)" usage_ok attach "$id" "$id"
check "attach --offset x is a usage error (2)" usage_ok attach "$id" --offset x
check "attach --offset -1 is a usage error (2)" usage_ok attach "$id" --offset -1
check "attach --bogus is a usage error (2)" usage_ok attach "$id" --bogus
run "$tmp/out" "$tmp/err" attach --help </dev/null
check "attach --help documents Ctrl-] and JSON mode" \
  eval "grep -qF 'Ctrl-]' '$tmp/out' && grep -qF 'prints only errors' '$tmp/out'"

check "the daemon is still running at the end" kill -0 "$daemon_pid"

echo "1..$n"
(( failures == 0 ))
