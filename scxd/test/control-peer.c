// SPDX-License-Identifier: GPL-2.0
/*
 * Misbehaving and raw control-socket peers for test/control.sh:
 *   control-peer idle SOCKET N SECONDS   open N connections, send nothing,
 *                                        keep them SECONDS; prints "open N"
 *                                        once they are connected
 *   control-peer partial SOCKET N BYTES SECONDS
 *                                        open N connections, send BYTES of an
 *                                        unfinished request on each, keep them
 *                                        SECONDS, close; prints "sent N"
 *   control-peer raw SOCKET TEXT         send TEXT as the request, print the
 *                                        reply as it came
 *   control-peer notify PATH SECONDS     be systemd's NOTIFY_SOCKET at PATH:
 *                                        print each datagram on one line
 *                                        ('\n' as '|') for SECONDS
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int idle(const char *path, int n, int seconds)
{
	for (int i = 0; i < n; i++)
		if (connect_to(path) < 0) {
			fprintf(stderr, "control-peer: %s: %s\n", path, strerror(errno));
			return 1;
		}
	printf("open %d\n", n);
	fflush(stdout);
	sleep(seconds);
	return 0;
}

static int partial(const char *path, int n, size_t bytes, int seconds)
{
	char *junk = malloc(bytes);
	int *fds = calloc(n, sizeof(int));

	if (!junk || !fds)
		return 1;
	memset(junk, ' ', bytes);
	for (int i = 0; i < n; i++) {
		size_t done = 0;

		fds[i] = connect_to(path);
		if (fds[i] < 0) {
			fprintf(stderr, "control-peer: %s: %s\n", path, strerror(errno));
			return 1;
		}
		while (done < bytes) {
			ssize_t k = send(fds[i], junk + done, bytes - done, MSG_NOSIGNAL);

			if (k <= 0)
				break;
			done += k;
		}
	}
	printf("sent %d\n", n);
	fflush(stdout);
	sleep(seconds);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	free(junk);
	return 0;
}

static int raw(const char *path, const char *text)
{
	char buf[65536];
	size_t len = 0;
	ssize_t n;
	int fd = connect_to(path);

	if (fd < 0) {
		fprintf(stderr, "control-peer: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (send(fd, text, strlen(text), MSG_NOSIGNAL) < 0)
		fprintf(stderr, "control-peer: send: %s\n", strerror(errno));
	shutdown(fd, SHUT_WR);
	while ((n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0)) > 0)
		len += n;
	buf[len] = '\0';
	printf("%s\n", buf);
	return n < 0;
}

static int notify(const char *path, int seconds)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = seconds };
	char buf[4096];
	ssize_t n;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || strlen(path) >= sizeof(sa.sun_path))
		return 1;
	strcpy(sa.sun_path, path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "control-peer: %s: %s\n", path, strerror(errno));
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while ((n = recv(fd, buf, sizeof(buf) - 1, 0)) >= 0) {
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\n')
				buf[i] = '|';
		buf[n] = '\0';
		printf("%s\n", buf);
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "idle") == 0)
		return idle(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 6 && strcmp(argv[1], "partial") == 0)
		return partial(argv[2], atoi(argv[3]), strtoul(argv[4], NULL, 10), atoi(argv[5]));
	if (argc == 4 && strcmp(argv[1], "raw") == 0)
		return raw(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "notify") == 0)
		return notify(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: control-peer idle SOCKET N SECONDS | partial SOCKET N BYTES SECONDS | raw SOCKET TEXT | notify PATH SECONDS\n");
	return 2;
}
