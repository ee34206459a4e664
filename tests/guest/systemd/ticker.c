/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ticker: a task whose progress a guest test can read, inside the systemd
 * guest (checks.sh).
 *
 *   ticker [-g CGROUP_DIR] [-c COMM] [-i MS] [-w US] [-n TICKS] FILE
 *
 * Moves itself into CGROUP_DIR (writes its pid to cgroup.procs), renames
 * itself COMM (prctl PR_SET_NAME: test-fail.bpf.c reacts to the names
 * "scxd-fail" and "scxd-stall"), then forever: spins for US microseconds
 * of CPU (default 1000), bumps a counter and writes it to FILE, sleeps MS
 * milliseconds (default 20). Each tick is one wake-up and one run, so the
 * counter only grows while some scheduler runs the task. Prints nothing;
 * exits 0 after TICKS ticks (default: never), on a signal, or 1 if it
 * cannot set itself up.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static int join_cgroup(const char *dir)
{
	char path[4096], pid[32];
	int fd, n, r = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (write(fd, pid, n) != n)
		r = -errno;
	close(fd);
	return r;
}

static unsigned long long now_ns(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void spin_us(unsigned long us)
{
	unsigned long long end = now_ns(CLOCK_THREAD_CPUTIME_ID) + us * 1000ULL;

	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		;
}

int main(int argc, char **argv)
{
	const char *cgroup = NULL, *comm = NULL;
	unsigned long interval_ms = 20, work_us = 1000;
	unsigned long long count = 0, ticks = 0;
	struct timespec pause;
	char buf[32];
	int c, fd, r;

	while ((c = getopt(argc, argv, "g:c:i:w:n:")) >= 0) {
		switch (c) {
		case 'g': cgroup = optarg; break;
		case 'c': comm = optarg; break;
		case 'i': interval_ms = strtoul(optarg, NULL, 10); break;
		case 'w': work_us = strtoul(optarg, NULL, 10); break;
		case 'n': ticks = strtoull(optarg, NULL, 10); break;
		default: goto usage;
		}
	}
	if (optind + 1 != argc)
		goto usage;
	if (cgroup && (r = join_cgroup(cgroup)) < 0) {
		fprintf(stderr, "ticker: cannot join %s: %s\n", cgroup, strerror(-r));
		return 1;
	}
	if (comm && prctl(PR_SET_NAME, comm) < 0) {
		fprintf(stderr, "ticker: cannot rename to %s: %m\n", comm);
		return 1;
	}
	fd = open(argv[optind], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "ticker: %s: %m\n", argv[optind]);
		return 1;
	}
	pause = (struct timespec){ interval_ms / 1000, (interval_ms % 1000) * 1000000 };
	for (;;) {
		int n;

		spin_us(work_us);
		n = snprintf(buf, sizeof(buf), "%llu\n", ++count);
		if (pwrite(fd, buf, n, 0) != n)
			return 1;
		if (count == ticks)
			return 0;
		nanosleep(&pause, NULL);
	}
usage:
	fprintf(stderr, "usage: ticker [-g CGROUP_DIR] [-c COMM] [-i MS] [-w US] [-n TICKS] FILE\n");
	return 2;
}
