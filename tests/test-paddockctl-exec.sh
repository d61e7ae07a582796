#!/bin/bash
# test-paddockctl-exec.sh — `paddockctl exec` against paddockd, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
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

is_id () { [[ "$1" =~ ^[0-9a-f]{12}$ ]]; }

ws="$tmp/workspace"
mkdir "$ws"

# now_ms: monotonic enough for "how long did that take".
now_ms () { echo $(( $(date +%s%N) / 1000000 )); }

# A process of ours still alive whose command line is exactly TEXT.
alive () { pgrep -fx -- "$1" >/dev/null; }

# ---- a session to run commands in -------------------------------------------------

run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile host -- sh -c 'exec sleep 300'
id=$(head -n 1 "$tmp/out")
if [[ $rc -eq 0 ]] && wait_for 5 state_is "$id" running; then
  ok "a host session runs"
else
  not_ok "a host session runs" "exit $rc" "$(cat "$tmp/out" "$tmp/err")" \
    "$(tail -n 20 "$tmp/daemon.log")"
  echo "1..$n"
  exit 1
fi

# ---- output and exit status -----------------------------------------------------------

run "$tmp/out" "$tmp/err" exec "$id" -- sh -c 'echo out; echo err >&2; exit 3' </dev/null
check "exec exits with the command's status (3)" test "$rc" -eq 3
check "…its stdout on our stdout" test "$(cat "$tmp/out")" = "out"
check "…its stderr on our stderr" test "$(cat "$tmp/err")" = "err"

run "$tmp/out" "$tmp/err" --json exec "$id" -- sh -c 'echo out; echo err >&2; exit 3' </dev/null
check "exec --json: exit_status, signal, timed_out, stdout, stderr; exit 3" \
  test "$rc:$(json "$tmp/out" '(d["exit_status"], d["signal"], d["timed_out"], d["stdout"], d["stderr"])' 2>&1)" \
       = "3:(3, None, False, 'out\n', 'err\n')"
check "…and elapsed_ms, a whole number" \
  test "$(json "$tmp/out" 'isinstance(d["elapsed_ms"], int) and d["elapsed_ms"] >= 0' 2>&1)" = True
check "…and nothing on stderr" test ! -s "$tmp/err"

run "$tmp/out" "$tmp/err" exec "$id" -- true </dev/null
check "exec -- true: exit 0, no output" test "$rc:$(cat "$tmp/out" "$tmp/err")" = "0:"

run "$tmp/out" "$tmp/err" exec "$id" -- sh -c 'kill -TERM $$' </dev/null
check "a command ended by SIGTERM: exit 143 (128+15)" test "$rc" -eq 143
check "…and a note on stderr, as shells print" grep -q 'ended by signal 15' "$tmp/err"
run "$tmp/out" "$tmp/err" --json exec "$id" -- sh -c 'kill -TERM $$' </dev/null
check "…with --json: exit_status 143, signal 15" \
  test "$rc:$(json "$tmp/out" '(d["exit_status"], d["signal"], d["timed_out"])' 2>&1)" \
       = "143:(143, 15, False)"

printf '\377\376ok' >"$tmp/binary"
run "$tmp/out" "$tmp/err" --json exec "$id" -- cat "$tmp/binary" </dev/null
check "exec --json replaces invalid UTF-8" \
  test "$rc:$(json "$tmp/out" 'd["stdout"].endswith("ok") and "\ufffd" in d["stdout"]' 2>&1)" = "0:True"

# ---- input ---------------------------------------------------------------------------

rc=0
printf 'abc' | "$CTL" exec "$id" -- tr a-z A-Z >"$tmp/out" 2>"$tmp/err" || rc=$?
check "piped stdin reaches the command: abc → ABC" test "$rc:$(cat "$tmp/out")" = "0:ABC"

rc=0
seq 200000 | "$CTL" exec "$id" -- wc -l >"$tmp/out" 2>"$tmp/err" || rc=$?
check "a long input (1.2 MB) arrives whole" test "$rc:$(tr -d ' ' <"$tmp/out")" = "0:200000"

# More than the daemon holds for a command that is not reading yet (1 MiB):
# paddockctl waits for it rather than lose or fail.
rc=0
seq 300000 | "$CTL" exec "$id" -- sh -c 'sleep 1; wc -l' >"$tmp/out" 2>"$tmp/err" || rc=$?
check "input for a command slow to read it waits, none is lost" \
  test "$rc:$(tr -d ' ' <"$tmp/out"):$(cat "$tmp/err")" = "0:300000:"

rc=0
"$CTL" exec "$id" -- cat <"$tmp/binary" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "stdin from a file, byte for byte" cmp -s "$tmp/binary" "$tmp/out"

rc=0
timeout 20 bash -c 'yes | "$1" exec "$2" -- head -n 2' _ "$CTL" "$id" >"$tmp/out" 2>"$tmp/err" || rc=$?
check "a command that stops reading its input early ends normally" \
  test "$rc:$(tr '\n' ' ' <"$tmp/out")" = "0:y y "
check "…without complaints" test ! -s "$tmp/err"

run "$tmp/out" "$tmp/err" exec "$id" -- cat </dev/null
check "stdin at its end: the command sees the end at once" test "$rc:$(cat "$tmp/out")" = "0:"

rc=0
"$CTL" exec "$id" -- cat <&- >"$tmp/out" 2>"$tmp/err" || rc=$?
check "stdin closed: the command's input ends at once, no complaints" \
  test "$rc:$(cat "$tmp/out" "$tmp/err")" = "0:"
rc=0
"$CTL" exec "$id" -- sh -c 'echo out; echo err >&2' </dev/null >&- 2>"$tmp/err" || rc=$?
check "stdout closed: the output goes nowhere, the rest still works" \
  test "$rc:$(cat "$tmp/err")" = "0:err"

# ---- long output -----------------------------------------------------------------------

run "$tmp/out" "$tmp/err" exec "$id" -- seq 100000 </dev/null
check "a long output (seq 100000) arrives complete" \
  test "$rc:$(lines "$tmp/out"):$(tail -n 1 "$tmp/out")" = "0:100000:100000"
check "…in order" cmp -s "$tmp/out" <(seq 100000)

run "$tmp/out" "$tmp/err" --json exec "$id" -- seq 100000 </dev/null
check "…and with --json" \
  test "$rc:$(json "$tmp/out" 'd["stdout"] == "".join("%d\n" % i for i in range(1, 100001))' 2>&1)" \
       = "0:True"

run "$tmp/out" "$tmp/err" exec "$id" -- sh -c 'echo one; sleep 1; echo two' </dev/null
check "output spread over time arrives whole" test "$rc:$(tr '\n' ' ' <"$tmp/out")" = "0:one two "

# Streaming: the first line shows while the command still runs.
"$CTL" exec "$id" -- sh -c 'echo early; sleep 3; echo late' </dev/null >"$tmp/stream.out" 2>&1 &
streamer=$!
background_pids+=("$streamer")
if wait_for 2 grep -q early "$tmp/stream.out" && ! grep -q late "$tmp/stream.out"; then
  ok "output arrives as the command runs, not only at its end"
else
  not_ok "output arrives as the command runs, not only at its end" "$(cat "$tmp/stream.out")"
fi
wait "$streamer" || true

# ---- options ------------------------------------------------------------------------------

start=$(now_ms)
run "$tmp/out" "$tmp/err" exec "$id" --timeout 300 -- sleep 30 </dev/null
elapsed=$(( $(now_ms) - start ))
check "--timeout 300 -- sleep 30: exit 124, as timeout(1)" test "$rc" -eq 124
check "…within 2 s (took ${elapsed} ms)" test "$elapsed" -lt 2000
check "…saying so on stderr" grep -q 'timeout' "$tmp/err"

run "$tmp/out" "$tmp/err" --json exec "$id" --timeout 300 -- sleep 30 </dev/null
check "--timeout with --json: timed_out true, exit_status 124, signal 9; exit 124" \
  test "$rc:$(json "$tmp/out" '(d["timed_out"], d["exit_status"], d["signal"])' 2>&1)" \
       = "124:(True, 124, 9)"

run "$tmp/out" "$tmp/err" exec "$id" --tty -- tty </dev/null
check "--tty: the command has a terminal (/dev/pts/N)" \
  test "$rc:$(head -c 9 "$tmp/out")" = "0:/dev/pts/"

run "$tmp/out" "$tmp/err" --json exec "$id" --tty -- sh -c 'tty; echo err >&2; exit 4' </dev/null
check "--tty --json: one output field with both streams, no stdout/stderr; exit 4" \
  test "$rc:$(json "$tmp/out" '(d["output"].startswith("/dev/pts/"), "err" in d["output"], "stdout" in d, "stderr" in d, d["exit_status"])' 2>&1)" \
       = "4:(True, True, False, False, 4)"

rc=0
printf 'hello\n' | timeout 20 "$CTL" exec "$id" --tty -- head -n 1 >"$tmp/out" 2>"$tmp/err" || rc=$?
check "--tty with piped input: the command reads it" \
  test "$rc:$(grep -c hello "$tmp/out")" = "0:2"

rc=0
printf 'no newline' | timeout 20 "$CTL" exec "$id" --tty -- cat >"$tmp/out" 2>"$tmp/err" || rc=$?
check "--tty: the end of piped input ends the command's input (Ctrl-D)" test "$rc" -eq 0

run "$tmp/out" "$tmp/err" exec "$id" --cwd /tmp -- pwd </dev/null
check "--cwd /tmp -- pwd: /tmp" test "$rc:$(cat "$tmp/out")" = "0:/tmp"

run "$tmp/out" "$tmp/err" exec "$id" -- pwd </dev/null
check "without --cwd: the session's workspace" test "$rc:$(cat "$tmp/out")" = "0:$(realpath "$ws")"

run "$tmp/out" "$tmp/err" exec "$id" --env FOO=bar --env EMPTY= -- sh -c 'echo "$FOO:${EMPTY-unset}"' </dev/null
check "--env FOO=bar: the command sees it" test "$rc:$(cat "$tmp/out")" = "0:bar:"

run "$tmp/out" "$tmp/err" exec "$id" -- sh -c 'echo "${PADDOCK_TEST_C:-unset}"' </dev/null
check "…and nothing of our own environment" test "$rc:$(cat "$tmp/out")" = "0:unset"

# ---- Ctrl-C and SIGTERM ---------------------------------------------------------------------

# interrupt SIGNAL SECONDS: run a unique sleep, send SIGNAL to paddockctl once
# the sleep runs; sets $rc, $elapsed and $gone.
interrupt ()
{
  local signal=$1 seconds=$2 ctl_pid start
  "$CTL" exec "$id" -- sleep "$seconds" </dev/null >"$tmp/int.out" 2>"$tmp/int.err" &
  ctl_pid=$!
  background_pids+=("$ctl_pid")
  wait_for 5 alive "sleep $seconds" || true
  start=$(now_ms)
  kill "-$signal" "$ctl_pid"
  rc=0
  wait "$ctl_pid" || rc=$?
  elapsed=$(( $(now_ms) - start ))
  gone=true
  wait_for 2 eval "! alive 'sleep $seconds'" || gone=false
}

interrupt INT "30.$$1"
check "Ctrl-C (SIGINT): exit 130" test "$rc" -eq 130
check "…quickly (took ${elapsed} ms)" test "$elapsed" -lt 2000
check "…and the command is gone" $gone

interrupt TERM "30.$$2"
check "SIGTERM: exit 143, the command gone" test "$rc:$gone" = "143:true"

# The session ending under the command: killed, and said so.
run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile host -- sh -c 'exec sleep 300'
doomed=$(head -n 1 "$tmp/out")
wait_for 5 state_is "$doomed" running || true
"$CTL" exec "$doomed" -- sleep 30.$$3 </dev/null >"$tmp/doomed.out" 2>"$tmp/doomed.err" &
ctl_pid=$!
background_pids+=("$ctl_pid")
wait_for 5 alive "sleep 30.$$3" || true
"$CTL" destroy "$doomed" >/dev/null 2>&1 || true
rc=0
wait "$ctl_pid" || rc=$?
# The daemon drops the command's object with the session, so paddockctl may
# or may not get to read the status first: either is reported plainly.
if [[ $rc -eq 137 ]] && grep -q 'ended by signal 9' "$tmp/doomed.err"; then
  ok "a session destroyed under exec: exit 137 (SIGKILL), with a note"
elif [[ $rc -eq 1 ]] && grep -q 'ended with its session' "$tmp/doomed.err"; then
  ok "a session destroyed under exec: exit 1, “ended with its session”"
else
  not_ok "a session destroyed under exec: exit 137 or 1, with a note" "exit $rc" \
    "$(cat "$tmp/doomed.err")"
fi
check "…and the command is gone" wait_for 2 eval "! alive 'sleep 30.$$3'"
run "$tmp/out" "$tmp/err" --json exec "$doomed" -- true </dev/null
check "exec in a destroyed session: exit 1, NotFound" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.NotFound"

# ---- errors -----------------------------------------------------------------------------------

run "$tmp/out" "$tmp/err" exec "$id" -- no-such-program-here </dev/null
check "a missing program: exit 1, one line on stderr" \
  test "$rc:$(lines "$tmp/err")" = "1:1" -a ! -s "$tmp/out"
run "$tmp/out" "$tmp/err" --json exec "$id" -- no-such-program-here </dev/null
check "…with --json: org.paddock.Error.NotFound" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.NotFound"

run "$tmp/out" "$tmp/err" --json exec 0123456789ab -- true </dev/null
check "exec in an unknown session: exit 1, NotFound" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.NotFound"

run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile host -- true
ended=$(head -n 1 "$tmp/out")
wait_for 5 eval "! state_is $ended running && ! state_is $ended starting" || true
run "$tmp/out" "$tmp/err" --json exec "$ended" -- true </dev/null
check "exec in a session that has ended: exit 1, org.paddock.Error.Busy" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "1:org.paddock.Error.Busy"
run "$tmp/out" "$tmp/err" exec "$ended" -- true </dev/null
check "…one line saying it is not running" \
  test "$rc:$(lines "$tmp/err"):$(grep -c 'not running' "$tmp/err")" = "1:1:1" -a ! -s "$tmp/out"

# A session's environment is not in any command line: /proc/PID/cmdline is
# every local user's to read (ps). Two sessions at once, so that at least
# one makes its own sandbox rather than taking the one made ahead (whose
# options come as a memfd): the value is looked for in every process of
# the machine, through a pattern file (grep's own argv must not hold it).
if have_sandbox && unshare -Urm true 2>/dev/null; then
  printf 'secret-value-%s-%s\n' "$$" "$RANDOM" >"$tmp/secret"
  secret_ids=()
  for _ in 1 2; do
    run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile safe --env "PADDOCK_TEST_KEY=$(cat "$tmp/secret")" \
      -- sh -c 'exec sleep 300'
    secret_ids+=("$(head -n 1 "$tmp/out")")
  done
  for sid in "${secret_ids[@]}"; do wait_for 5 state_is "$sid" running || true; done
  # shellcheck disable=SC2046  # one argument per process
  if ! holders=$(grep -lFf "$tmp/secret" /proc/[0-9]*/cmdline 2>/dev/null); then holders=""; fi
  check "an --env value is in no process's command line while its sessions run" test -z "$holders"
  [[ -z "$holders" ]] || for f in $holders; do echo "#   $f: $(tr '\0' ' ' <"$f" 2>/dev/null | head -c 300)"; done
  run "$tmp/out" "$tmp/err" exec "${secret_ids[1]}" -- sh -c 'echo "$PADDOCK_TEST_KEY"' </dev/null
  check "…and the session still has it in its environment" test "$(cat "$tmp/out")" = "$(cat "$tmp/secret")"
  for sid in "${secret_ids[@]}"; do "$CTL" destroy "$sid" >/dev/null 2>&1 || true; done
else
  skip_check "an --env value is in no process's command line" "no paddock-sandbox or no user namespaces here"
fi

# A safe session needs the sandbox, which not every machine allows.
run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile safe -- sh -c 'exec sleep 300'
safe=$(head -n 1 "$tmp/out")
if [[ $rc -eq 0 ]] && wait_for 5 state_is "$safe" running; then
  # Inside the sandbox, beside the agent: its PID namespace (the agent is
  # pid 2 there), with the session's confinement.
  run "$tmp/out" "$tmp/err" exec "$safe" -- sh -c 'echo inside; cat /proc/2/comm; exit 4' </dev/null
  check "exec in a safe session runs inside the sandbox, status passed through" \
    test "$rc:$(head -n 2 "$tmp/out" | tr '\n' ' ')" = "4:inside sleep "

  # The terminal is the sandbox's own (its devpts), so it has a name there.
  run "$tmp/out" "$tmp/err" exec "$safe" --tty -- tty </dev/null
  check "--tty in a safe session: tty names the terminal (/dev/pts/N), exit 0" \
    test "$rc:$(head -c 9 "$tmp/out")" = "0:/dev/pts/"
  run "$tmp/out" "$tmp/err" exec "$safe" --tty -- sh -c 'test "$(readlink -f /proc/self/fd/0)" = "$(tty)" && stty size' </dev/null
  check "…stdin is that terminal and stty size works (24 80)" \
    test "$rc:$(tr -d '\r' <"$tmp/out")" = "0:24 80"
  rc=0
  printf 'hello\n' | timeout 20 "$CTL" exec "$safe" --tty -- head -n 1 >"$tmp/out" 2>"$tmp/err" || rc=$?
  check "…and reads piped input through it" test "$rc:$(grep -c hello "$tmp/out")" = "0:2"
else
  for what in "exec in a safe session runs inside the sandbox" "--tty in a safe session: tty names the terminal" \
              "…stdin is that terminal and stty size works" "…and reads piped input through it"; do
    n=$((n + 1))
    echo "ok $n - $what # SKIP no safe session here"
  done
fi

usage_ok ()
{
  run "$tmp/out" "$tmp/err" "$@"
  [[ $rc -eq 2 && -s "$tmp/err" && ! -s "$tmp/out" ]]
}
check "exec without ID is a usage error (2)" usage_ok exec
check "exec without a command is a usage error (2)" usage_ok exec "$id"
check "exec with nothing after “--” is a usage error (2)" usage_ok exec "$id" --
check "exec with an empty command is a usage error (2)" usage_ok exec "$id" -- ''
check "exec with a command but no “--” is a usage error (2)" usage_ok exec "$id" true
check "exec of a non-hex id is a usage error (2)" usage_ok exec not-an-id-xx -- true
check "exec of an 11-digit id is a usage error (2)" usage_ok exec 0123456789a -- true
check "exec --timeout soon is a usage error (2)" usage_ok exec "$id" --timeout soon -- true
check "exec --timeout -1 is a usage error (2)" usage_ok exec "$id" --timeout -1 -- true
check "exec --timeout beyond 24 h is a usage error (2)" usage_ok exec "$id" --timeout 86400001 -- true
check "exec --cwd relative is a usage error (2)" usage_ok exec "$id" --cwd tmp -- true
check "exec --env without = is a usage error (2)" usage_ok exec "$id" --env FOO -- true
check "exec --env 1X=y is a usage error (2)" usage_ok exec "$id" --env 1X=y -- true
run "$tmp/out" "$tmp/err" --json exec "$id" --timeout soon -- true
check "a usage error with --json is one JSON error document, exit 2" \
  test "$rc:$(json "$tmp/out" 'd["error"]["name"]' 2>&1)" = "2:org.paddock.Error.InvalidArgument"

# ---- afterwards -----------------------------------------------------------------------------------

check "the session still runs after all of that" state_is "$id" running
check "the daemon is still running at the end" kill -0 "$daemon_pid"

echo "1..$n"
(( failures == 0 ))
