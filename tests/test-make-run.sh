#!/bin/bash
# test-make-run.sh — `make run` (tools/run.sh): the app with the daemon from the build tree behind it
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# What issue #7 asks of `make run`, as a user would see it:
#   1. without a display it says so and what to run instead, and exits 0;
#   2. on a display with no session bus at all, it makes a private bus,
#      starts paddockd from the build tree on it (none is on the bus), and
#      the app's window appears; when the app goes, the bus and the daemon
#      go with it.
# HOME, the state and runtime folders are throw-away ones: nothing of the
# user's is touched. Skips (TAP "1..0 # SKIP") without xvfb-run,
# dbus-run-session or xwininfo.

set -euo pipefail

skip ()
{
  echo "1..0 # SKIP $*"
  exit 0
}

[[ -n "${PADDOCK_BUILD_ROOT:-}" ]] || skip "PADDOCK_BUILD_ROOT is not set"
[[ -n "${PADDOCK_SOURCE_ROOT:-}" ]] || skip "PADDOCK_SOURCE_ROOT is not set"
RUN="$PADDOCK_SOURCE_ROOT/tools/run.sh"
[[ -x "$PADDOCK_BUILD_ROOT/app/paddock" ]] || skip "the app is not built"
command -v xvfb-run >/dev/null || skip "xvfb-run is not installed"
command -v dbus-run-session >/dev/null || skip "dbus-run-session is not installed"
command -v xwininfo >/dev/null || skip "xwininfo (x11-utils) is not installed"

tmp=$(mktemp -d /tmp/paddock-make-run-XXXXXX)
run_pid=
cleanup ()
{
  [[ -n "$run_pid" ]] && kill "$run_pid" 2>/dev/null || true
  [[ -n "${daemon_pid:-}" ]] && kill "$daemon_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

n=0
ok () { n=$((n + 1)); echo "ok $n - $1"; }
not_ok () { n=$((n + 1)); echo "not ok $n - $1"; shift; for line in "$@"; do echo "# $line"; done; }

echo "1..5"

# A user's environment with nothing of the user's in it.
isolated=(env -u DBUS_SESSION_BUS_ADDRESS -u WAYLAND_DISPLAY
          HOME="$tmp/home" XDG_STATE_HOME="$tmp/state" XDG_CONFIG_HOME="$tmp/config"
          XDG_CACHE_HOME="$tmp/cache" XDG_RUNTIME_DIR="$tmp/runtime"
          GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1 GTK_A11Y=none GSK_RENDERER=cairo GDK_BACKEND=x11)
mkdir -p "$tmp/home" "$tmp/runtime"
chmod 700 "$tmp/runtime"

# 1. No display.
out=$(env -u DISPLAY "${isolated[@]}" "$RUN" "$PADDOCK_BUILD_ROOT" 2>&1) && rc=0 || rc=$?
if [[ $rc -eq 0 && "$out" == *"no display"* && "$out" == *"paddockctl"* ]]; then
  ok "without a display it says so, and what to run instead"
else
  not_ok "without a display it says so, and what to run instead" "exit $rc" "$out"
fi

# 2. A display, no session bus: a private one, the daemon from the build
# tree, the window. xvfb-run runs a script that starts run.sh and looks.
cat >"$tmp/look.sh" <<'EOF'
#!/bin/bash
"$@" >"$LOOK_DIR/run.out" 2>&1 &
echo $! >"$LOOK_DIR/run.pid"
# Up to 60 s. Once, on a loaded machine, no window came within 30 s; the
# cause is not known, so a failure now shows what run.sh and the app said.
for _ in $(seq 600); do
  if xwininfo -root -tree 2>/dev/null | grep -q '"Paddock"'; then
    echo shown >"$LOOK_DIR/window"
    break
  fi
  sleep 0.1
done
xwininfo -root -tree >"$LOOK_DIR/tree" 2>&1 || true
# The user closes the app: its process ends (run.sh became
# dbus-run-session, whose child became the app).
for child in $(ps -o pid= --ppid "$(cat "$LOOK_DIR/run.pid")"); do
  [[ "$(cat "/proc/$child/comm" 2>/dev/null)" == paddock ]] && kill "$child"
done
wait 2>/dev/null || true
EOF
chmod +x "$tmp/look.sh"

LOOK_DIR="$tmp" "${isolated[@]}" LOOK_DIR="$tmp" \
  xvfb-run -a -s "-screen 0 1280x800x24" "$tmp/look.sh" "$RUN" "$PADDOCK_BUILD_ROOT" >/dev/null 2>&1 || true
out=$(cat "$tmp/run.out" 2>/dev/null || true)

if [[ "$out" == *"started paddockd"*"private bus"* ]]; then
  ok "with no session bus it starts paddockd from the build tree on a private one"
else
  not_ok "with no session bus it starts paddockd from the build tree on a private one" "$out"
fi

daemon_pid=$(sed -n 's/.*started paddockd (pid \([0-9]*\).*/\1/p' <<<"$out" | head -n1)
if [[ -n "$daemon_pid" && -e "$PADDOCK_BUILD_ROOT/paddockd.log" ]] &&
   grep -q "Serving org.paddock.Daemon (state in $tmp/state/paddock)" "$PADDOCK_BUILD_ROOT/paddockd.log"; then
  ok "the daemon served the bus, its state in the (throw-away) XDG state folder"
else
  not_ok "the daemon served the bus, its state in the (throw-away) XDG state folder" \
    "$(cat "$PADDOCK_BUILD_ROOT/paddockd.log" 2>/dev/null || echo no log)"
fi

if [[ -e "$tmp/window" ]]; then
  ok "the app's window appeared"
else
  not_ok "the app's window appeared" "what run.sh and the app printed:" "$out" \
    "the display's windows:" "$(cat "$tmp/tree" 2>/dev/null)"
fi

# 3. The app gone, the private bus and the daemon go too.
gone=false
for _ in $(seq 100); do
  if [[ -n "$daemon_pid" ]] && ! kill -0 "$daemon_pid" 2>/dev/null; then gone=true; break; fi
  sleep 0.1
done
if [[ -z "$daemon_pid" ]]; then
  not_ok "the daemon ended with the app's private bus" "run.sh named no daemon pid: nothing to look at"
elif $gone; then
  ok "the daemon ended with the app's private bus"
  daemon_pid=
else
  not_ok "the daemon ended with the app's private bus" "pid $daemon_pid still runs"
fi
