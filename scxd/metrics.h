/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * scxd's status (the JSON of `scxdctl --json status`,
 * conf/status.schema.json) in the Prometheus text exposition format
 * (version 0.0.4), for `scxdctl metrics` and the node-exporter textfile
 * scxd writes (scxd.8, METRICS). Pure: status in, text out.
 *
 *   scxd_info{version,kernel_api} 1
 *   scxd_policy_entries, scxd_last_reload_rejected      gauges
 *   scxd_<counter>_total                                the daemon's counters
 *   scxd_scheduler_state{cgroup,scheduler,state} 1      one per cgroup scxd knows
 *   scxd_scheduler_backoff_failures{cgroup,scheduler}   failures in a row
 *   scxd_scheduler_last_exit{cgroup,scheduler,kind,code} the exit's time (s)
 *   scxd_scheduler_caps_cpus{cgroup,scheduler,cap}      CPUs (cids) per capability
 *   scxd_scheduler_rescues_total{cgroup,scheduler}      SCX_EV_SUB_RESCUE
 *   scxd_scheduler_denied_total{cgroup,scheduler,cap}   SCX_EV_SUB_*_DENIED
 *   scxd_scheduler_events_total{cgroup,scheduler,event} every SCX_EV_* the
 *                                                       kernel counts, event
 *                                                       lowercase, no SCX_EV_
 *
 * A cgroup's bytes go into its label escaped as on a terminal (escape.h),
 * then as the format asks (\\, \", \n).
 */

#include <jansson.h>

/* The text (allocated) in *ret; 0 or -ENOMEM. */
int metrics_format(const json_t *status, char **ret);
