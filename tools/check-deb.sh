#!/bin/bash
# check-deb.sh DEB — what a packager and a user would check of the built package:
# every file the install must carry is in it, the programs in it run from the
# unpacked tree, the D-Bus activation file and the systemd unit point at a
# program the package carries, and apt can install it here (its Depends
# resolve; simulated, so the machine is not changed).
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
set -euo pipefail

deb=${1:?usage: check-deb.sh PACKAGE.deb}
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg-deb -x "$deb" "$root"

failed=0
need () { if [[ ! -e "$root/$1" ]]; then echo "check-deb: missing from the package: /$1"; failed=1; fi; }

for f in usr/bin/paddock usr/bin/paddockctl \
         usr/libexec/paddockd usr/libexec/paddock-sandbox usr/libexec/paddock-keeper \
         usr/share/dbus-1/services/org.paddock.Daemon.service \
         usr/lib/systemd/user/paddockd.service \
         usr/share/applications/org.paddock.Paddock.desktop \
         usr/share/metainfo/org.paddock.Paddock.metainfo.xml \
         usr/share/glib-2.0/schemas/org.paddock.Paddock.gschema.xml \
         usr/share/man/man1/paddock.1.gz usr/share/man/man1/paddockctl.1.gz \
         usr/share/man/man8/paddockd.8.gz \
         usr/share/bash-completion/completions/paddockctl \
         usr/share/zsh/vendor-completions/_paddockctl \
         usr/share/fish/vendor_completions.d/paddockctl.fish; do
  need "$f"
done
# One man page per paddockctl subcommand the program itself lists.
subcommands=$("$root/usr/bin/paddockctl" --help | awk '/^Commands:/ { t = 1; next } t && !NF { exit } t { print $1 }')
[[ -n "$subcommands" ]] || { echo "check-deb: the packaged paddockctl --help lists no commands"; failed=1; }
for sub in $subcommands; do
  need "usr/share/man/man1/paddockctl-$sub.1.gz"
done
compgen -G "$root/usr/share/locale/*/LC_MESSAGES/paddock.mo" >/dev/null ||
  { echo "check-deb: no translation catalogue in the package"; failed=1; }

# The activation file and the unit start a program that is in the package.
for unit in usr/share/dbus-1/services/org.paddock.Daemon.service usr/lib/systemd/user/paddockd.service; do
  [[ -e "$root/$unit" ]] || continue
  exec_path=$(sed -n 's/^Exec\(Start\)\?=\([^ ]*\).*/\2/p' "$root/$unit" | head -n 1)
  [[ -n "$exec_path" && -x "$root$exec_path" ]] ||
    { echo "check-deb: $unit starts '$exec_path', which the package does not carry"; failed=1; }
done

# The programs run from the unpacked tree (their libraries resolve).
for prog in usr/bin/paddockctl usr/libexec/paddockd usr/bin/paddock; do
  [[ -x "$root/$prog" ]] || continue
  if ! out=$("$root/$prog" --version 2>&1); then
    echo "check-deb: /$prog --version failed: $out"; failed=1
  fi
done

# apt resolves its dependencies on this machine (simulated: nothing installed).
if ! out=$(apt-get install --simulate -qq "$(realpath "$deb")" 2>&1); then
  echo "check-deb: apt cannot install the package here:"; echo "$out"; failed=1
fi

[[ $failed -eq 0 ]] && echo "check-deb: $(basename "$deb"): contents, programs, activation and dependencies checked"
exit $failed
