/* paddock-compat.h — which implementation of each compat point is built
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Each Linux-only call outside the executor sits behind one small compat
 * point (daemon/compat/paddock-compat-*.c): a Linux implementation and a
 * portable fallback. A fallback never does something weaker in silence:
 * it fails with errno ENOSYS (and a GError where the point takes one),
 * and its caller reports the feature as unsupported or unenforced.
 * PADDOCK_COMPAT_PORTABLE (defined by tests/test-compat.c's build) selects
 * the fallbacks on Linux too, so that they are compiled and tested here.
 */

#pragma once

#if defined(__linux__) && !defined(PADDOCK_COMPAT_PORTABLE)
#define PADDOCK_COMPAT_LINUX 1
#else
#define PADDOCK_COMPAT_LINUX 0
#endif
