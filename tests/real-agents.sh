#!/bin/bash
# real-agents.sh — the four real agents, installed from npm per user, through their presets
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Not part of `make test` (it downloads from the npm registry and runs the
# agents' own code). Usage, from a built tree:
#
#   PADDOCK_BUILD_ROOT=build tests/real-agents.sh [PREFIX-HOME]
#
# Installs Claude Code, Codex, OpenCode and pi with `npm i -g` into a
# temporary HOME's ~/.npm-global (or reuses PREFIX-HOME where they are
# installed already), starts a private bus and daemon with that HOME and no
# PATH to the prefix, and for each preset: `agents` finds it, `create
# --agent NAME -- NAME --version` prints a version, `create --agent NAME`
# starts its TUI (bytes on the terminal after 10 s), its home under the
# state dir holds what it wrote, the proxy's records list the hosts it
# asked for, and nothing of the session is left after Destroy. Prints a
# Markdown table (README's).

set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
[[ -n "${PADDOCK_BUILD_ROOT:-}" ]] || { echo "PADDOCK_BUILD_ROOT is not set" >&2; exit 2; }
PADDOCK_BUILD_ROOT=$(cd "$PADDOCK_BUILD_ROOT" && pwd)
export PADDOCK_BUILD_ROOT
command -v npm >/dev/null || { echo "npm is not installed" >&2; exit 2; }

if [[ -n "${1:-}" ]]; then
  HOME=$(cd "$1" && pwd)
  own_home=false
else
  HOME=$(mktemp -d "${TMPDIR:-/tmp}/paddock-real-agents.XXXXXX")
  own_home=true
fi
export HOME
export XDG_CONFIG_HOME="$HOME/.config"
export PADDOCK_AGENTS_DIR="$here/../data/agents"
unset NPM_CONFIG_PREFIX npm_config_prefix
if [[ ! -x "$HOME/.npm-global/bin/pi" ]]; then
  npm config set prefix '~/.npm-global' >/dev/null
  npm i -g --no-fund --no-audit @anthropic-ai/claude-code @openai/codex opencode-ai \
    @mariozechner/pi-coding-agent >"${TMPDIR:-/tmp}/paddock-real-agents-npm.log" 2>&1 ||
    { echo "npm install failed, see ${TMPDIR:-/tmp}/paddock-real-agents-npm.log" >&2; exit 1; }
fi
export PATH=/usr/local/bin:/usr/bin:/bin

# shellcheck source=paddockctl-lib.sh
source "$here/paddockctl-lib.sh" >/dev/null
# A row with a failure is still a row: nothing here ends the run.
set +e
$own_home && trap 'cleanup; rm -rf "$HOME"' EXIT

ws=$(mktemp -d "$tmp/ws.XXXXXX")
state_dir=$(json <("$CTL" --json info) 'd["state-dir"]')
"$CTL" --json agents >"$tmp/agents.json"

echo "| agent | found | version | TUI drawn | home kept | hosts asked (verdict) | left after Destroy |"
echo "|---|---|---|---|---|---|---|"
for agent in claude codex opencode pi; do
  found=$(json "$tmp/agents.json" "[a['found'] for a in d['agents'] if a['name'] == '$agent'][0]")
  version=-
  drawn=-
  kept=-
  hosts=-
  left=-
  if [[ "$found" == True ]]; then
    if "$CTL" --json create --agent "$agent" --workspace "$ws" -- "$agent" --version >"$tmp/v.json" 2>&1; then
      id=$(json "$tmp/v.json" 'd["id"]')
      has_version () { "$CTL" logs "$id" 2>/dev/null | grep -q -E '[0-9]+\.[0-9]+'; }
      wait_for 30 has_version
      version=$("$CTL" logs "$id" 2>/dev/null | tr -d '\r' | grep -m1 -E '[0-9]+\.[0-9]+' | tr -d '|')
      "$CTL" destroy "$id" >/dev/null 2>&1
    fi
    if "$CTL" --json create --agent "$agent" --workspace "$ws" --size 120x40 >"$tmp/t.json" 2>&1; then
      id=$(json "$tmp/t.json" 'd["id"]')
      sleep 10
      drawn="$("$CTL" logs "$id" 2>/dev/null | wc -c) bytes"
      kept=$(cd "$state_dir/agents/$agent/home" && find . -mindepth 1 -maxdepth 1 | sed 's|^\./||' | sort | tr '\n' ' ')
      hosts=$("$CTL" --json net "$id" records 2>/dev/null | "$PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
print(", ".join(sorted({"%s:%s %s" % (r["host"], r["port"], r["verdict"]) for r in d["records"]})))')
      pid=$(json <("$CTL" --json status "$id") 'd["pid"]')
      "$CTL" destroy "$id" >/dev/null 2>&1
      # Left: processes of its process session, and its folder.
      leftovers () { { ps -eo sid= | awk -v s="$pid" '$1 == s'; ls -d "$state_dir/sessions/$id" 2>/dev/null; } | wc -l; }
      no_leftovers () { [[ "$(leftovers)" -eq 0 ]]; }
      wait_for 10 no_leftovers
      left=$(leftovers)
    fi
  fi
  echo "| $agent | $found | ${version:--} | $drawn | ${kept:--} | ${hosts:--} | $left |"
done
