#!/bin/sh
# help2man.sh — one man page from a built program's --help and --version
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
#   help2man.sh HELP2MAN PROGRAM SECTION INCLUDE OUTPUT name TEXT
#   help2man.sh HELP2MAN PROGRAM SECTION INCLUDE OUTPUT command COMMAND
#
# The page's text is the program's own --help, so the two cannot drift;
# INCLUDE adds what --help has no room for (SEE ALSO, FILES...). The first
# form is PROGRAM's page, TEXT its one-line description. The second is
# paddockctl-COMMAND's: `PROGRAM COMMAND --help`, described by the summary
# that `PROGRAM --help` lists for COMMAND.
set -eu

help2man=$1 program=$2 section=$3 include=$4 output=$5 kind=$6 what=$7

# The build's environment must not leak into the page: English, UTF-8 (for
# GOption's "…"), no leak report of a sanitizer build at exit.
unset LANGUAGE PADDOCK_LOCALEDIR
export LC_ALL=C.UTF-8
export ASAN_OPTIONS=detect_leaks=0

base=$(basename "$program")
version=$("$program" --version)

# GOption prints "Usage:" alone, the line under it indented; help2man makes
# a SYNOPSIS of "Usage: LINE" only. help2man runs this stand-in, which
# joins the two.
tmpdir=$(mktemp -d)
trap 'rm -rf "$tmpdir"' EXIT
wrapper="$tmpdir/$base"
cat >"$wrapper" <<WRAPPER
#!/bin/sh
"$program" "\$@" | awk '
    joining { sub(/^ +/, ""); print "Usage: " \$0; joining = 0; next }
    /^Usage:\$/ { joining = 1; next }
    { print }'
WRAPPER
chmod +x "$wrapper"

if [ "$kind" = name ]; then
    "$help2man" --no-info --no-discard-stderr --locale=C.UTF-8 --section="$section" \
        --name="$what" --include="$include" --output="$output" "$wrapper"
    exit
fi

command=$what
name=$("$program" --help | awk -v c="$command" '
    /^Commands:/ { table = 1; next }
    table && $1 == c { $1 = ""; sub(/^ +/, ""); print; exit }')
if [ -z "$name" ]; then
    echo "help2man.sh: “$base --help” lists no command “$command”" >&2
    exit 1
fi

"$help2man" --no-info --no-discard-stderr --locale=C.UTF-8 --section="$section" \
    --name="$name" --include="$include" --output="$output" \
    --help-option="$command --help" \
    --version-string="$base-$command ${version##* }" "$wrapper"
