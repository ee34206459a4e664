/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scxd-workload -d SECONDS -g SPEC [-g SPEC]...
 *
 * SPEC: kind=spin|sleep|pingpong,n=N[,nice=N][,cpu=N][,cgroup=DIR]
 *       [,work_us=N][,sleep_us=N][,name=LABEL]
 * Prints one "task ..." line per task, one "group ..." line per group and
 * a final "total ops=N ops_per_s=X wall_s=S" (see workload.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

#define MAX_GROUPS 32

int main(int argc, char **argv)
{
	struct wl_group groups[MAX_GROUPS];
	struct wl_result res;
	unsigned int n = 0;
	double duration = 2.0;
	int c, r;

	while ((c = getopt(argc, argv, "d:g:h")) != -1) {
		switch (c) {
		case 'd':
			duration = atof(optarg);
			break;
		case 'g':
			if (n == MAX_GROUPS || wl_group_parse(optarg, &groups[n]) < 0) {
				fprintf(stderr, "scxd-workload: bad group spec (or more than %d)\n",
					MAX_GROUPS);
				return 1;
			}
			n++;
			break;
		default:
			fprintf(stderr, "usage: scxd-workload -d SECONDS -g SPEC...\n");
			return c == 'h' ? 0 : 1;
		}
	}
	if (!n || duration <= 0) {
		fprintf(stderr, "scxd-workload: need -g SPEC and a positive -d\n");
		return 1;
	}
	r = wl_run(groups, n, duration, &res);
	if (r < 0) {
		fprintf(stderr, "scxd-workload: %s\n", strerror(-r));
		return 1;
	}
	wl_report(stdout, groups, n, &res);
	for (unsigned int i = 0; i < res.n_tasks; i++)
		if (res.tasks[i].failed) {
			fprintf(stderr, "scxd-workload: task %u could not be set up (cgroup/nice/cpu)\n", i);
			wl_result_free(&res);
			return 1;
		}
	wl_result_free(&res);
	return 0;
}
