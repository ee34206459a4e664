/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * What the kernel says about a scheduler instance, as text in, values out
 * (pure; actual.c and apply.c read the files and maps):
 *
 * - its sysfs "events" file: "SCX_EV_NAME VALUE" lines. Besides the whole
 *   set, status shows the CPU delegation ones by name: SCX_EV_SUB_RESCUE
 *   (runs the kernel gave a child its parent did not serve) and
 *   SCX_EV_SUB_{ENQ,KICK,PREEMPT,CPUPERF}_DENIED (what the child tried on
 *   CPUs it holds no capability for);
 * - its sysfs "caps" file: one line per capability, "NAME CPULIST" with
 *   the CPU list in the kernel's "%*pbl" form ("0-3,5", empty for none);
 *   upstream kernels (7.2 on) write "NAME: CIDLIST", the same form over
 *   cids, which are the CPUs' ids in the cid-form API;
 * - its exit info (struct scx_exit_info as UEI_RECORD() copies it): the
 *   kind, as a stable name for programs and a phrase for people.
 *
 * A kernel without CPU delegation has no caps file and none of those
 * events: the members are then left out, not shown as zero.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* enum scx_exit_kind values scxd acts on */
#define SCXD_EXIT_PARENT 68		/* SCX_EXIT_PARENT: disabled because its parent went */
#define SCXD_EXIT_PARENT_KILL 69	/* SCX_EXIT_PARENT_KILL: its parent ended it, scx_bpf_sub_kill() */

/* The UEI layout: kind, exit_code, reason[128], msg[1024]. */
#define SCHED_EXIT_REASON_LEN 128
#define SCHED_EXIT_MSG_LEN 1024

struct sched_exit {
	int kind;		/* 0: none recorded */
	int64_t code;		/* exit_code */
	char reason[SCHED_EXIT_REASON_LEN];
	char msg[SCHED_EXIT_MSG_LEN];
};

/* "parent-kill", "error-stall", ...; NULL for a kind scxd does not know. */
const char *sched_exit_kind_id(int kind);
/* "killed by its parent scheduler", ...; NULL likewise. */
const char *sched_exit_kind_text(int kind);
/*
 * Fill *e from a UEI image of at least 16 + 128 + 1024 bytes; the strings
 * are terminated whatever the image holds.
 */
void sched_exit_from_uei(const unsigned char *uei, struct sched_exit *e);
/* "<text>, kind N, code C: reason (msg)" for logs; NULL on -ENOMEM. */
char *sched_exit_format(const struct sched_exit *e);
/* { "kind": id, "code": N, "exit_code": C, "reason": ..., "message": ... } */
json_t *sched_exit_json(const struct sched_exit *e);

/* The capabilities of the kernel's enum scx_cap_flags, in its order. */
enum sched_cap {
	SCHED_CAP_ENQ_IMMED,
	SCHED_CAP_ENQ,
	SCHED_CAP_PREEMPT,
	SCHED_CAP_PERF,
	SCHED_NR_CAPS,
};

/* "enq_immed", "enq", "preempt", "perf": the caps file's names. */
extern const char *const sched_cap_names[SCHED_NR_CAPS];

/* CPU numbers this large are refused: no kernel has that many (NR_CPUS). */
#define SCHED_CPU_MAX 65535

struct cpu_list {
	uint32_t *cpus;		/* ascending, no duplicates */
	size_t n;
};

/*
 * Parse a "%*pbl" list: comma-separated CPUs and ascending ranges A-B,
 * surrounding blanks ignored, "" for none. On -EINVAL *error (allocated)
 * says where and why.
 */
int cpu_list_parse(const char *text, struct cpu_list *ret, char **error);
/* The same list in that form again ("0-3,5"; "" for none). */
char *cpu_list_format(const struct cpu_list *l);
void cpu_list_done(struct cpu_list *l);

struct sched_caps {
	bool present[SCHED_NR_CAPS];	/* the file has a line for it */
	struct cpu_list cpus[SCHED_NR_CAPS];
};

/*
 * Parse a caps file. Lines naming capabilities scxd does not know are
 * skipped (a newer kernel may add some); a known one twice, a line
 * without a name or a bad CPU list is -EINVAL with *error saying which
 * line and why.
 */
int sched_caps_parse(const char *text, struct sched_caps *ret, char **error);
void sched_caps_done(struct sched_caps *c);

/* The value of one event in an events file: 0, or -ENOENT if it has none. */
int sched_events_get(const char *events, const char *name, uint64_t *ret);

/* "NAME VALUE" lines of an events file → { NAME: VALUE }; others skipped. */
json_t *sched_events_json(const char *events);

/*
 * The status members a running instance contributes, added to node:
 * "events", and when the kernel has them "rescues", "denied" { enq, kick,
 * preempt, cpuperf } and "caps" { NAME: [cpu, ...] } (or "caps_error"
 * when the caps file does not parse). events and caps may be NULL (no
 * such file). Returns 0 or -ENOMEM.
 */
int sched_stats_add_json(json_t *node, const char *events, const char *caps);
