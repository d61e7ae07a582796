#!/bin/bash
# test-session-circles.sh — the session's parts never call back into the session, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Issue #20: "no import circles in daemon/". PaddockSessionImpl
# (daemon/paddock-session-impl.c) makes its parts, connects to their
# signals and delegates its D-Bus methods to them; the parts (everything in
# daemon/session/) are given what they need and report with signals, and
# what sits below the session (its executors, daemon/executor/; the agent
# presets' side, daemon/agents/) knows it only by its config. So
# paddock-session-impl-private.h is paddock-session-impl.c's alone, and
# none of those includes the session's headers or calls its functions.
# Reads the source tree only (PADDOCK_SOURCE_ROOT).

set -euo pipefail

source "$(dirname "$0")/tap-lib.sh" "$@"

[[ -n "${PADDOCK_SOURCE_ROOT:-}" ]] || skip "PADDOCK_SOURCE_ROOT is not set"
cd "$PADDOCK_SOURCE_ROOT"
[[ -f daemon/paddock-session-impl.c ]] || skip "$PADDOCK_SOURCE_ROOT has no daemon/paddock-session-impl.c"

sources ()
{
  find "$@" \( -name '*.c' -o -name '*.h' \) -type f | LC_ALL=C sort
}

# Every file but the session itself that includes its private header.
others=$(sources daemon app ui registry tests bench 2>/dev/null |
           xargs grep -l '#include "paddock-session-impl-private.h"' |
           grep -vx 'daemon/paddock-session-impl.c' | tr '\n' ' ' || true)
check "only paddock-session-impl.c includes paddock-session-impl-private.h" test -z "$others"

parts=$(sources daemon/session daemon/executor daemon/agents | xargs grep -l '#include "paddock-session-impl' | tr '\n' ' ' || true)
check "nothing in daemon/session/, daemon/executor/, daemon/agents/ includes paddock-session-impl*.h" test -z "$parts"

# Comments may name the session's functions (to say where a thing is
# built); code may not call them.
calls=$(sources daemon/session daemon/executor daemon/agents |
          xargs grep -nE '(^|[^_a-z])(_?paddock_session_impl_[a-z_]+|PADDOCK_SESSION_IMPL) *\(' |
          grep -vE '^[^:]+:[0-9]+: *(/?\*|//)' | cut -d: -f1,2 | tr '\n' ' ' || true)
check "nothing in daemon/session/, daemon/executor/, daemon/agents/ calls into PaddockSessionImpl" test -z "$calls"

echo "1..$n"
(( failures == 0 ))
