/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * MESSAGE_IDs of the journal entries an administrator may want to find or
 * alert on: `journalctl MESSAGE_ID=...`. Generated once with
 * `systemd-id128 new`; never change one. The explanations are in
 * systemd/scxd.catalog (journalctl -x shows them).
 */

#define SCXD_MESSAGE_ATTACHED		"611a8a21f5944fc0b7b691d3f6e51407"
#define SCXD_MESSAGE_DETACHED		"661e7be658d14c4f8fe1d118fb49d6f1"
#define SCXD_MESSAGE_SCHED_EXITED	"9a15828eb66f4bfb829304a050e7f335"
#define SCXD_MESSAGE_RELOAD_APPLIED	"15ac16a231264bfc923b9023248839d4"
#define SCXD_MESSAGE_RELOAD_REJECTED	"87d1002c7e2f49dea2baa33bd808e9e7"
#define SCXD_MESSAGE_PARENT_KILL	"16c5c1597cc448aca97a9ba0394dcdf1"
