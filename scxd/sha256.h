/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * SHA-256 (FIPS 180-4), for naming pins after cgroup paths: a name any
 * user who can create a cgroup could steer must not collide on purpose.
 */

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32

void sha256(const void *data, size_t len, uint8_t out[SHA256_DIGEST_SIZE]);
