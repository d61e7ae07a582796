#!/bin/bash
# test-escape.sh — attempts to leave a safe session, each one asserted blocked, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# One safe session per concern (probes, fork bomb and escape from the
# process group, kill -1), each attempt run inside with `paddockctl exec`
# and judged from OUTSIDE wherever the host can see the result: canaries
# planted in the real HOME, beside the workspace and in the host's /tmp
# must stay unread and unchanged, the daemon and a host process of the same
# user must stay alive, nothing may outlive Destroy. System calls the shell
# cannot make go through tests/escape/escape-probe, copied into the
# workspace (the build folder is under the host's /tmp, which the session
# does not see).
#
# A write into the workspace is allowed but staged: the real folder must not
# change; that is not an escape. A gap the sandbox does not close yet (TCP
# bind of a port without a lease) is reported as escaped with a TAP TODO
# that says why, never as a pass; what this machine cannot try is a SKIP.
#
# Prints the matrix as TAP comments: "# probe | uid | result | detail".

# The real HOME of the user under test is a throw-away folder outside /tmp
# (the session's /tmp is private anyway, so a HOME below it would hide
# itself), set before the daemon starts so that it is the daemon's too.
fake_home=$(mktemp -d /var/tmp/test-escape-home.XXXXXX 2>/dev/null \
            || mktemp -d "${TMPDIR:-/tmp}/test-escape-home.XXXXXX")
trap 'rm -rf "$fake_home"' EXIT
export HOME="$fake_home"

# shellcheck source=paddockctl-lib.sh
source "$(dirname "$0")/paddockctl-lib.sh" "$@"
trap 'cleanup; rm -rf "$fake_home"' EXIT

suite_start=$(date +%s)
SANDBOX="$PADDOCK_BUILD_ROOT/daemon/sandbox/paddock-sandbox"
PROBE="$PADDOCK_BUILD_ROOT/tests/escape/escape-probe"
[[ -x "$SANDBOX" ]] || skip "paddock-sandbox is not built"
[[ -x "$PROBE" ]] || skip "$PROBE is not built"
if ! unshare -Urm true 2>/dev/null; then
  skip "user namespaces are unavailable here, so no safe session can run"
fi

if [[ "$(id -u)" == 0 ]]; then who=root; else who=unprivileged; fi

# ---- results --------------------------------------------------------------------

matrix=()

one_line () { tr '\n\t' '  ' | sed 's/  */ /g; s/ $//' | cut -c1-160; }

# record NAME RESULT DETAIL [TODO-REASON]: one TAP line and one matrix row.
# RESULT is blocked, escaped or skip. A TODO reason marks a known gap.
record ()
{
  local name=$1 result=$2 detail todo=${4:-}
  detail=$(printf '%s' "$3" | one_line)
  matrix+=("$name | $who | $result${todo:+ (known gap)} | $detail")
  case $result in
    blocked) ok "$name: blocked — $detail" ;;
    escaped)
      if [[ -n "$todo" ]]; then
        n=$((n + 1))
        echo "not ok $n - $name: escaped — $detail # TODO $todo"
      else
        not_ok "$name: ESCAPED — $detail"
      fi ;;
    *)
      n=$((n + 1))
      echo "ok $n - $name # SKIP $detail" ;;
  esac
}

# pexec [--tty] CMD…: run CMD in session $id; sets P_STATUS, P_SIGNAL and
# writes its stdout and stderr (or the terminal's output) to $tmp/p.out.
pexec ()
{
  local opts=()
  if [[ "$1" == --tty ]]; then opts+=(--tty); shift; fi
  # timeout(1) too: an Exec whose session dies under it has hung for good.
  P_HUNG=false
  local status=0
  timeout -k 5 "${P_LIMIT:-150}" "$CTL" --json exec "${opts[@]}" --timeout 120000 "$id" -- "$@" \
    >"$tmp/p.json" 2>"$tmp/p.err" || status=$?
  # 124: timeout(1) ran out; 137 with no answer at all: its SIGKILL. (An
  # answered 137 is the command's own status: killed by signal 9.)
  if [[ $status == 124 ]] || [[ $status == 137 && ! -s "$tmp/p.json" ]]; then P_HUNG=true; fi
  read -r P_STATUS P_SIGNAL < <("$PYTHON" -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    d = {"error": {"name": "unparsable", "message": repr(e)}}
out = (d.get("stdout") or "") + (d.get("stderr") or "") + (d.get("output") or "")
if "error" in d:
    out += "paddockctl: %s: %s" % (d["error"].get("name"), d["error"].get("message"))
open(sys.argv[2], "w").write(out)
print(d.get("exit_status"), d.get("signal"))' "$tmp/p.json" "$tmp/p.out" 2>>"$tmp/p.err") \
    || { P_STATUS=none; P_SIGNAL=none; }
}

# probe NAME ARG…: escape-probe ARG… inside; its own verdict, or the signal
# that the seccomp filter killed it with (SIGSYS is a block).
probe ()
{
  local name=$1
  shift
  pexec "$ws_probe" "$@"
  local out
  out=$(one_line <"$tmp/p.out")
  if [[ "$P_SIGNAL" == 31 ]]; then
    record "$name" blocked "killed by SIGSYS (seccomp KILL_PROCESS) $out"
  elif [[ "$P_STATUS" == 0 && "$out" == blocked* ]]; then
    record "$name" blocked "${out#blocked }"
  else
    record "$name" escaped "exit $P_STATUS signal $P_SIGNAL: $out"
  fi
}

# unchanged FILE SHA: the host file still has the content it had.
sha () { sha256sum "$1" 2>/dev/null | cut -d' ' -f1; }

# ---- the host's canaries ----------------------------------------------------------

mkdir -p "$HOME/.ssh" "$tmp/outside" "$tmp/workspace"
ws=$(realpath "$tmp/workspace")
outside=$(realpath "$tmp/outside")
ssh_canary="PADDOCK-CANARY-SSH-$$-$RANDOM"
printf '%s\n' "$ssh_canary" >"$HOME/.ssh/id_rsa"
chmod 600 "$HOME/.ssh/id_rsa"
printf '# the real bashrc\n' >"$HOME/.bashrc"
# An agent's login folder the user exposes (read-only) to session A.
mkdir -p "$HOME/.agent-login"
printf 'AGENT-LOGIN-%s\n' "$$" >"$HOME/.agent-login/token"
printf 'host original\n' >"$outside/target.txt"
printf 'PADDOCK-CANARY-OUTSIDE-%s\n' "$$" >"$outside/secret.txt"
printf 'hard-linked host file\n' >"$outside/hard-target.txt"
host_tmp_canary=$(mktemp "${TMPDIR:-/tmp}/test-escape-canary.XXXXXX")
printf 'PADDOCK-CANARY-HOSTTMP-%s\n' "$$" >"$host_tmp_canary"

# The workspace: a file, links that point out of it, the probe.
printf 'workspace original\n' >"$ws/existing.txt"
ln -s "$HOME/.ssh/id_rsa" "$ws/link-to-key"
ln -s "$outside/target.txt" "$ws/link-to-target"
hard_ok=true
ln "$outside/hard-target.txt" "$ws/hard.txt" 2>/dev/null || hard_ok=false
cp "$PROBE" "$ws/.escape-probe"
ws_probe="$ws/.escape-probe"
# A repository's protected paths (no git needed: the sandbox protects the
# paths, whatever wrote them): a hook that exists and the config.
mkdir -p "$ws/.git/hooks"
printf '#!/bin/sh\nexit 0\n' >"$ws/.git/hooks/pre-push"
printf '[core]\n\trepositoryformatversion = 0\n' >"$ws/.git/config"

sha_key=$(sha "$HOME/.ssh/id_rsa")
sha_bashrc=$(sha "$HOME/.bashrc")
sha_target=$(sha "$outside/target.txt")
sha_hard=$(sha "$outside/hard-target.txt")
sha_passwd=$(sha /etc/passwd)
snapshot_ws () { (cd "$ws" && find . -printf '%p %y %s %T@\n' | sort); }
snapshot_outside () { (cd "$outside" && find . -printf '%p %y %s %T@\n' | sort); }
snapshot_ws >"$tmp/ws.before"
snapshot_outside >"$tmp/outside.before"

# A process of the same user on the host, for signals to hit.
sleep 3600 &
host_sleeper=$!
background_pids+=("$host_sleeper")

# A listener on an abstract unix socket on the host (no network namespace:
# only Landlock's scope stands between the session and it).
abstract_name="paddock-escape-$$"
"$PYTHON" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0" + sys.argv[1]); s.listen(8)
open(sys.argv[2], "w").write("ready\n")
while True:
    c, _ = s.accept(); c.close()' "$abstract_name" "$tmp/abstract.ready" &
background_pids+=("$!")
wait_for 5 test -s "$tmp/abstract.ready" || true

bus_path=$(sed -n 's/^unix:.*path=\([^,]*\).*/\1/p' <<<"$DBUS_SESSION_BUS_ADDRESS")
bus_abstract=$(sed -n 's/^unix:.*abstract=\([^,]*\).*/\1/p' <<<"$DBUS_SESSION_BUS_ADDRESS")

# ---- session A: the probes ---------------------------------------------------------------

logs_have () { "$CTL" logs "$1" 2>/dev/null | grep -qF -- "$2"; }

run "$tmp/out" "$tmp/err" create --workspace "$ws" --profile safe --expose "$HOME/.agent-login" \
  -- sh -c 'echo READY; exec sleep 600'
id=$(head -n 1 "$tmp/out")
if [[ $rc -ne 0 ]] || ! wait_for 20 logs_have "$id" READY; then
  not_ok "a safe session starts" "$(cat "$tmp/out" "$tmp/err")" "$(tail -n 20 "$tmp/daemon.log")"
  echo "1..$n"
  exit 1
fi
ok "a safe session starts"
session_a=$id

# The boundary: every layer asked for is enforced (cgroup only as root).
"$CTL" --json status --review "$id" >"$tmp/boundary.json" 2>/dev/null || true
not_enforced=$(json "$tmp/boundary.json" \
  "' '.join('%s=%s' % (l['layer'], l['status']) for l in d['boundary'] if l['requested'] and l['status'] != 'enforced')" 2>&1)
check "every requested boundary layer is enforced ${not_enforced:+($not_enforced)}" test -z "$not_enforced"
requested=$(json "$tmp/boundary.json" "' '.join(sorted(l['layer'] for l in d['boundary'] if l['requested']))" 2>&1)
for layer in user-namespace pid-namespace mount-view staging no-new-privs seccomp landlock-fs landlock-net landlock-scope environment protected-paths exposures; do
  check "boundary layer $layer is requested" grep -qw -- "$layer" <<<"$requested"
done
if [[ $who == root ]]; then
  check "as root the cgroup layer is requested" grep -qw cgroup <<<"$requested"
fi
check "the landlock-fs layer shows its own canary blocked with EACCES" \
  test "$(json "$tmp/boundary.json" "[l['evidence'] for l in d['boundary'] if l['layer'] == 'landlock-fs'][0]" 2>&1 \
          | grep -o 'canary: create /dev/.paddock-canary[^;]*got EACCES')" != ""
check "the landlock-net layer shows its own canary (a bind to a port not leased) blocked with EACCES" \
  test "$(json "$tmp/boundary.json" "[l['evidence'] for l in d['boundary'] if l['layer'] == 'landlock-net'][0]" 2>&1 \
          | grep -o 'canary: bind a TCP socket to a port the session did not lease[^;]*got EACCES')" != ""
check "the protected-paths layer shows both read-only mounts and the canary's EROFS" \
  test "$(json "$tmp/boundary.json" "[l['evidence'] for l in d['boundary'] if l['layer'] == 'protected-paths'][0]" 2>&1 \
          | grep -o -e "$ws/.git/hooks is a mount with \"ro," -e "$ws/.git/config is a mount with \"ro," -e 'expected EROFS, got EROFS' | wc -l)" = 3
json "$tmp/boundary.json" "'\n'.join('%s: %s (%s)' % (l['layer'], l['status'], l['evidence']) for l in d['boundary'])" \
  2>/dev/null | sed 's/^/# boundary: /'

# --- writes outside the workspace ---

pexec sh -c "echo pwned > '$outside/new.txt'; echo pwned >> '$outside/target.txt'"
if [[ ! -e "$outside/new.txt" && "$(sha "$outside/target.txt")" == "$sha_target" ]]; then
  record "write beside the workspace (absolute path)" blocked "host folder unchanged; inside: $(one_line <"$tmp/p.out")"
else
  record "write beside the workspace (absolute path)" escaped "host $outside changed"
fi

pexec sh -c "echo pwned >> '$HOME/.bashrc'; mkdir -p '$HOME/.config/autostart' && echo pwned > '$HOME/.config/autostart/x.desktop'"
if [[ "$(sha "$HOME/.bashrc")" == "$sha_bashrc" && ! -e "$HOME/.config" ]]; then
  record "write into the real HOME (~/.bashrc, ~/.config)" blocked "host HOME unchanged; inside: $(one_line <"$tmp/p.out")"
else
  record "write into the real HOME (~/.bashrc, ~/.config)" escaped "host $HOME changed"
fi

tmp_name="/tmp/paddock-escape-$$-written-inside"
pexec sh -c "echo pwned > '$tmp_name' && echo written; echo pwned >> '$host_tmp_canary'"
if [[ ! -e "$tmp_name" ]] && grep -qx "PADDOCK-CANARY-HOSTTMP-$$" "$host_tmp_canary" && [[ $(lines "$host_tmp_canary") == 1 ]]; then
  record "write into the host's /tmp" blocked "private /tmp: nothing reached the host's /tmp; inside: $(one_line <"$tmp/p.out")"
else
  record "write into the host's /tmp" escaped "$tmp_name or $host_tmp_canary on the host changed"
fi

pexec sh -c "echo pwned >> '/proc/self/root$outside/target.txt'; echo pwned > '/proc/self/root$HOME/.bashrc'"
if [[ "$(sha "$outside/target.txt")" == "$sha_target" && "$(sha "$HOME/.bashrc")" == "$sha_bashrc" ]]; then
  record "write via /proc/self/root" blocked "host files unchanged; inside: $(one_line <"$tmp/p.out")"
else
  record "write via /proc/self/root" escaped "a host file changed through /proc/self/root"
fi

pexec sh -c "echo pwned >> '/proc/1/root$outside/target.txt'; echo pwned > '/proc/1/root$outside/new.txt'"
if [[ "$(sha "$outside/target.txt")" == "$sha_target" && ! -e "$outside/new.txt" ]]; then
  record "write via /proc/1/root (the sandbox's init)" blocked "host files unchanged; inside: $(one_line <"$tmp/p.out")"
else
  record "write via /proc/1/root (the sandbox's init)" escaped "a host file changed through /proc/1/root"
fi

daemon_cwd=$(readlink "/proc/$daemon_pid/cwd")
pexec sh -c "for d in /proc/[0-9]*/cwd /proc/$daemon_pid/cwd /proc/$daemon_pid/root/tmp; do echo pwned > \"\$d/paddock-escape-cwd-$$\" 2>/dev/null && echo \"wrote \$d\"; done; echo done"
leaked=$(ls "$daemon_cwd/paddock-escape-cwd-$$" "/tmp/paddock-escape-cwd-$$" "$ws/paddock-escape-cwd-$$" 2>/dev/null || true)
if [[ -z "$leaked" ]]; then
  record "write via /proc/<pid>/cwd (every visible pid and the daemon's)" blocked "nothing in the daemon's cwd, the host's /tmp or the real workspace; inside: $(one_line <"$tmp/p.out")"
else
  record "write via /proc/<pid>/cwd (every visible pid and the daemon's)" escaped "host has $leaked"
fi

pexec sh -c "cat link-to-key; ls -la link-to-key"
if ! grep -qF "$ssh_canary" "$tmp/p.out"; then
  record "read a host secret through a symlink in the workspace" blocked "link resolves inside the view; got: $(one_line <"$tmp/p.out")"
else
  record "read a host secret through a symlink in the workspace" escaped "read the key: $(one_line <"$tmp/p.out")"
fi

pexec sh -c "echo pwned >> link-to-target; ln -sf '$outside/secret.txt' made-link; echo pwned > made-link; echo status \$?"
if [[ "$(sha "$outside/target.txt")" == "$sha_target" ]] && ! grep -q pwned "$outside/secret.txt"; then
  record "write through a symlink pointing out of the workspace" blocked "host targets unchanged; inside: $(one_line <"$tmp/p.out")"
else
  record "write through a symlink pointing out of the workspace" escaped "a host file changed through a symlink"
fi

if $hard_ok; then
  pexec sh -c "echo pwned >> hard.txt; cat hard.txt"
  if [[ "$(sha "$outside/hard-target.txt")" == "$sha_hard" ]] && grep -q pwned "$tmp/p.out"; then
    record "write through a hard link to a file outside the workspace" blocked "copy-up: the session sees its edit, the host inode is unchanged"
  elif [[ "$(sha "$outside/hard-target.txt")" == "$sha_hard" ]]; then
    record "write through a hard link to a file outside the workspace" blocked "host inode unchanged; inside: $(one_line <"$tmp/p.out")"
  else
    record "write through a hard link to a file outside the workspace" escaped "$outside/hard-target.txt changed"
  fi
else
  record "write through a hard link to a file outside the workspace" skip "cannot hard-link across the host's folders here (protected_hardlinks?)"
fi

pexec sh -c "ln /etc/passwd pw 2>&1; echo 'pwned::0:0::/:/bin/sh' >> pw 2>&1; echo 'pwned::0:0::/:/bin/sh' >> /etc/passwd 2>&1; echo done"
if [[ "$(sha /etc/passwd)" == "$sha_passwd" ]]; then
  record "hard-link then write a system file (/etc/passwd)" blocked "host /etc/passwd unchanged; inside: $(one_line <"$tmp/p.out")"
else
  record "hard-link then write a system file (/etc/passwd)" escaped "host /etc/passwd changed"
fi

pexec sh -c "echo staged > staged-new.txt; echo more >> existing.txt; rm -f link-to-key; echo ok"
snapshot_ws >"$tmp/ws.after"
if cmp -s "$tmp/ws.before" "$tmp/ws.after" && ! grep -q more "$ws/existing.txt"; then
  record "writes inside the workspace stay staged" blocked "allowed inside, the real folder is unchanged (staged)"
else
  record "writes inside the workspace stay staged" escaped "the real workspace changed: $(diff "$tmp/ws.before" "$tmp/ws.after" | one_line)"
fi

# --- an exposed folder of the real HOME: readable, not writable ---

sha_token=$(sha "$HOME/.agent-login/token")
pexec sh -c 'cat /home/agent/.agent-login/token; echo pwned >> /home/agent/.agent-login/token
  echo x > /home/agent/.agent-login/new; rm -f /home/agent/.agent-login/token; ls /home/agent/.agent-login'
check "the exposed ~/.agent-login is readable at /home/agent/.agent-login" grep -q "AGENT-LOGIN-$$" "$tmp/p.out"
if [[ "$(sha "$HOME/.agent-login/token")" == "$sha_token" && ! -e "$HOME/.agent-login/new" ]] \
   && grep -q 'Read-only file system' "$tmp/p.out"; then
  record "write into an exposed folder of the real HOME" blocked "$(one_line <"$tmp/p.out")"
else
  record "write into an exposed folder of the real HOME" escaped "$(one_line <"$tmp/p.out")"
fi
check "the exposures layer lists it as a read-only mount" \
  test -n "$(json "$tmp/boundary.json" "[l['evidence'] for l in d['boundary'] if l['layer'] == 'exposures'][0]" 2>&1 \
             | grep -F "$HOME/.agent-login shown at /home/agent/.agent-login: ro,")"

# --- protected paths of the workspace: read-only in the view ---
# Judged inside the view (the stage keeps the real folder unchanged in any
# case): what git in the session, and after an apply on the host, would see.

sha_config=$(sha "$ws/.git/config")
sha_prepush=$(sha "$ws/.git/hooks/pre-push")
pexec sh -c 'printf "#!/bin/sh\ntouch /tmp/pwned\n" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
  echo "touch /tmp/pwned" >> .git/hooks/pre-push
  [ -e .git/hooks/pre-commit ] && echo CREATED; grep -q pwned .git/hooks/pre-push && echo CHANGED; echo done'
if [[ "$P_STATUS" == 0 ]] && grep -q 'Read-only file system' "$tmp/p.out" && ! grep -q -e CREATED -e CHANGED "$tmp/p.out" \
   && [[ ! -e "$ws/.git/hooks/pre-commit" && "$(sha "$ws/.git/hooks/pre-push")" == "$sha_prepush" ]]; then
  record "write .git/hooks/pre-commit, append to a hook" blocked "$(one_line <"$tmp/p.out")"
else
  record "write .git/hooks/pre-commit, append to a hook" escaped "$(one_line <"$tmp/p.out")"
fi

pexec sh -c 'before=$(sha256sum < .git/config)
  printf "[core]\n\thooksPath = /tmp/h\n\tfsmonitor = /tmp/h/run\n" >> .git/config
  git config core.hooksPath /tmp/h 2>&1; sed -i "s/0/1/" .git/config 2>&1
  [ "$(sha256sum < .git/config)" = "$before" ] || echo CHANGED; echo done'
if [[ "$P_STATUS" == 0 ]] && grep -q done "$tmp/p.out" && ! grep -q CHANGED "$tmp/p.out" \
   && [[ "$(sha "$ws/.git/config")" == "$sha_config" ]]; then
  record "edit .git/config (append, git config, sed -i)" blocked "$(one_line <"$tmp/p.out")"
else
  record "edit .git/config (append, git config, sed -i)" escaped "$(one_line <"$tmp/p.out")"
fi

pexec sh -c 'before=$(sha256sum < .git/config)
  { mv .git/config .git/config.old; mv .git/hooks .git/hooks.old; mv .git .git.old
    rm -f .git/config; rm -rf .git/hooks; rmdir .git; } 2>/tmp/errors
  [ -f .git/config ] && [ -d .git/hooks ] && [ -f .git/hooks/pre-push ] && [ "$(sha256sum < .git/config)" = "$before" ] && echo INTACT
  echo "renamed: $(ls -a . .git | grep -c "\.old$"); EBUSY: $(grep -c busy /tmp/errors), EROFS: $(grep -c Read-only /tmp/errors)"'
if [[ "$P_STATUS" == 0 ]] && grep -q INTACT "$tmp/p.out" && grep -q 'renamed: 0;' "$tmp/p.out"; then
  record "rename or remove .git, .git/hooks, .git/config" blocked "$(one_line <"$tmp/p.out")"
else
  record "rename or remove .git, .git/hooks, .git/config" escaped "$(one_line <"$tmp/p.out")"
fi

pexec sh -c 'mkdir -p /tmp/h && printf "#!/bin/sh\n" > /tmp/h/pre-commit; ln -s /tmp/h .git/hooks/linked 2>&1
  ln .git/config .git/config-hard 2>&1; echo x >> .git/config-hard 2>&1; cat .git/config | grep -c x; echo done'
if [[ "$P_STATUS" == 0 ]] && [[ ! -e "$ws/.git/hooks/linked" && "$(sha "$ws/.git/config")" == "$sha_config" ]] \
   && ! grep -q '^[1-9]' "$tmp/p.out"; then
  record "link into .git/hooks, hard-link .git/config then write" blocked "$(one_line <"$tmp/p.out")"
else
  record "link into .git/hooks, hard-link .git/config then write" escaped "$(one_line <"$tmp/p.out")"
fi

# --- reads of credentials and the real HOME ---

pexec sh -c "cat '$HOME/.ssh/id_rsa'; ls -la '$HOME' '$HOME/.ssh'; cat /proc/1/root$HOME/.ssh/id_rsa /proc/$daemon_pid/root$HOME/.ssh/id_rsa"
if ! grep -qF "$ssh_canary" "$tmp/p.out"; then
  record "read ~/.ssh/id_rsa of the real HOME (also via /proc/<daemon>/root)" blocked "$(one_line <"$tmp/p.out")"
else
  record "read ~/.ssh/id_rsa of the real HOME (also via /proc/<daemon>/root)" escaped "the key was read"
fi

pexec sh -c "grep -rsl -e '$ssh_canary' -e 'PADDOCK-CANARY-OUTSIDE-$$' -e 'PADDOCK-CANARY-HOSTTMP-$$' / --exclude-dir=proc --exclude-dir=usr 2>/dev/null; echo searched"
if ! grep -q '^/' "$tmp/p.out"; then
  record "search the whole view for the host's canaries" blocked "none of the canaries is in the view"
else
  record "search the whole view for the host's canaries" escaped "found in: $(grep '^/' "$tmp/p.out" | one_line)"
fi

pexec sh -c "cat /etc/shadow /etc/gshadow /etc/sudoers 2>&1 | head -c 300"
if ! grep -q ':\$\|root:[*!]' "$tmp/p.out"; then
  record "read /etc/shadow" blocked "$(one_line <"$tmp/p.out")"
else
  record "read /etc/shadow" escaped "$(one_line <"$tmp/p.out")"
fi

pexec sh -c "env; cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n'; cat /proc/$daemon_pid/environ 2>&1"
if ! grep -q 'PADDOCK_TEST_C\|DBUS_SESSION_BUS_ADDRESS' "$tmp/p.out"; then
  record "read the daemon's environment (canary, bus address)" blocked "no inherited variable in any visible environ"
else
  record "read the daemon's environment (canary, bus address)" escaped "$(grep 'PADDOCK_TEST_C\|DBUS_SESSION' "$tmp/p.out" | one_line)"
fi

# --- the D-Bus session socket, abstract sockets ---

if [[ -n "$bus_path" ]]; then
  probe "connect to the D-Bus session socket ($bus_path)" unix-connect "$bus_path"
elif [[ -n "$bus_abstract" ]]; then
  probe "connect to the D-Bus session socket (abstract $bus_abstract)" abstract-connect "$bus_abstract"
else
  record "connect to the D-Bus session socket" skip "cannot tell the socket from $DBUS_SESSION_BUS_ADDRESS"
fi

if [[ -s "$tmp/abstract.ready" ]]; then
  probe "connect to a host abstract unix socket (Landlock scope)" abstract-connect "$abstract_name"
else
  record "connect to a host abstract unix socket (Landlock scope)" skip "the host listener did not start"
fi

# --- signals and ptrace against the daemon and the host ---

probe "SIGTERM the daemon by its host pid" kill "$daemon_pid" 15
if ! kill -0 "$daemon_pid" 2>/dev/null; then
  record "the daemon is alive after the signal" escaped "paddockd ($daemon_pid) is gone"
fi
probe "SIGKILL a host process of the same user" kill "$host_sleeper" 9
if ! kill -0 "$host_sleeper" 2>/dev/null; then
  record "the host process is alive after the signal" escaped "host sleep ($host_sleeper) is gone"
fi
probe "ptrace the daemon" ptrace-attach "$daemon_pid"
probe "ptrace the sandbox's init (pid 1)" ptrace-attach 1
probe "ptrace a child of one's own" ptrace-child
# Same user, so the kernel itself would let it: a hard limit lowered on pid 1
# could never be raised again inside, and every later command inherits it.
probe "lower the hard limits of the sandbox's init (prlimit on pid 1)" prlimit 1


pexec sh -c 'for s in /proc/[0-9]*/status; do p=${s%/status}; p=${p#/proc/}; c=$(sed -n "s/^CapEff:\t//p" "$s"); echo "$p $c $(cat /proc/$p/comm)"; done 2>/dev/null'
# The helper's own processes (pid 1, the command supervisors) hold the
# user namespace's capabilities; nothing the agent or a command runs may.
capable=$(awk '$3 != "paddock-sandbox" && $2 != "0000000000000000" && NF >= 3' "$tmp/p.out" | one_line)
helpers=$(awk '$3 == "paddock-sandbox" {printf "%s ", $1}' "$tmp/p.out")
if [[ -z "$capable" ]]; then
  record "no agent or command process holds a capability" blocked "CapEff 0 for all but the helper's own pids (${helpers% }: userns capabilities)"
else
  record "no agent or command process holds a capability" escaped "capable: $capable"
fi
# pid 1 and this command's own supervisor (its parent), while it runs.
pexec "$PYTHON" -c '
import os, sys
for pid in ("1", str(os.getppid())):
    print("pid", pid, open("/proc/%s/comm" % pid).read().strip())
    for name in ("mem", "environ"):
        path = "/proc/%s/%s" % (pid, name)
        try:
            fd = os.open(path, os.O_RDWR if name == "mem" else os.O_RDONLY); print("opened", path); os.close(fd)
        except OSError as e:
            print("refused", path, e.strerror)'
if ! grep -q '^opened' "$tmp/p.out"; then
  record "open /proc/<pid>/mem of the capable helper processes" blocked "$(one_line <"$tmp/p.out")"
else
  record "open /proc/<pid>/mem of the capable helper processes" escaped "$(one_line <"$tmp/p.out")"
fi

# --- namespaces, mounts, kernel interfaces ---

probe "mount a tmpfs" mount /tmp/mnt
probe "unmount the workspace overlay (to reach the real folder)" umount "$ws"
probe "unshare a user namespace (unshare -U)" unshare user
probe "unshare a mount namespace (unshare -m)" unshare mount
probe "unshare a network namespace (unshare -n)" unshare net
probe "clone3 with CLONE_NEWUSER" clone3-newuser
pexec unshare -Urm sh -c 'echo inside a new userns'
if ! grep -q 'inside a new userns' "$tmp/p.out"; then
  record "unshare(1) -Urm" blocked "$(one_line <"$tmp/p.out")"
else
  record "unshare(1) -Urm" escaped "$(one_line <"$tmp/p.out")"
fi
probe "chroot (and break out of it)" chroot
probe "keyctl (read the user keyring)" keyctl
probe "add_key into the session keyring" add-key
probe "bpf(BPF_MAP_CREATE)" bpf
probe "perf_event_open on itself" perf
probe "io_uring_setup" io-uring
probe "open_by_handle_at (shocker)" open-by-handle
probe "personality(READ_IMPLIES_EXEC)" personality
# The i386 entry: where the machine has none at all (int 0x80 faults with
# SIGSEGV in a process outside any sandbox: seen under a paravirtualized
# kernel), the call cannot run inside either; seccomp's rule against the
# other ABI is then not what blocks it, and the row says so.
host_int80=0
"$PROBE" int80 >/dev/null 2>&1 || host_int80=$?
if [[ "$host_int80" == 139 ]]; then
  pexec "$ws_probe" int80
  if [[ "$P_SIGNAL" == 31 || "$P_SIGNAL" == 11 ]]; then
    record "32-bit syscall via int 0x80" blocked \
      "signal $P_SIGNAL: this machine has no i386 entry (int 0x80 faults outside the sandbox too), so seccomp's rule is not what blocks it"
  else
    record "32-bit syscall via int 0x80" escaped "exit $P_STATUS signal $P_SIGNAL: $(one_line <"$tmp/p.out")"
  fi
else
  probe "32-bit syscall via int 0x80" int80
fi

# --- the terminal ---

tiocsti_mark="ESCAPE$$"
probe "TIOCSTI into the agent's terminal (/dev/console)" tiocsti /dev/console "echo $tiocsti_mark"
pexec --tty "$ws_probe" tiocsti /dev/tty "echo $tiocsti_mark"
out=$(one_line <"$tmp/p.out")
if [[ "$out" == *"blocked "* && "$out" != *"escaped"* ]]; then
  record "TIOCSTI into its own terminal (exec --tty)" blocked "${out#*blocked }"
else
  record "TIOCSTI into its own terminal (exec --tty)" escaped "$out"
fi
probe "TIOCLINUX on the agent's terminal" tioclinux /dev/console
if "$CTL" logs "$id" 2>/dev/null | grep -q "$tiocsti_mark"; then
  record "nothing typed into the agent's terminal" escaped "the injected text shows in the session's output"
fi

# --- sockets ---

probe "socket(AF_PACKET, SOCK_RAW)" socket packet
probe "socket(AF_INET, SOCK_RAW)" socket raw
probe "socket(AF_INET6, SOCK_RAW)" socket raw6
probe "socket(AF_NETLINK, NETLINK_AUDIT)" socket netlink-audit
probe "socket(AF_NETLINK, NETLINK_KOBJECT_UEVENT)" socket netlink-uevent
probe "socket(AF_VSOCK)" socket vsock

free_port=$("$PYTHON" -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pexec "$ws_probe" bind "$free_port"
out=$(one_line <"$tmp/p.out")
if [[ "$P_STATUS" == 0 && "$out" == blocked* ]]; then
  record "bind an unleased TCP port ($free_port)" blocked "${out#blocked }"
else
  record "bind an unleased TCP port ($free_port)" escaped "$out"
fi

# --- /proc and /sys ---

pexec sh -c 'echo h > /proc/sysrq-trigger'
if [[ "$P_STATUS" != 0 ]]; then
  record "write /proc/sysrq-trigger" blocked "$(one_line <"$tmp/p.out")"
else
  record "write /proc/sysrq-trigger" escaped "the write succeeded"
fi

domain_before=$(cat /proc/sys/kernel/domainname)
pexec sh -c 'echo paddock-escaped > /proc/sys/kernel/domainname'
domain_after=$(cat /proc/sys/kernel/domainname)
if [[ "$domain_after" == "$domain_before" && "$P_STATUS" != 0 ]]; then
  record "write /proc/sys (kernel.domainname)" blocked "host value unchanged; $(one_line <"$tmp/p.out")"
else
  record "write /proc/sys (kernel.domainname)" escaped "host domainname now $domain_after"
  [[ $who == root ]] && printf '%s\n' "$domain_before" >/proc/sys/kernel/domainname 2>/dev/null || true
fi

pexec sh -c 'ls -d /sys 2>&1; echo 1 > /sys/kernel/uevent_helper 2>&1; echo $$ > /sys/fs/cgroup/cgroup.procs 2>&1; echo done'
if [[ "$P_STATUS" == 0 ]] && ! grep -q '^/sys$' "$tmp/p.out"; then
  record "write /sys (uevent_helper, cgroup.procs)" blocked "$(one_line <"$tmp/p.out")"
else
  record "write /sys (uevent_helper, cgroup.procs)" escaped "$(one_line <"$tmp/p.out")"
fi

# --- filling /tmp ---

host_tmp_before=$(df -Pk "${TMPDIR:-/tmp}" | awk 'NR == 2 {print $4}')
pexec sh -c 'df -Pk /tmp | awk "NR == 2 {print \"size_kib=\" \$2}"; dd if=/dev/zero of=/tmp/fill bs=1M count=1024 2>&1 | tail -n 1; ls -l /tmp/fill'
host_tmp_after=$(df -Pk "${TMPDIR:-/tmp}" | awk 'NR == 2 {print $4}')
tmpfs_size=$(sed -n 's/^size_kib=//p' "$tmp/p.out")
if [[ ! -e /tmp/fill ]] && (( host_tmp_before - host_tmp_after < 256 * 1024 )); then
  record "fill /tmp (1 GiB into the private tmpfs)" blocked "the host's /tmp lost $(( (host_tmp_before - host_tmp_after) / 1024 )) MiB; private tmpfs size $(( ${tmpfs_size:-0} / 1024 )) MiB"
else
  record "fill /tmp (1 GiB into the private tmpfs)" escaped "the host's /tmp lost $(( (host_tmp_before - host_tmp_after) / 1024 )) MiB"
fi
pexec rm -f /tmp/fill

# --- signals inside: the init survives, and the session with it ---

# The kernel lets the signal be sent but never delivers SIGKILL to a PID
# namespace's init from inside: judged by whether the session survives.
pexec "$ws_probe" kill 1 9
sleep 0.5
"$CTL" --json status "$id" >"$tmp/st.json" 2>/dev/null || true
state=$(json "$tmp/st.json" 'd["state"]' 2>/dev/null || echo unknown)
if [[ "$state" == running ]]; then
  record "SIGKILL the sandbox's init (pid 1)" blocked "kill() $(one_line <"$tmp/p.out" | sed 's/escaped kill //'), ignored by the namespace's init: the session still runs"
else
  record "SIGKILL the sandbox's init (pid 1)" escaped "the session is $state: the agent could end its own sandbox's init"
fi
"$CTL" --json status "$id" >"$tmp/st.json" 2>/dev/null || true
state=$(json "$tmp/st.json" 'd["state"]' 2>/dev/null || echo unknown)
check "the session still runs after the attempts ($state)" test "$state" = running

snapshot_outside >"$tmp/outside.after"
check "the folder beside the workspace is unchanged after every probe" cmp -s "$tmp/outside.before" "$tmp/outside.after"

"$CTL" destroy "$id" >/dev/null 2>&1 || true

# ---- session B: a fork bomb and a process that leaves its group ------------------------------------

# scan_marker MARK: pids on the whole host whose command line has MARK.
scan_marker ()
{
  local f
  for f in /proc/[0-9]*/cmdline; do
    tr '\0' ' ' 2>/dev/null <"$f" | grep -qF -- "$1" && { f=${f#/proc/}; echo "${f%/cmdline}"; }
  done
  return 0
}

# marker_seen MARK: whether a process of the host carries MARK (a command,
# so that wait_for looks again each time).
marker_seen () { [[ -n "$(scan_marker "$1")" ]]; }

# markers_gone MARK…: whether no process of the host carries any MARK (a
# command, so that wait_for looks again each time).
markers_gone ()
{
  local mark
  for mark in "$@"; do
    marker_seen "$mark" && return 1
  done
  return 0
}

ws_b="$tmp/workspace-b"
mkdir "$ws_b"
ws_b=$(realpath "$ws_b")
run "$tmp/out" "$tmp/err" create --workspace "$ws_b" --profile safe -- sh -c 'echo READY; exec sleep 600'
id=$(head -n 1 "$tmp/out")
if [[ $rc -ne 0 ]] || ! wait_for 20 logs_have "$id" READY; then
  not_ok "the fork-bomb session starts" "$(cat "$tmp/out" "$tmp/err")"
else
  bomb_mark="paddock-bomb-$$"
  pexec bash -c "for i in \$(seq 2000); do (exec -a $bomb_mark sleep 600) </dev/null >/dev/null 2>&1 & done 2>/dev/null; sleep 1; echo started \$(grep -l $bomb_mark /proc/[0-9]*/cmdline 2>/dev/null | wc -l)"
  started=$(sed -n 's/^started //p' "$tmp/p.out")
  on_host=$(scan_marker "$bomb_mark" | wc -l)
  # A pids limit, where the session has a cgroup with the pids controller.
  agent_host_pid=$("$CTL" --json status "$id" 2>/dev/null | "$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["pid"])' 2>/dev/null || true)
  pids_max=""
  cg=$(sed -n 's/^0:://p' "/proc/${agent_host_pid:-0}/cgroup" 2>/dev/null | head -n 1)
  for root in /sys/fs/cgroup /sys/fs/cgroup/unified; do
    [[ -n "$cg" && -r "$root$cg/pids.max" ]] && pids_max=$(cat "$root$cg/pids.max")
  done

  leave_mark="paddock-leave-$$"
  pexec bash -c "setsid bash -c '(exec -a $leave_mark-a sleep 600 </dev/null >/dev/null 2>&1 &)' </dev/null >/dev/null 2>&1 & setsid -f bash -c 'exec -a $leave_mark-b sleep 600' </dev/null >/dev/null 2>&1; sleep 0.5; ps -o pid,pgid,sid,args -e 2>/dev/null | grep $leave_mark | grep -v grep"
  leave_inside=$(grep -c "$leave_mark" "$tmp/p.out" || true)
  wait_for 5 marker_seen "$leave_mark" || true
  leave_before=$(scan_marker "$leave_mark" | wc -l)

  "$CTL" --json destroy "$id" >"$tmp/destroy.json" 2>/dev/null || true
  survivors=$(json "$tmp/destroy.json" 'd.get("survivors")' 2>/dev/null || echo "?")
  elapsed=$(json "$tmp/destroy.json" 'd.get("elapsed_ms")' 2>/dev/null || echo "?")
  wait_for 5 markers_gone "$bomb_mark" "$leave_mark" || true
  bomb_left=$(scan_marker "$bomb_mark" | wc -l)
  leave_left=$(scan_marker "$leave_mark" | wc -l)

  detail="started ${started:-?} sleepers inside ($on_host seen on the host); pids.max ${pids_max:-none}; destroy: survivors $survivors in ${elapsed} ms; left on the host: $bomb_left"
  if [[ "$survivors" == 0 && "$bomb_left" == 0 && ( -z "$pids_max" || "$pids_max" == max || "${started:-0}" -le "$pids_max" ) ]]; then
    record "fork bomb (2000 sleepers), then destroy" blocked "$detail"
  else
    record "fork bomb (2000 sleepers), then destroy" escaped "$detail"
  fi
  if [[ "$leave_before" -lt 1 ]]; then
    record "setsid + double fork out of the process group, then destroy" skip "the setsid'd sleepers never appeared ($(one_line <"$tmp/p.out"))"
  elif [[ "$survivors" == 0 && "$leave_left" == 0 ]]; then
    record "setsid + double fork out of the process group, then destroy" blocked "$leave_before left the group (own session) and none is left after destroy"
  else
    record "setsid + double fork out of the process group, then destroy" escaped "$leave_left still on the host after destroy (survivors $survivors)"
  fi
fi

# ---- session C: kill -9 -1 ---------------------------------------------------------------

ws_c="$tmp/workspace-c"
mkdir "$ws_c"
ws_c=$(realpath "$ws_c")
run "$tmp/out" "$tmp/err" create --workspace "$ws_c" --profile safe -- sh -c 'echo READY; exec sleep 600'
id=$(head -n 1 "$tmp/out")
if [[ $rc -ne 0 ]] || ! wait_for 20 logs_have "$id" READY; then
  not_ok "the kill -1 session starts" "$(cat "$tmp/out" "$tmp/err")"
else
  P_LIMIT=20 pexec sh -c 'kill -9 -1; echo "kill -1: $?"'
  kill_hung=$P_HUNG
  sleep 0.5
  "$CTL" --json status "$id" >"$tmp/st.json" 2>/dev/null || true
  state=$(json "$tmp/st.json" 'd["state"]' 2>/dev/null || echo unknown)
  alive=""
  kill -0 "$daemon_pid" 2>/dev/null && alive+="daemon "
  kill -0 "$bus_pid" 2>/dev/null && alive+="bus "
  kill -0 "$host_sleeper" 2>/dev/null && alive+="host-process "
  if [[ "$alive" == "daemon bus host-process " ]] && "$CTL" ports list >/dev/null 2>&1; then
    record "kill -9 -1 inside" blocked "only the session died (session $state); daemon, bus and a host process of the same user alive"
  else
    record "kill -9 -1 inside" escaped "alive afterwards: ${alive:-nothing}"
  fi
  if $kill_hung; then
    n=$((n + 1))
    echo "not ok $n - exec returns when its session dies under it # TODO paddockctl exec (--timeout 120000) never returns once kill -1 ended the session; killed after 20 s"
  else
    ok "exec returns when its session dies under it"
  fi
  "$CTL" destroy "$id" >/dev/null 2>&1 || true
fi

# ---- the matrix ---------------------------------------------------------------------------

blocked=0 escaped=0 skipped=0
echo "# probe | uid | result | detail"
for row in "${matrix[@]}"; do
  echo "# $row"
  case $row in
    *" | blocked | "*) blocked=$((blocked + 1)) ;;
    *" | escaped"*) escaped=$((escaped + 1)) ;;
    *) skipped=$((skipped + 1)) ;;
  esac
done
echo "# $who: ${#matrix[@]} probes: $blocked blocked, $escaped escaped, $skipped skipped; $(( $(date +%s) - suite_start )) s"
check "at least 30 probes were run (not skipped)" test $((blocked + escaped)) -ge 30

rm -f "$host_tmp_canary"
echo "1..$n"
[[ $failures -eq 0 ]]
