// SPDX-License-Identifier: MIT
/*
 * kms_crc_reopen: the vkms CRC source keeps delivering while readers come
 * and go.
 *
 * Opening a CRTC's crc/data file enables the CRC source, and the release of
 * the file disables it. The release marks the file closed before it
 * disables the source, so another open can enable the source in between.
 * A driver that remembers in an unlocked flag whether the source holds its
 * composer reference takes nothing for that open, and the late disable
 * drops the only reference. Two processes open, read and close the file as
 * fast as they can, retrying at once when the other one has it, so that
 * opens land in that window. Every open must succeed or get EBUSY, and the
 * references must balance: a reader after them still gets a CRC, and the
 * kernel log (checked by the verdict) has no warning.
 *
 * A reader whose open lands in that window gets no CRC even with a count:
 * the old release then frees the new reader's entries (crtc_crc_release()
 * cleans up after disabling the source). Such readers are reported, not
 * failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kms_scene.h"
#include "kms_util.h"
#include "tap.h"

#define WORKERS 2
#define OPENS 100		/* successful opens per worker */
/*
 * A worker retries at once while the other holds the file for a frame, so
 * the number of refused opens follows the speed of the machine: the bound
 * is in time, far above the few seconds (a frame per open) they need.
 */
#define WORKER_DEADLINE_S 120
/* A frame is 1/SCENE_REFRESH s; a loaded TCG guest can be much slower. */
#define CRC_TIMEOUT_MS 1500

struct tally {
	int opened;	/* opens that succeeded */
	int busy;	/* opens refused because the other worker had the file */
	int missed;	/* successful opens that got no CRC in time */
	int failed;	/* opens that failed for another reason */
};

/* Opens the data file, waits for one CRC entry, closes. */
static void one_round(const char *data, struct tally *t)
{
	struct pollfd pfd = { .events = POLLIN };
	char line[64];

	pfd.fd = open(data, O_RDONLY | O_CLOEXEC);
	if (pfd.fd < 0) {
		if (errno == EBUSY)
			t->busy++;
		else
			t->failed++;
		return;
	}
	t->opened++;
	if (poll(&pfd, 1, CRC_TIMEOUT_MS) != 1 || read(pfd.fd, line, sizeof(line)) <= 0)
		t->missed++;
	close(pfd.fd);
}

static pid_t start_worker(const char *data, int out)
{
	pid_t pid = fork();
	struct tally t = { };
	double deadline;

	if (pid)
		return pid;
	deadline = kms_now_s() + WORKER_DEADLINE_S;
	while (t.opened < OPENS && !t.failed && kms_now_s() < deadline)
		one_round(data, &t);
	_exit(write(out, &t, sizeof(t)) == sizeof(t) ? 0 : 1);
}

static struct rig rig;

static void setup(void)
{
	rig_open_or_exit(&rig);
}

static void teardown(void)
{
	rig_close(&rig);
}

/* Both workers on @data at once; their tallies summed into @sum. */
static int run_workers(const char *data, struct tally *sum)
{
	pid_t pid[WORKERS];
	struct tally t;
	int pipefd[2];

	if (pipe(pipefd))
		return -errno;
	for (int i = 0; i < WORKERS; i++)
		pid[i] = start_worker(data, pipefd[1]);
	close(pipefd[1]);
	for (int i = 0; i < WORKERS; i++) {
		if (read(pipefd[0], &t, sizeof(t)) == sizeof(t)) {
			sum->opened += t.opened;
			sum->busy += t.busy;
			sum->missed += t.missed;
			sum->failed += t.failed;
		}
		if (pid[i] > 0)
			waitpid(pid[i], NULL, 0);
	}
	close(pipefd[0]);
	return 0;
}

static void test_reopen(char **argv)
{
	struct tally sum = { };
	char dir[128], path[160];
	int ret;

	(void)argv;
	snprintf(dir, sizeof(dir), "%s/crtc-%u/crc", rig.debugfs, rig.kms.crtc_index);
	snprintf(path, sizeof(path), "%s/control", dir);
	ret = kms_write_file(path, "auto");
	tap_okf(ret == 0, "crc-source-auto", "writing auto to %s: %s", path, strerror(-ret));

	snprintf(path, sizeof(path), "%s/data", dir);
	ret = run_workers(path, &sum);
	if (ret)
		tap_diag("no pipe for the workers' tallies: %s", strerror(-ret));
	tap_okf(!ret && sum.opened == WORKERS * OPENS && sum.failed == 0,
		"readers-get-crc-file-or-ebusy",
		"%d opens, %d refused busy, %d failed otherwise, %d without a CRC",
		sum.opened, sum.busy, sum.failed, sum.missed);

	sum = (struct tally) { };
	one_round(path, &sum);
	tap_okf(sum.opened == 1 && !sum.missed, "crc-after-readers",
		"%d opened, %d without a CRC, %d refused busy, %d failed otherwise",
		sum.opened, sum.missed, sum.busy, sum.failed);
}

static const struct tap_subtest subtests[] = {
	{ "reopen", "", 0, test_reopen },
};

int main(int argc, char **argv)
{
	const struct tap_program program = { subtests, ARRAY_SIZE(subtests), setup, teardown };

	return tap_main(&program, argc, argv);
}
