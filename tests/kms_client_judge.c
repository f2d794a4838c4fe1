// SPDX-License-Identifier: MIT
/*
 * Judges the frames an unmodified KMS client (Debian's modetest) gets on
 * screen, pixel-exactly, with the vkms CRC.
 *
 * The client runs as a child with the per-pipe cursor emulation as the
 * caller configured it. Its cursor moves at times that differ per run, so
 * reference CRCs from another run cannot match. Instead the judge stops
 * the client at random moments (SIGSTOP: ioctls complete before a process
 * stops, and every commit modetest makes is blocking), waits for a frame
 * composed from the state it left, records its CRC and the complete plane
 * state, and lets it go on. As root it
 * gets handles to the client's buffers (GETFB2), which keep them alive
 * after the client has gone. Then it replays every recorded state on those
 * buffers twice: with the emulation off, the reference (the cursor as a
 * plane on top, what the picture must be), and with the emulation on as
 * before, which must give the recorded CRC again, or the replay is not the
 * state that was on screen and the comparison would mean nothing.
 *
 * A sample is a wrong frame when its CRC differs from the reference.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kms_scene.h"
#include "kms_util.h"
#include "tap.h"

#define MAX_PLANES (KMS_MAX_OVERLAYS + 2)
#define MAX_SAMPLES 256

enum { P_FB_ID, P_CRTC_ID, P_SRC_X, P_SRC_Y, P_SRC_W, P_SRC_H,
       P_CRTC_X, P_CRTC_Y, P_CRTC_W, P_CRTC_H, P_ZPOS, NPROPS };

static const char *const prop_names[NPROPS] = {
	"FB_ID", "CRTC_ID", "SRC_X", "SRC_Y", "SRC_W", "SRC_H",
	"CRTC_X", "CRTC_Y", "CRTC_W", "CRTC_H", "zpos",
};

struct fb_rec {
	uint32_t width, height, format, flags;
	uint32_t handles[4], pitches[4], offsets[4];
	uint64_t modifier;
};

struct plane_rec {
	uint64_t v[NPROPS];
	struct fb_rec fb;
};

struct sample {
	struct plane_rec planes[MAX_PLANES];
	drmModeModeInfo mode;
	struct cursor_state cs;
	uint32_t crc;		/* recorded, emulation as configured */
	uint32_t crc_ref;	/* replayed, emulation off */
	uint32_t crc_again;	/* replayed, emulation as configured */
	bool ok;		/* recorded */
	bool replayed;
};

static struct {
	int fd;
	struct kms_device kms;
	struct rig dbg;		/* only its debugfs path: read_cursor_state() */
	uint32_t planes[MAX_PLANES];
	unsigned int n_planes;
	unsigned int cursor_index;
	uint32_t prop[MAX_PLANES][NPROPS];
	bool immutable[MAX_PLANES][NPROPS];	/* read, never set: the cursor's zpos */
	uint32_t conn_crtc_prop, mode_prop, active_prop;
	char crc_dir[96];
	int crc_fd;
	pid_t child;
	int child_stdin;
	struct sample samples[MAX_SAMPLES];
	unsigned int n_samples;
	uint64_t rng;
} j = { .crc_fd = -1, .child = -1, .child_stdin = -1 };

static unsigned int rnd(unsigned int n)
{
	/* xorshift64: reproducible pauses for a given --seed */
	j.rng ^= j.rng << 13;
	j.rng ^= j.rng >> 7;
	j.rng ^= j.rng << 17;
	return (unsigned int)(j.rng % n);
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* Property ids are global and fixed while the device exists: look up once. */
static int probe(void)
{
	struct stat st;

	j.fd = kms_open_driver("vkms");
	if (j.fd < 0)
		return j.fd;
	if (kms_set_cap(j.fd, DRM_CLIENT_CAP_ATOMIC, 1))
		return -errno;
	/*
	 * Only a master makes the connector probe its modes. The first opener
	 * becomes master; then the client must be instead.
	 */
	if (kms_probe(&j.kms, j.fd) || !j.kms.cursor_id)
		return -ENODEV;
	drmDropMaster(j.fd);
	j.planes[j.n_planes++] = j.kms.primary_id;
	for (unsigned int i = 0; i < j.kms.overlay_count; i++)
		j.planes[j.n_planes++] = j.kms.overlay_ids[i];
	j.cursor_index = j.n_planes;
	j.planes[j.n_planes++] = j.kms.cursor_id;
	for (unsigned int p = 0; p < j.n_planes; p++) {
		for (unsigned int k = 0; k < NPROPS; k++) {
			j.prop[p][k] = kms_prop_id(j.fd, j.planes[p], DRM_MODE_OBJECT_PLANE,
						   prop_names[k]);
			if (!j.prop[p][k] && k != P_ZPOS)
				return -ENOENT;
			if (j.prop[p][k]) {
				drmModePropertyPtr prop = drmModeGetProperty(j.fd, j.prop[p][k]);

				if (!prop)
					return -errno;
				j.immutable[p][k] = prop->flags & DRM_MODE_PROP_IMMUTABLE;
				drmModeFreeProperty(prop);
			}
		}
	}
	j.conn_crtc_prop = kms_prop_id(j.fd, j.kms.connector_id,
				       DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID");
	j.mode_prop = kms_prop_id(j.fd, j.kms.crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID");
	j.active_prop = kms_prop_id(j.fd, j.kms.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE");
	if (!j.conn_crtc_prop || !j.mode_prop || !j.active_prop)
		return -ENOENT;
	if (fstat(j.fd, &st))
		return -errno;
	snprintf(j.dbg.debugfs, sizeof(j.dbg.debugfs), "/sys/kernel/debug/dri/%u",
		 minor(st.st_rdev));
	snprintf(j.crc_dir, sizeof(j.crc_dir), "%s/crtc-%u/crc", j.dbg.debugfs,
		 j.kms.crtc_index);
	return 0;
}

/*
 * The CRC data file can only be opened while the CRTC is active; opening
 * it makes vkms compose every frame.
 */
static int crc_open(void)
{
	char path[128];

	if (j.crc_fd >= 0)
		return 0;
	snprintf(path, sizeof(path), "%s/control", j.crc_dir);
	if (write_str(path, "auto"))
		return -errno;
	snprintf(path, sizeof(path), "%s/data", j.crc_dir);
	j.crc_fd = open(path, O_RDONLY | O_CLOEXEC);
	return j.crc_fd < 0 ? -errno : 0;
}

static void crc_close(void)
{
	if (j.crc_fd >= 0)
		close(j.crc_fd);
	j.crc_fd = -1;
}

/* One CRC entry: "0x<frame> 0x<crc>\n" per read. */
static int crc_read(uint32_t *frame, uint32_t *crc)
{
	struct pollfd pfd = { .fd = j.crc_fd, .events = POLLIN };
	char line[64];
	ssize_t n;

	if (poll(&pfd, 1, 2000) <= 0)
		return -ETIMEDOUT;
	n = read(j.crc_fd, line, sizeof(line) - 1);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	line[n] = '\0';
	if (sscanf(line, "%x %x", frame, crc) != 2)
		return -EPROTO;
	return 0;
}

static int vblank_now(uint32_t *seq)
{
	drmVBlank vbl = { .request = { .type = DRM_VBLANK_RELATIVE, .sequence = 0 } };

	if (drmWaitVBlank(j.fd, &vbl))
		return -errno;
	*seq = vbl.reply.sequence;
	return 0;
}

/*
 * The CRC of the state in place now: vblank S has happened, so frame S+1
 * and later are composed from it. One frame is enough: replaying the
 * recorded state under the same emulation must give the same CRC again,
 * which a CRC of a state still changing would not.
 */
static int crc_settled(uint32_t *crc)
{
	uint32_t seq = 0, frame;
	int ret;

	ret = vblank_now(&seq);
	while (!ret) {
		ret = crc_read(&frame, crc);
		if (!ret && (int32_t)(frame - (seq + 1)) >= 0)
			return 0;
	}
	return ret;
}

/* True once every thread of the child has stopped. */
static bool child_stopped(void)
{
	char path[320], buf[256];
	struct dirent *de;
	bool all = true;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)j.child);
	d = opendir(path);
	if (!d)
		return false;
	while (all && (de = readdir(d))) {
		char *state;
		ssize_t n;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)j.child, de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;	/* the thread has exited */
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		state = strrchr(buf, ')');
		if (!state || state[1] != ' ' || (state[2] != 'T' && state[2] != 't'))
			all = false;
	}
	closedir(d);
	return all;
}

static bool child_alive(int *status)
{
	return waitpid(j.child, status, WNOHANG) == 0;
}

static int stop_child(void)
{
	int status;

	if (kill(j.child, SIGSTOP))
		return -errno;
	for (int i = 0; i < 2000; i++) {
		if (child_stopped())
			return 0;
		if (!child_alive(&status))
			return -ESRCH;
		sleep_ms(1);
	}
	return -ETIMEDOUT;
}

static int read_plane(unsigned int p, struct plane_rec *rec)
{
	drmModeObjectPropertiesPtr props;
	drmModeFB2Ptr fb;

	memset(rec, 0, sizeof(*rec));
	props = drmModeObjectGetProperties(j.fd, j.planes[p], DRM_MODE_OBJECT_PLANE);
	if (!props)
		return -errno;
	for (uint32_t i = 0; i < props->count_props; i++)
		for (unsigned int k = 0; k < NPROPS; k++)
			if (j.prop[p][k] && props->props[i] == j.prop[p][k])
				rec->v[k] = props->prop_values[i];
	drmModeFreeObjectProperties(props);
	if (!rec->v[P_FB_ID])
		return 0;
	/* As root, handles in this file: the buffers outlive the client. */
	fb = drmModeGetFB2(j.fd, (uint32_t)rec->v[P_FB_ID]);
	if (!fb)
		return -errno;
	rec->fb.width = fb->width;
	rec->fb.height = fb->height;
	rec->fb.format = fb->pixel_format;
	rec->fb.flags = fb->flags;
	rec->fb.modifier = fb->modifier;
	memcpy(rec->fb.handles, fb->handles, sizeof(rec->fb.handles));
	memcpy(rec->fb.pitches, fb->pitches, sizeof(rec->fb.pitches));
	memcpy(rec->fb.offsets, fb->offsets, sizeof(rec->fb.offsets));
	drmModeFreeFB2(fb);
	return rec->fb.handles[0] ? 0 : -EPERM;
}

static int record(struct sample *s)
{
	drmModeCrtcPtr crtc;
	int ret;

	memset(s, 0, sizeof(*s));
	crtc = drmModeGetCrtc(j.fd, j.kms.crtc_id);
	if (!crtc)
		return -errno;
	ret = crtc->mode_valid ? 0 : -ENOTCONN;
	s->mode = crtc->mode;
	drmModeFreeCrtc(crtc);
	for (unsigned int p = 0; p < j.n_planes && !ret; p++)
		ret = read_plane(p, &s->planes[p]);
	if (!ret)
		ret = read_cursor_state(&j.dbg, &s->cs);
	if (!ret)
		ret = crc_settled(&s->crc);
	s->ok = !ret;
	return ret;
}

static int add(drmModeAtomicReqPtr req, uint32_t obj, uint32_t prop, uint64_t v)
{
	return drmModeAtomicAddProperty(req, obj, prop, v) < 0 ? -ENOMEM : 0;
}

/*
 * Framebuffers of the judge's own over the client's buffers, one per plane,
 * kept until the next replay has replaced them: removing a framebuffer in
 * use would switch its plane off, and the primary's the whole CRTC.
 */
static uint32_t replay_fbs[MAX_PLANES];

static void release_fbs(uint32_t *fbs)
{
	for (unsigned int p = 0; p < j.n_planes; p++) {
		if (fbs[p])
			drmModeRmFB(j.fd, fbs[p]);
		fbs[p] = 0;
	}
}

/* Commits the recorded state of @s as one complete state and reads its CRC. */
static int replay(const struct sample *s, uint32_t *crc)
{
	uint32_t fbs[MAX_PLANES] = { 0 }, blob = 0;
	drmModeAtomicReqPtr req;
	int ret = 0;

	req = drmModeAtomicAlloc();
	if (!req)
		return -ENOMEM;
	if (drmModeCreatePropertyBlob(j.fd, &s->mode, sizeof(s->mode), &blob)) {
		ret = -errno;
		goto out;
	}
	ret |= add(req, j.kms.connector_id, j.conn_crtc_prop, j.kms.crtc_id);
	ret |= add(req, j.kms.crtc_id, j.mode_prop, blob);
	ret |= add(req, j.kms.crtc_id, j.active_prop, 1);
	for (unsigned int p = 0; p < j.n_planes && !ret; p++) {
		const struct plane_rec *r = &s->planes[p];
		const struct fb_rec *f = &r->fb;

		if (r->v[P_FB_ID]) {
			uint64_t mods[4] = { f->modifier, f->modifier, f->modifier, f->modifier };
			bool with_mods = f->flags & DRM_MODE_FB_MODIFIERS;

			if (drmModeAddFB2WithModifiers(j.fd, f->width, f->height, f->format,
						       f->handles, f->pitches, f->offsets,
						       with_mods ? mods : NULL, &fbs[p],
						       with_mods ? DRM_MODE_FB_MODIFIERS : 0)) {
				ret = -errno;
				break;
			}
		}
		for (unsigned int k = 0; k < NPROPS && !ret; k++) {
			uint64_t v = k == P_FB_ID ? fbs[p] : r->v[k];

			if (j.prop[p][k] && !j.immutable[p][k])
				ret = add(req, j.planes[p], j.prop[p][k], v);
		}
	}
	if (!ret)
		ret = kms_commit(j.fd, req, DRM_MODE_ATOMIC_ALLOW_MODESET);
	if (!ret) {
		release_fbs(replay_fbs);
		memcpy(replay_fbs, fbs, sizeof(fbs));
	} else {
		release_fbs(fbs);
	}
	/* The CRC file cannot be opened while the CRTC is off. */
	if (!ret)
		ret = crc_open();
	if (!ret)
		ret = crc_settled(crc);
out:
	if (blob)
		drmModeDestroyPropertyBlob(j.fd, blob);
	drmModeAtomicFree(req);
	return ret;
}

static int spawn(char **argv, const char *log)
{
	int in[2], out;

	if (pipe(in))
		return -errno;
	out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		return -errno;
	j.child = fork();
	if (j.child < 0)
		return -errno;
	if (j.child == 0) {
		dup2(in[0], 0);
		dup2(out, 1);
		dup2(out, 2);
		close(in[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out);
	j.child_stdin = in[1];
	return 0;
}

/* modetest waits on stdin (getchar) before tearing down: one line ends it. */
static int finish_child(void)
{
	int status = 0;

	kill(j.child, SIGCONT);
	if (j.child_stdin >= 0) {
		if (write(j.child_stdin, "\n", 1) != 1)
			tap_diag("the client no longer reads its input: %s", strerror(errno));
		close(j.child_stdin);
		j.child_stdin = -1;
	}
	if (waitpid(j.child, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Waits until the client shows its cursor: its test has started. */
static bool wait_cursor(double timeout)
{
	double end = now_s() + timeout;
	int status;

	while (now_s() < end) {
		uint64_t fb = 0;

		kms_prop_value(j.fd, j.kms.cursor_id, DRM_MODE_OBJECT_PLANE, "FB_ID", &fb);
		if (fb)
			return true;
		if (!child_alive(&status))
			return false;
		sleep_ms(5);
	}
	return false;
}

/* What vkms logged (drm.debug atomic) about the cursor while the client ran. */
struct log_counts {
	unsigned int cursor_refused;	/* no pipe free for the committed cursor */
	unsigned int guard_refused;	/* protect_legacy_cursor */
	unsigned int pipes_refused;	/* more planes than pipes */
	unsigned int hidden;
};

static int kmsg_fd = -1;

/* Reads the kernel log from where main() opened it, counting vkms's verdicts. */
static void count_log(struct log_counts *c)
{
	char rec[8192];

	memset(c, 0, sizeof(*c));
	for (;;) {
		ssize_t n = read(kmsg_fd, rec, sizeof(rec) - 1);

		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		if (!strstr(rec, "per-pipe cursor:"))
			continue;
		if (strstr(rec, "no pipe free for the committed cursor"))
			c->cursor_refused++;
		else if (strstr(rec, "no pipe left for a later legacy cursor update"))
			c->guard_refused++;
		else if (strstr(rec, "need a pipe each"))
			c->pipes_refused++;
		else if (strstr(rec, "cursor hidden"))
			c->hidden++;
	}
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [--samples N] [--seed N] [--expect-wrong] [--expect-rc N]\n"
		"          [--expect-mode MODE] [--log FILE] [--name TEXT] -- CLIENT [ARGS...]\n", argv0);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "samples", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'r' },
		{ "expect-wrong", no_argument, NULL, 'w' },
		{ "expect-rc", required_argument, NULL, 'c' },
		{ "log", required_argument, NULL, 'l' },
		{ "name", required_argument, NULL, 'n' },
		{ "expect-mode", required_argument, NULL, 'm' },
		{ }
	};
	unsigned int want = 12, recorded = 0, wrong = 0, mismatched = 0, replayed = 0;
	unsigned int modes[CURSOR_MODES] = { 0 }, cursor_on = 0, positions = 0;
	const char *log = "/tmp/client.log", *name = "client", *expect_mode = NULL;
	bool expect_wrong = false, started;
	int expect_rc = 0, rc, opt, ret;
	struct log_counts lc;
	double t0 = now_s();
	bool per_pipe;
	char line[256];
	FILE *f;

	j.rng = 1;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 's': want = (unsigned int)atoi(optarg); break;
		case 'r': j.rng = strtoull(optarg, NULL, 0) | 1; break;
		case 'w': expect_wrong = true; break;
		case 'c': expect_rc = atoi(optarg); break;
		case 'l': log = optarg; break;
		case 'n': name = optarg; break;
		case 'm': expect_mode = optarg; break;
		default: usage(argv[0]);
		}
	}
	if (optind >= argc || want == 0 || want > MAX_SAMPLES)
		usage(argv[0]);

	tap_plan(7);
	ret = probe();
	if (ret) {
		tap_diag("no usable vkms device: %s", strerror(-ret));
		return 1;
	}
	f = fopen("/sys/module/vkms/parameters/per_pipe_cursor", "r");
	per_pipe = f && fgets(line, sizeof(line), f) && line[0] == 'Y';
	if (f)
		fclose(f);
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg_fd >= 0)
		lseek(kmsg_fd, 0, SEEK_END);

	/* A client that exited early must not take the judge with it. */
	signal(SIGPIPE, SIG_IGN);
	ret = spawn(argv + optind, log);
	if (ret) {
		tap_diag("cannot start %s: %s", argv[optind], strerror(-ret));
		return 1;
	}
	started = wait_cursor(10.0) && !crc_open();
	tap_ok(started, "%s: the client set its mode and showed its cursor", name);

	for (unsigned int i = 0; started && i < want; i++) {
		struct sample *s = &j.samples[j.n_samples];

		/*
		 * Let the client run for a random while: its cursor test
		 * walks through its moves and hide/show loops only while it
		 * runs.
		 */
		sleep_ms(5 + rnd(60));
		ret = stop_child();
		if (ret) {
			tap_diag("sample %u: cannot stop the client: %s", i, strerror(-ret));
			break;
		}
		ret = record(s);
		kill(j.child, SIGCONT);
		j.n_samples++;
		if (ret) {
			tap_diag("sample %u: not recorded: %s", i, strerror(-ret));
			continue;
		}
		recorded++;
		modes[s->cs.mode]++;
		cursor_on += s->cs.cursor_on;
		if (j.n_samples == 1 ||
		    memcmp(&s->planes[j.cursor_index].v[P_CRTC_X],
			   &j.samples[j.n_samples - 2].planes[j.cursor_index].v[P_CRTC_X],
			   2 * sizeof(uint64_t)))
			positions++;
	}
	tap_diag("%s: sampling took %.1f s", name, now_s() - t0);
	if (started && kmsg_fd >= 0)
		count_log(&lc);
	else
		memset(&lc, 0, sizeof(lc));
	rc = finish_child();
	crc_close();

	tap_ok(started && recorded == want,
	       "%s: %u of %u samples recorded (state and CRC of a frame composed after the client stopped)",
	       name, recorded, want);
	tap_diag("%s: modes while sampled: native %u, dedicated %u, hidden %u, plane %u; cursor on in %u, %u distinct cursor positions",
		 name, modes[CURSOR_NATIVE], modes[CURSOR_DEDICATED], modes[CURSOR_HIDDEN],
		 modes[CURSOR_PLANE], cursor_on, positions);
	if (expect_mode) {
		unsigned int m;

		for (m = 0; m < CURSOR_MODES; m++)
			if (strcmp(cursor_mode_name(m), expect_mode) == 0)
				break;
		tap_ok(recorded > 0 && m < CURSOR_MODES && modes[m] == recorded,
		       "%s: the cursor was in mode %s in every sample (%u of %u)",
		       name, expect_mode, m < CURSOR_MODES ? modes[m] : 0, recorded);
	} else {
		tap_ok(true, "%s: cursor modes recorded (none expected)", name);
	}
	tap_diag("%s: refused while the client ran: %u cursor updates (no pipe free), %u plane changes (protect_legacy_cursor), %u (pipes); cursor hidden %u times",
		 name, lc.cursor_refused, lc.guard_refused, lc.pipes_refused, lc.hidden);

	/* The client is gone: its buffers live on through our handles. */
	if (drmSetMaster(j.fd))
		tap_diag("cannot become master: %s", strerror(errno));
	kms_set_cap(j.fd, DRM_CLIENT_CAP_ATOMIC_ONLY, 1);

	/* Reference: the cursor as a plane on top, the picture there must be. */
	set_per_pipe(false);
	for (unsigned int i = 0; i < j.n_samples; i++) {
		struct sample *s = &j.samples[i];

		if (!s->ok)
			continue;
		ret = replay(s, &s->crc_ref);
		if (ret) {
			tap_diag("sample %u: reference replay failed: %s", i, strerror(-ret));
			continue;
		}
		s->replayed = true;
	}
	/* The same states under the emulation as configured. */
	set_per_pipe(per_pipe);
	for (unsigned int i = 0; i < j.n_samples; i++) {
		struct sample *s = &j.samples[i];

		if (!s->replayed)
			continue;
		ret = replay(s, &s->crc_again);
		if (ret) {
			tap_diag("sample %u: replay failed: %s", i, strerror(-ret));
			s->replayed = false;
			continue;
		}
		replayed++;
		if (s->crc_again != s->crc)
			mismatched++;
		if (s->crc_ref != s->crc)
			wrong++;
		if (s->crc_ref != s->crc || s->crc_again != s->crc) {
			const uint64_t *c = s->planes[j.cursor_index].v;

			tap_diag("sample %u: mode %s, cursor %s at %d,%d: shown %08x, replayed %08x, reference %08x",
				 i, cursor_mode_name(s->cs.mode), s->cs.cursor_on ? "on" : "off",
				 (int)(int64_t)c[P_CRTC_X], (int)(int64_t)c[P_CRTC_Y],
				 s->crc, s->crc_again, s->crc_ref);
		}
	}
	crc_close();
	release_fbs(replay_fbs);
	drmDropMaster(j.fd);
	tap_diag("%s: replays done after %.1f s", name, now_s() - t0);

	tap_ok(replayed == recorded && recorded > 0,
	       "%s: every recorded state replayed (%u of %u)", name, replayed, recorded);
	tap_ok(replayed > 0 && mismatched == 0,
	       "%s: replaying a recorded state under the same emulation gives the recorded CRC (%u of %u differ)",
	       name, mismatched, replayed);
	if (expect_wrong)
		tap_ok(replayed > 0 && wrong > 0,
		       "%s: the judge sees wrong frames (%u of %u differ from the cursor drawn as a plane)",
		       name, wrong, replayed);
	else
		tap_ok(replayed > 0 && wrong == 0,
		       "%s: no wrong frame (%u of %u differ from the cursor drawn as a plane)",
		       name, wrong, replayed);
	tap_ok(rc == expect_rc, "%s: the client exited with status %d (expected %d)",
	       name, rc, expect_rc);

	f = fopen(log, "r");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		tap_diag("client: %s", line);
	}
	if (f)
		fclose(f);
	tap_diag("%s: %.1f s", name, now_s() - t0);
	return tap_exit_status();
}
