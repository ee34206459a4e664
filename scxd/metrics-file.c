// SPDX-License-Identifier: GPL-2.0
/*
 * The metrics file for prometheus-node-exporter's textfile collector:
 * <dir>/scxd.prom (default dir /var/lib/prometheus/node-exporter, Debian's
 * --collector.textfile.directory), the text of `scxdctl metrics`
 * (metrics.h), replaced atomically (the collector never reads half a
 * file). Written a second after a reconcile when it changed, and every
 * --metrics-interval seconds whatever happened, so that its mtime
 * (node_textfile_mtime_seconds) says scxd is alive. Only if the directory
 * exists when scxd starts: no node-exporter, no file and no timer.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon.h"
#include "file.h"
#include "log.h"
#include "metrics.h"
#include "util.h"

#define METRICS_FILE "scxd.prom"
#define METRICS_SOON_USEC (1 * 1000000ULL)

static int metrics_write(struct daemon *d)
{
	_cleanup_free_ char *text = NULL;
	json_t *status = NULL;
	int r;

	r = status_json(d, &status);
	if (r >= 0) {
		r = metrics_format(status, &text);
		json_decref(status);
	}
	if (r < 0)
		return r;
	/* unchanged and not yet due for the period: leave the file as it is */
	if (d->metrics_last && streq(d->metrics_last, text) &&
	    now_usec() < d->metrics_written_at + d->metrics_usec)
		return 0;
	r = file_replace(d->metrics_dir, METRICS_FILE, text, 0644);
	if (r < 0)
		return r;
	free(d->metrics_last);
	d->metrics_last = TAKE_PTR(text);
	d->metrics_written_at = now_usec();
	return 1;
}

static int on_metrics_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;
	int r = metrics_write(d);
	uint64_t next;

	if (r < 0 && !d->metrics_error_logged) {
		log_warning(r, ABOUT(.file = d->metrics_dir),
			    "cannot write %s/%s: %s%s; trying again every %" PRIu64 " s, saying nothing more until it works",
			    d->metrics_dir, METRICS_FILE, strerror(-r),
			    r == -EACCES ? " (scxd runs as root without CAP_DAC_OVERRIDE: the directory must be writable by root itself)" : "",
			    d->metrics_usec / 1000000);
		d->metrics_error_logged = true;
	} else if (r >= 0 && d->metrics_error_logged) {
		log_info(ABOUT(.file = d->metrics_dir), "%s/%s written again", d->metrics_dir, METRICS_FILE);
		d->metrics_error_logged = false;
	}
	/* the period counts from the last write, not from this look */
	next = d->metrics_written_at + d->metrics_usec;
	if (next <= now_usec())
		next = now_usec() + d->metrics_usec;
	sd_event_source_set_time(s, next);
	sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	return 0;
}

int metrics_file_init(struct daemon *d)
{
	struct stat st;
	int r;

	if (!d->metrics_dir || !*d->metrics_dir)
		return 0;
	if (stat(d->metrics_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		log_debug(ABOUT(.file = d->metrics_dir), "%s: no such directory: no metrics file (%s)",
			  d->metrics_dir, METRICS_FILE);
		return 0;
	}
	r = sd_event_add_time(d->event, &d->metrics_timer, CLOCK_MONOTONIC,
			      now_usec() + METRICS_SOON_USEC, METRICS_SOON_USEC / 10,
			      on_metrics_timer, d);
	if (r < 0)
		return log_error(r, ABOUT(.file = d->metrics_dir), "cannot set up the metrics timer: %s",
				 strerror(-r));
	log_info(ABOUT(.file = d->metrics_dir),
		 "writing metrics to %s/%s on change and every %" PRIu64 " s (node-exporter's textfile collector)",
		 d->metrics_dir, METRICS_FILE, d->metrics_usec / 1000000);
	return 0;
}

void metrics_file_changed(struct daemon *d)
{
	uint64_t due, soon = now_usec() + METRICS_SOON_USEC;

	if (!d->metrics_timer)
		return;
	if (sd_event_source_get_time(d->metrics_timer, &due) >= 0 && due <= soon)
		return;
	sd_event_source_set_time(d->metrics_timer, soon);
	sd_event_source_set_enabled(d->metrics_timer, SD_EVENT_ONESHOT);
}
