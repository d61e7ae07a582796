#!/bin/bash
# install-deps.sh — install the Debian packages of tools/debian-packages.txt that are missing
#
#   install-deps.sh [LIST…]   the packages of each LIST instead (make deb
#                             passes debian-packages.txt and
#                             debian-packages-deb.txt)
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later

set -euo pipefail

lists=("$@")
[ "${#lists[@]}" -gt 0 ] || lists=("$(dirname "$0")/debian-packages.txt")
mapfile -t wanted < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "${lists[@]}")

missing=()
for pkg in "${wanted[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$pkg")
done

[ "${#missing[@]}" -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
    echo "install-deps: apt-get not found; install these by hand: ${missing[*]}" >&2
    exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
        echo "install-deps: missing packages and no sudo; as root run: apt-get install ${missing[*]}" >&2
        exit 1
    fi
    sudo=(sudo)
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${missing[@]}"
