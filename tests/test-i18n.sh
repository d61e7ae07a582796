#!/bin/bash
# test-i18n.sh — the programs speak German from the build tree's catalogue, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Needs PADDOCK_BUILD_ROOT. po/de.po is compiled by meson into
# build/po/de/LC_MESSAGES/paddock.mo; PADDOCK_LOCALEDIR points the programs
# there instead of the installed localedir. C.UTF-8 exists on every glibc
# system, and gettext honours LANGUAGE in any locale but plain "C".

set -euo pipefail

source "$(dirname "$0")/tap-lib.sh" "$@"

[[ -n "${PADDOCK_BUILD_ROOT:-}" ]] || skip "PADDOCK_BUILD_ROOT is not set"
CTL="$PADDOCK_BUILD_ROOT/app/paddockctl"
APP="$PADDOCK_BUILD_ROOT/app/paddock"
MO="$PADDOCK_BUILD_ROOT/po/de/LC_MESSAGES/paddock.mo"
[[ -x "$CTL" ]] || skip "$CTL is not built"
[[ -s "$MO" ]] || skip "$MO is not built"

unset DBUS_SESSION_BUS_ADDRESS DISPLAY WAYLAND_DISPLAY
export LC_ALL=C.UTF-8 PADDOCK_LOCALEDIR="$PADDOCK_BUILD_ROOT/po"

out=$(LANGUAGE=de "$CTL" --help)
check "paddockctl --help in German: the commands' heading" grep -qx 'Befehle:' <<<"$out"
check "paddockctl --help in German: a command's summary (a table row, N_())" \
  grep -q '^  list  *Die Sitzungen auflisten$' <<<"$out"
check "paddockctl --help in German: an option (GOption's translation domain)" \
  grep -q -- '--json  *Ein JSON-Dokument auf die Standardausgabe schreiben' <<<"$out"

rc=0
err=$(LANGUAGE=de "$CTL" frobnicate 2>&1 >/dev/null) || rc=$?
check "a usage error in German, still exit 2 (got: $(head -n 1 <<<"$err"))" \
  test "$rc:$(head -n 1 <<<"$err")" = "2:paddockctl: unbekannter Befehl „frobnicate“"

# A command's own strings (app/paddockctl-review.c): an option of its
# --help and a usage error, exit 2 as in English.
out=$(LANGUAGE=de "$CTL" review --help)
check "paddockctl review --help in German: an option's description" \
  grep -q -- '--diff  *Den vereinheitlichten Diff jeder Änderung zeigen$' <<<"$out"
rc=0
err=$(LANGUAGE=de "$CTL" review 2>&1 >/dev/null) || rc=$?
check "review's usage error in German, still exit 2 (got: $(head -n 1 <<<"$err"))" \
  test "$rc:$(head -n 1 <<<"$err")" = "2:paddockctl: Sitzungs-ID fehlt"

# Scripts read the error's name, which no translation touches.
rc=0
json=$(LANGUAGE=de "$CTL" --json frobnicate 2>/dev/null) || rc=$?
check "--json: the error's name stays org.paddock.Error.InvalidArgument (got: $json)" \
  grep -q '"name" *: *"org.paddock.Error.InvalidArgument"' <<<"$json"

out=$(LANGUAGE= "$CTL" --help)
check "without LANGUAGE, English" grep -qx 'Commands:' <<<"$out"

if [[ -x "$APP" ]]; then
  out=$(LANGUAGE=de "$APP" --help 2>&1 || true)
  check "paddock --help in German: its summary (got: $(sed -n 4p <<<"$out"))" \
    grep -q 'KI-Programmieragenten beobachten' <<<"$out"
  check "paddock --version prints its version" test "$("$APP" --version)" = "paddock ${PADDOCK_VERSION:-$("$CTL" --version | cut -d' ' -f2)}"
else
  ok "# SKIP the app is not built (-Dui=false)"
fi

echo "1..$n"
exit $(( failures > 0 ))
