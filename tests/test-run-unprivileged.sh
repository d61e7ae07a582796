#!/bin/bash
# test-run-unprivileged.sh — the unprivileged twin runs from a tree inside a private folder, as TAP
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Several distributions give a home mode 0700 or 0750, so a clone there is
# out of reach of the unprivileged test user, and every "-unprivileged"
# suite would skip. tests/run-unprivileged.sh must run them anyway. This
# plays such a machine: a tree under a folder of mode 0700, a probe program
# in its build folder and a data file in its source folder, run through the
# script exactly as tests/meson.build runs a suite. Checked: the probe ran
# (no skip) as the test user, read the tree's data, could not see what
# else the private folder holds, and the folder's mode and the machine's
# mount table are the same afterwards.
#
# Runs as root only (run-unprivileged.sh drops from root).

set -uo pipefail
source "$(dirname "$0")/tap-lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root: run-unprivileged.sh only drops from root"
command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"

script=$(readlink -f "$(dirname "$0")/run-unprivileged.sh")
user=${PADDOCK_TEST_USER:-paddock-test}

private=$(mktemp -d /tmp/paddock-private.XXXXXX)
trap 'rm -rf "$private"' EXIT
chmod 0700 "$private"
tree=$private/home/clone
mkdir -p "$tree/build/tests" "$tree/tests"
chmod 0755 "$private/home" "$tree" "$tree/build" "$tree/build/tests" "$tree/tests"
echo "test data" >"$tree/tests/data.txt"
chmod 0644 "$tree/tests/data.txt"
echo "not for the test user" >"$private/secret"
cat >"$tree/build/tests/probe" <<PROBE
#!/bin/sh
echo "1..3"
echo "ok 1 - ran as \$(id -un)"
if [ "\$(cat "$tree/tests/data.txt")" = "test data" ]; then echo "ok 2 - read the data"; else echo "not ok 2 - read the data"; fi
if [ -e "$private/secret" ]; then echo "not ok 3 - saw the secret"; else echo "ok 3 - the secret is not shown"; fi
PROBE
chmod 0755 "$tree/build/tests/probe"

mounts_before=$(findmnt -rn -o TARGET | sort | md5sum)
out=$(PADDOCK_SOURCE_ROOT=$tree PADDOCK_BUILD_ROOT=$tree/build \
      "$script" "$tree/build/tests/probe" --tap 2>&1)
status=$?
mounts_after=$(findmnt -rn -o TARGET | sort | md5sum)

check "run-unprivileged.sh exits 0 (status $status)" test "$status" -eq 0
if grep -q '# SKIP' <<<"$out"; then
  not_ok "the probe ran instead of skipping" "$out"
else
  ok "the probe ran instead of skipping"
fi
check "the probe ran as $user" grep -qx "ok 1 - ran as $user" <<<"$out"
check "the probe read the tree's data" grep -qx "ok 2 - read the data" <<<"$out"
check "the private folder's other contents stay hidden" grep -qx "ok 3 - the secret is not shown" <<<"$out"
check "the private folder is still mode 0700" test "$(stat -c %a "$private")" = 700
check "no mount is left on the machine" test "$mounts_before" = "$mounts_after"

echo "1..$n"
[ "$failures" -eq 0 ]
