// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the policy parser and validator: any bytes, as if
 * they were a policy file, against the in-memory catalog the host tests
 * use. Valid policies also go through matching and the desired state so
 * that the pattern code is exercised with what the parser let through.
 */

#include <stdint.h>
#include <stdlib.h>

#include "../test/fake-catalog.h"
#include "desired.h"
#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const cgroups[] = {
		"/", "/a", "/a/b", "/workload/x.scope", "/machine.slice/vm1.scope",
		"/t/a/b/c/d",
	};
	struct desired_opts opts = { .api = KERNEL_API_CPU };
	struct diag_list diags = {};
	struct desired_result r;
	struct policy *p = NULL;

	if (policy_parse("fuzz.json", (const char *)data, size, &fake_catalog, &diags, &p) == 0) {
		if (desired_build(p, cgroups, ELEMENTSOF(cgroups), &opts, &r) == 0)
			desired_result_done(&r);
		desired_check_kernel(p, KERNEL_API_ROOT_ONLY, &diags);
		policy_free(p);
	}
	diag_list_done(&diags);
	return 0;
}
