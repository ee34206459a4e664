// SPDX-License-Identifier: GPL-2.0
/*
 * scxctl: talk to scxd. status and reload go over the control socket
 * (root only); check validates a policy file locally, exactly as scxd
 * would, so it works without a running daemon.
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "control.h"
#include "strict.h"
#include "util.h"

#ifndef SCXD_SCHED_DIR
#define SCXD_SCHED_DIR "/usr/lib/scxd"
#endif

static void help(void)
{
	printf("Usage: scxctl [OPTIONS] COMMAND\n\n"
	       "  status              the cgroups, their schedulers and state, counters\n"
	       "  reload              make scxd reload its policy (rejected if invalid)\n"
	       "  check [FILE]        validate a policy file (default /etc/scxd/policy.json)\n\n"
	       "  -S --socket PATH    control socket (default %s)\n"
	       "  -s --sched-dir DIR  scheduler objects for check (default $SCXD_SCHED_DIR or %s)\n"
	       "     --no-strict-modes  check: accept files others can write\n"
	       "  -h --help\n", SCXD_CONTROL_SOCKET, SCXD_SCHED_DIR);
}

static int remote(const char *socket_path, const char *cmd)
{
	_cleanup_free_ char *reply = NULL;
	int ok = 0, r;

	r = control_request(socket_path, cmd, &reply, &ok);
	if (r < 0) {
		fprintf(stderr, "scxctl: %s: %s%s\n", socket_path, strerror(-r),
			r == -ENOENT || r == -ECONNREFUSED ? " (is scxd running?)" :
			r == -EACCES ? " (only root may control scxd)" : "");
		return 1;
	}
	fputs(reply, ok ? stdout : stderr);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "socket", required_argument, NULL, 'S' },
		{ "sched-dir", required_argument, NULL, 's' },
		{ "no-strict-modes", no_argument, NULL, 256 },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *socket_path = SCXD_CONTROL_SOCKET;
	const char *sched_dir = getenv("SCXD_SCHED_DIR") ?: SCXD_SCHED_DIR;
	const char *cmd;
	int c;

	while ((c = getopt_long(argc, argv, "S:s:h", options, NULL)) >= 0) {
		switch (c) {
		case 'S': socket_path = optarg; break;
		case 's': sched_dir = optarg; break;
		case 256: strict_modes = false; break;
		case 'h': help(); return 0;
		default: return 2;
		}
	}
	if (optind >= argc) {
		help();
		return 2;
	}
	cmd = argv[optind];
	if (streq(cmd, "status") || streq(cmd, "reload"))
		return remote(socket_path, cmd);
	if (streq(cmd, "check"))
		return scxd_check(optind + 1 < argc ? argv[optind + 1] : "/etc/scxd/policy.json",
				  sched_dir) < 0 ? 1 : 0;
	fprintf(stderr, "scxctl: unknown command \"%s\" (status, reload, check)\n", cmd);
	return 2;
}
