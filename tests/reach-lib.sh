# reach-lib.sh — make the source and build trees reachable by the unprivileged test user; sourced
#
# Copyright 2026 The Paddock authors
# SPDX-License-Identifier: GPL-3.0-or-later
#
# A clone inside a private folder (a home of mode 0700 or 0750, the default
# on several distributions) is out of reach of the unprivileged test user.
# reach_trees makes it reachable in a mount namespace of the calling
# script's run alone: a tmpfs covers the outermost private folder above
# each tree and the tree is bound back at its own path, so every absolute
# path the build recorded still holds, nothing of the private folder but
# the tree is shown, and no permission of the user's own folders changes.
#
# reach_trees PROGRAM SCRIPT ARG…: called by root, with drop=(setpriv …)
# set to the command prefix that becomes the test user, and skip defined;
# the trees are PROGRAM's folder, $PADDOCK_SOURCE_ROOT and
# $PADDOCK_BUILD_ROOT. When one is out of reach it re-executes SCRIPT ARG…
# inside a new mount namespace and makes them reachable there.

reach_trees ()
{
    local program=$1 tree dir top fd
    shift
    local -a trees=()
    local -A handle=() covered=()

    for dir in "$(dirname "$(readlink -f "$program")")" "${PADDOCK_SOURCE_ROOT:-}" "${PADDOCK_BUILD_ROOT:-}"; do
        [ -n "$dir" ] && [ -d "$dir" ] && trees+=("$(readlink -f "$dir")")
    done
    # Outermost first, none twice, none inside another.
    mapfile -t trees < <(printf '%s\n' "${trees[@]}" | sort -u |
                         awk 'NR == 1 || index($0, last "/") != 1 { print; last = $0 }')

    _reach_unreachable "${trees[@]}" || return 0

    if [ -z "${PADDOCK_TEST_REACH_NS:-}" ]; then
        command -v unshare >/dev/null || skip "unshare (util-linux) is missing and a folder above the tree is private"
        exec unshare --mount --propagation private env PADDOCK_TEST_REACH_NS=1 "$@"
    fi
    # In this run's own mount namespace: keep a handle on each tree, cover
    # each private folder above them with an empty tmpfs, and bind the
    # trees back where they were.
    for tree in "${trees[@]}"; do
        exec {fd}<"$tree"
        handle[$tree]=$fd
    done
    for tree in "${trees[@]}"; do
        top=$(_reach_private_ancestor "$tree")
        [ -n "$top" ] || continue
        [ -n "${covered[$top]:-}" ] && continue
        mount -t tmpfs -o mode=0755,size=1m paddock-test-reach "$top"
        covered[$top]=1
    done
    for tree in "${trees[@]}"; do
        fd=${handle[$tree]}
        if [ ! -d "$tree" ]; then
            mkdir -p "$tree"
            # --no-canonicalize: the handle names the tree itself; its path
            # now leads into the tmpfs.
            mount --no-canonicalize --bind "/proc/self/fd/$fd" "$tree"
        fi
        exec {fd}<&-
    done
    unset PADDOCK_TEST_REACH_NS
    if _reach_unreachable "${trees[@]}"; then
        skip "the test user cannot reach ${trees[*]} even with the private folders above them covered"
    fi
}

# Whether the test user cannot traverse one of the trees given.
_reach_unreachable ()
{
    local tree
    for tree in "$@"; do
        "${drop[@]}" test -x "$tree" || return 0
    done
    return 1
}

# The outermost folder above $1 (never $1 itself) that the test user
# cannot traverse; nothing when every folder above it is open.
_reach_private_ancestor ()
{
    local path="" part
    local -a parts
    IFS=/ read -ra parts <<<"${1#/}"
    for part in "${parts[@]:0:${#parts[@]}-1}"; do
        path="$path/$part"
        if ! "${drop[@]}" test -x "$path"; then
            echo "$path"
            return
        fi
    done
}
