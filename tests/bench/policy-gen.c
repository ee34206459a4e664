// SPDX-License-Identifier: GPL-2.0
/*
 * policy-gen SHAPE N: prints a valid policy of a root and N entries in one
 * of the shapes of policy-shapes.h, for timing `scxd --check` on it
 * (tests/bench/policy-check).
 */

#include <stdio.h>
#include <stdlib.h>

#include "policy-shapes.h"

int main(int argc, char **argv)
{
	char *end = NULL;
	unsigned long n = argc == 3 ? strtoul(argv[2], &end, 10) : 0;

	if (argc != 3 || !policy_shape_known(argv[1]) || !end || *end || end == argv[2]) {
		fprintf(stderr, "usage: policy-gen SHAPE N\nshapes:");
		for (size_t k = 0; policy_shapes[k]; k++)
			fprintf(stderr, " %s", policy_shapes[k]);
		fprintf(stderr, "\n");
		return 2;
	}
	return policy_shape_write(stdout, argv[1], n) < 0 ? 1 : 0;
}
