/* paddock-review.c — placeholder until its owner lands it
 *
 * Copyright 2026 The Paddock authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "config.h"

typedef int paddock_review_placeholder;
