// SPDX-License-Identifier: MIT
/*
 * kmsg_seen_or_warned() (lib/kms_util.c) on made-up kernel logs. The guest
 * cannot be given them: a WARNING written to its /dev/kmsg would fail its
 * kernel-log verdict. Each case is fed one record per read, as /dev/kmsg
 * gives them, through a SOCK_SEQPACKET pair in place of /dev/kmsg. TAP.
 *
 * The traces follow one upstream's vkms vblank WARN logged by the debug
 * guest (6.12, KASAN), cut to the lines that matter; each line is written
 * with the prefix ("level,seq,usec,flags;") /dev/kmsg puts on a record.
 */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kms_util.h"
#include "tap.h"

#define UPSTREAM_HEAD \
	"------------[ cut here ]------------\n" \
	"WARNING: CPU: 0 PID: 365 at drivers/gpu/drm/vkms/vkms_crtc.c:102 " \
	  "vkms_get_vblank_timestamp+0x116/0x150 [vkms]\n" \
	"Modules linked in: vkms drm_shmem_helper drm_kms_helper\n" \
	"Call Trace:\n" \
	" <TASK>\n" \
	" drm_crtc_get_last_vbltimestamp+0xfe/0x125\n"
#define UPSTREAM_CALLER " drm_crtc_next_vblank_start+0xf1/0x1c3\n"
#define UPSTREAM_TAIL \
	" drm_atomic_helper_wait_for_fences+0x18e/0x463 [drm_kms_helper]\n" \
	" drm_atomic_helper_commit+0x17d/0x1f5 [drm_kms_helper]\n" \
	" </TASK>\n" \
	"---[ end trace 0000000000000000 ]---\n"
#define SECOND_UPSTREAM_WARN \
	"WARNING: CPU: 1 PID: 9 at drivers/gpu/drm/vkms/vkms_crtc.c:102 " \
	  "vkms_get_vblank_timestamp+0x116/0x150 [vkms]\n"
#define OTHER_WARN \
	"WARNING: CPU: 1 PID: 8 at drivers/gpu/drm/drm_vblank.c:1206 drm_vblank_put+0x1a/0x30\n"
#define RMFB_FAILED "[drm] atomic remove_fb failed with -12\n"

/* @log: the records, one per line. */
struct kmsg_case {
	const char *name;
	const char *looked_for;	/* kmsg_seen_or_warned()'s argument */
	bool want;
	const char *log;
};

static const struct kmsg_case cases[] = {
	{ "nothing-logged", NULL, false, "" },
	{ "upstream-warn-from-its-caller-excused", NULL, false,
	  UPSTREAM_HEAD UPSTREAM_CALLER UPSTREAM_TAIL },
	{ "upstream-warn-from-another-caller", NULL, true,
	  UPSTREAM_HEAD " drm_vblank_enable+0x90/0x200\n" UPSTREAM_TAIL },
	{ "upstream-warn-caller-only-unreliable", NULL, true,
	  UPSTREAM_HEAD " ? drm_crtc_next_vblank_start+0xf1/0x1c3\n" UPSTREAM_TAIL },
	{ "other-warning", NULL, true, OTHER_WARN },
	{ "other-warning-inside-upstream-trace", NULL, true,
	  UPSTREAM_HEAD OTHER_WARN UPSTREAM_CALLER UPSTREAM_TAIL },
	{ "second-upstream-warn-inside-first", NULL, true,
	  UPSTREAM_HEAD SECOND_UPSTREAM_WARN UPSTREAM_CALLER UPSTREAM_TAIL },
	{ "upstream-trace-cut-short", NULL, true, UPSTREAM_HEAD UPSTREAM_CALLER },
	{ "string-looked-for", "atomic remove_fb failed", true, RMFB_FAILED },
	{ "string-looked-for-inside-upstream-trace", "atomic remove_fb failed", true,
	  UPSTREAM_HEAD RMFB_FAILED UPSTREAM_CALLER UPSTREAM_TAIL },
	{ "string-absent-upstream-warn-excused", "atomic remove_fb failed", false,
	  UPSTREAM_HEAD UPSTREAM_CALLER UPSTREAM_TAIL },
	/* Every report of lib/kernel_log_policy.def, not WARNINGs alone. */
	{ "kasan-report", NULL, true,
	  "BUG: KASAN: slab-use-after-free in vkms_compose_row+0x10/0x80\n" },
	{ "lockdep-report-inside-upstream-trace", NULL, true,
	  UPSTREAM_HEAD "inconsistent lock state\n" UPSTREAM_CALLER UPSTREAM_TAIL },
	{ "kmemleak-fallback-not-a-report", NULL, false,
	  "kmemleak: Cannot allocate a scan area, scanning the full object\n" },
	{ "kmemleak-leak-report", NULL, true,
	  "kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)\n" },
};

/* Runs one case: its records, then kmsg_seen_or_warned(); -errno on setup. */
static int run_case(const struct kmsg_case *c, bool *seen)
{
	const char *rec = c->log;
	int sv[2], ret = 0;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	while (*rec && !ret) {
		int len = (int)strcspn(rec, "\n") + 1;
		char record[256];
		int n = snprintf(record, sizeof(record), "6,1,0,-;%.*s", len, rec);

		if (n >= (int)sizeof(record) || write(sv[1], record, n) != n)
			ret = -EIO;
		rec += len;
	}
	if (!ret) {
		fcntl(sv[0], F_SETFL, O_NONBLOCK);
		kmsg_read_from(sv[0]);
		*seen = kmsg_seen_or_warned(c->looked_for);
	}
	close(sv[0]);
	close(sv[1]);
	return ret;
}

static const char *seen_name(bool seen)
{
	return seen ? "seen" : "not seen";
}

int main(void)
{
	tap_start();
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct kmsg_case *c = &cases[i];
		bool seen = false;
		int ret = run_case(c, &seen);

		tap_okf(!ret && seen == c->want, c->name, "%s, wanted %s; set-up %s",
			seen_name(seen), seen_name(c->want), ret ? strerror(-ret) : "done");
	}
	return tap_done();
}
