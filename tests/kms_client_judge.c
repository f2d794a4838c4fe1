// SPDX-License-Identifier: MIT
/*
 * Judges sampled frames an unmodified KMS client (Debian's modetest) gets
 * on screen with the per-plane cursor emulation on: each sampled frame is
 * compared by its vkms CRC with the CRC of the picture it must be.
 *
 * The client runs as a child with the per-plane cursor emulation as the
 * caller configured it. Its cursor moves at times that differ per run, so
 * reference CRCs from another run cannot match. Instead the judge stops
 * the client at random moments with SIGSTOP. A stopped thread is never
 * inside a commit: it either finished it (a commit is uninterruptible
 * after its state swap) or backed out of an interruptible wait and
 * restarts the ioctl after SIGCONT, and every commit modetest makes is
 * blocking. The judge then waits for a frame composed from the state the
 * client left, records its CRC and the complete plane state, and lets it
 * go on. Only these quiescent states are judged, a dozen or more a run;
 * the frames shown while the client runs are not.
 *
 * As root the judge gets handles to the client's buffers (GETFB2), which
 * keep them alive after the client has gone. Then it replays every
 * recorded state on those buffers twice: with the emulation off, the
 * reference (the cursor as a plane on top, what the picture must be), and
 * with the emulation on as before, which must give the recorded CRC and
 * cursor mode again, or the replay is not the state that was on screen and
 * the comparison would mean nothing.
 *
 * The replay shows the buffers as they are after the client has gone, so
 * the judge assumes the client never draws into a buffer it has shown (true
 * of modetest's dumb buffers; not of a client that page-flips into buffers
 * it redraws, such as modetest -v or a compositor). It hashes every
 * buffer when first seen and again before the replays, and fails when one
 * changed.
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
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kms_scene.h"
#include "kms_util.h"
#include "tap.h"

#define MAX_PLANES (KMS_MAX_OVERLAYS + 2)
#define MAX_SAMPLES 256
#define MAX_HANDLES (MAX_SAMPLES * MAX_PLANES * 4)
#define MAX_BUFS 64
/*
 * How long a client may take to show its cursor or to exit once told: a
 * debug guest beside a build takes seconds for what takes milliseconds
 * alone; only a client that hangs should fail.
 */
#define CLIENT_WAIT_S 30

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
	enum cursor_mode ref_mode, again_mode;	/* what vkms chose on replay */
	bool ok;		/* recorded */
	bool replayed;
};

static struct {
	int fd;
	struct kms_device kms;
	char debugfs[64];
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
	/* GETFB2 makes new GEM handles each time: closed when done. */
	uint32_t handles[MAX_HANDLES];
	unsigned int n_handles;
	/* Every framebuffer seen, with a hash of its contents when first seen. */
	struct {
		uint32_t fb_id;
		struct fb_rec fb;
		uint64_t hash;
	} bufs[MAX_BUFS];
	unsigned int n_bufs;
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

/* Property ids are global and fixed while the device exists: look up once. */
static int probe(void)
{
	int ret;

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
	if (j.kms.mode_blob_id)
		drmModeDestroyPropertyBlob(j.fd, j.kms.mode_blob_id);
	j.kms.mode_blob_id = 0;
	/* The client must be able to become master: failing here shows then. */
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
	ret = vkms_debugfs_dir(j.fd, j.debugfs, sizeof(j.debugfs));
	if (ret)
		return ret;
	snprintf(j.crc_dir, sizeof(j.crc_dir), "%s/crtc-%u/crc", j.debugfs,
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
	int ret;

	if (j.crc_fd >= 0)
		return 0;
	snprintf(path, sizeof(path), "%s/control", j.crc_dir);
	ret = kms_write_file(path, "auto");
	if (ret)
		return ret;
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

	if (poll(&pfd, 1, KMS_WAIT_MS) <= 0)
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
	for (int i = 0; i < KMS_WAIT_MS; i++) {
		if (child_stopped())
			return 0;
		if (!child_alive(&status))
			return -ESRCH;
		sleep_ms(1);
	}
	return -ETIMEDOUT;
}

/* FNV-1a over the buffer's bytes, mapped through a dumb-buffer offset. */
static int hash_fb(const struct fb_rec *f, uint64_t *hash)
{
	struct drm_mode_map_dumb map = { .handle = f->handles[0] };
	size_t size = (size_t)f->offsets[0] + (size_t)f->pitches[0] * f->height;
	const unsigned char *p;
	uint64_t h = 0xcbf29ce484222325ULL;

	if (drmIoctl(j.fd, DRM_IOCTL_MODE_MAP_DUMB, &map))
		return -errno;
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, j.fd, (off_t)map.offset);
	if (p == MAP_FAILED)
		return -errno;
	for (size_t i = 0; i < size; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	munmap((void *)p, size);
	*hash = h;
	return 0;
}

/* Hashes a framebuffer the first time a sample shows it. */
static int note_fb(uint32_t fb_id, const struct fb_rec *f)
{
	for (unsigned int i = 0; i < j.n_bufs; i++)
		if (j.bufs[i].fb_id == fb_id)
			return 0;
	if (j.n_bufs == MAX_BUFS)
		return -ENOSPC;
	j.bufs[j.n_bufs].fb_id = fb_id;
	j.bufs[j.n_bufs].fb = *f;
	j.n_bufs++;
	return hash_fb(f, &j.bufs[j.n_bufs - 1].hash);
}

/* How many of the framebuffers seen now hold other contents. */
static unsigned int bufs_changed(void)
{
	unsigned int changed = 0;

	for (unsigned int i = 0; i < j.n_bufs; i++) {
		uint64_t h;

		if (hash_fb(&j.bufs[i].fb, &h) || h != j.bufs[i].hash) {
			tap_diag("framebuffer %u changed after it was shown", j.bufs[i].fb_id);
			changed++;
		}
	}
	return changed;
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
	/* Planes of one buffer share a handle: keep each one once. */
	for (unsigned int i = 0; i < 4; i++) {
		uint32_t h = rec->fb.handles[i];

		if (h && (i == 0 || h != rec->fb.handles[i - 1]) && j.n_handles < MAX_HANDLES)
			j.handles[j.n_handles++] = h;
	}
	if (!rec->fb.handles[0])
		return -EPERM;
	return note_fb((uint32_t)rec->v[P_FB_ID], &rec->fb);
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
		ret = vkms_read_cursor_state(j.debugfs, &s->cs);
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
 * use would switch its plane off before the CRC of the replay is read.
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

/*
 * Commits the recorded state of @s as one complete state and reads its CRC
 * and the cursor mode vkms chose for it.
 */
static int replay(const struct sample *s, uint32_t *crc, enum cursor_mode *mode)
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
			uint64_t mods[4] = { 0 };
			bool with_mods = f->flags & DRM_MODE_FB_MODIFIERS;

			for (unsigned int i = 0; i < 4; i++)
				if (f->handles[i])
					mods[i] = f->modifier;

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
	if (!ret) {
		struct cursor_state cs;

		ret = vkms_read_cursor_state(j.debugfs, &cs);
		*mode = cs.mode;
	}
out:
	if (blob)
		drmModeDestroyPropertyBlob(j.fd, blob);
	drmModeAtomicFree(req);
	return ret;
}

static int spawn(char **argv, const char *log)
{
	int in[2], out;

	int ret;

	/* Close-on-exec: the client gets the pipe as its stdin only. */
	if (pipe(in))
		return -errno;
	if (fcntl(in[0], F_SETFD, FD_CLOEXEC) || fcntl(in[1], F_SETFD, FD_CLOEXEC)) {
		ret = -errno;
		goto err;
	}
	out = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		ret = -errno;
		goto err;
	}
	j.child = fork();
	if (j.child < 0) {
		ret = -errno;
		close(out);
		goto err;
	}
	if (j.child == 0) {
		/* Unmodified: with the signal dispositions it would have had. */
		signal(SIGPIPE, SIG_DFL);
		dup2(in[0], 0);
		dup2(out, 1);
		dup2(out, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out);
	j.child_stdin = in[1];
	return 0;
err:
	close(in[0]);
	close(in[1]);
	return ret;
}

/*
 * modetest waits on stdin (getchar) before tearing down: one line ends it.
 * A client still there after CLIENT_WAIT_S is killed: a TAP failure, not
 * a hang.
 */
static int finish_child(void)
{
	int status = 0;
	pid_t pid = 0;

	kill(j.child, SIGCONT);
	if (j.child_stdin >= 0) {
		if (write(j.child_stdin, "\n", 1) != 1)
			tap_diag("the client no longer reads its input: %s", strerror(errno));
		close(j.child_stdin);
		j.child_stdin = -1;
	}
	for (int i = 0; i < CLIENT_WAIT_S * 100 && !pid; i++) {
		pid = waitpid(j.child, &status, WNOHANG);
		if (!pid)
			sleep_ms(10);
	}
	if (!pid) {
		tap_diag("the client did not exit: killed");
		kill(j.child, SIGKILL);
		pid = waitpid(j.child, &status, 0);
	}
	if (pid < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * Waits until the client shows its cursor: its test has started. Any cursor
 * framebuffer counts, so the caller must start from a CRTC without one
 * (run-guest.sh reloads vkms, and every client here removes its own).
 */
static bool wait_cursor(double timeout)
{
	double end = kms_now_s() + timeout;
	int status;

	while (kms_now_s() < end) {
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

/* Reads the kernel log from where open_kernel_log() left it, counting vkms's verdicts. */
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
		if (!strstr(rec, "per-plane cursor:"))
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

/*
 * Samples whose cursor is on and overlaps a plane other than the primary:
 * where per-plane copies differ from the cursor drawn as a plane, if at all.
 */
static bool cursor_over_overlay(const struct sample *s)
{
	const uint64_t *c = s->planes[j.cursor_index].v;
	int64_t cx = (int64_t)c[P_CRTC_X], cy = (int64_t)c[P_CRTC_Y];

	if (!s->cs.cursor_on || !c[P_FB_ID])
		return false;
	for (unsigned int p = 1; p < j.cursor_index; p++) {
		const uint64_t *o = s->planes[p].v;
		int64_t ox = (int64_t)o[P_CRTC_X], oy = (int64_t)o[P_CRTC_Y];

		if (o[P_FB_ID] &&
		    cx < ox + (int64_t)o[P_CRTC_W] && ox < cx + (int64_t)c[P_CRTC_W] &&
		    cy < oy + (int64_t)o[P_CRTC_H] && oy < cy + (int64_t)c[P_CRTC_H])
			return true;
	}
	return false;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s --expect-mode MODE --expect-refused some|none [--samples N] [--seed N]\n"
		"          [--min-cursor-on N] [--min-over-overlay N] [--expect-wrong] [--expect-rc N]\n"
		"          [--log FILE] [--name TEXT] -- CLIENT [ARGS...]\n", argv0);
	exit(2);
}

/* What the caller asks for; --name only labels the diagnostics. */
struct judge_opts {
	unsigned int want, min_cursor_on, min_over;
	const char *log, *name, *expect_mode, *expect_refused;
	enum cursor_mode expect_m;
	bool expect_wrong;
	int expect_rc;
	char **client;
};

/* What the samples showed and what their replays gave. */
struct tally {
	bool started, log_ok;
	unsigned int taken, recorded, modes[CURSOR_MODES], cursor_on, positions, over;
	struct log_counts lc;
	int rc;
	unsigned int changed, replayed, ref_not_plane, mode_mismatched, mismatched, wrong;
};

static void parse_options(int argc, char **argv, struct judge_opts *o)
{
	static const struct option opts[] = {
		{ "samples", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'r' },
		{ "expect-wrong", no_argument, NULL, 'w' },
		{ "expect-rc", required_argument, NULL, 'c' },
		{ "log", required_argument, NULL, 'l' },
		{ "name", required_argument, NULL, 'n' },
		{ "expect-mode", required_argument, NULL, 'm' },
		{ "expect-refused", required_argument, NULL, 'f' },
		{ "min-cursor-on", required_argument, NULL, 'o' },
		{ "min-over-overlay", required_argument, NULL, 'v' },
		{ }
	};
	unsigned int m;
	int opt;

	*o = (struct judge_opts) { .want = 12, .min_cursor_on = 1, .log = "/tmp/client.log",
				   .name = "client" };
	j.rng = 1;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 's': o->want = (unsigned int)atoi(optarg); break;
		case 'r': j.rng = strtoull(optarg, NULL, 0) | 1; break;
		case 'w': o->expect_wrong = true; break;
		case 'c': o->expect_rc = atoi(optarg); break;
		case 'l': o->log = optarg; break;
		case 'n': o->name = optarg; break;
		case 'm': o->expect_mode = optarg; break;
		case 'f': o->expect_refused = optarg; break;
		case 'o': o->min_cursor_on = (unsigned int)atoi(optarg); break;
		case 'v': o->min_over = (unsigned int)atoi(optarg); break;
		default: usage(argv[0]);
		}
	}
	for (m = 0; o->expect_mode && m < CURSOR_MODES; m++)
		if (strcmp(cursor_mode_name(m), o->expect_mode) == 0)
			break;
	o->expect_m = m;
	if (optind >= argc || o->want == 0 || o->want > MAX_SAMPLES || !o->expect_mode ||
	    m == CURSOR_MODES || !o->expect_refused ||
	    (strcmp(o->expect_refused, "some") && strcmp(o->expect_refused, "none")))
		usage(argv[0]);
	o->client = argv + optind;
}

/* vkms's verdicts are drm.debug atomic lines: without them no count. */
static bool open_kernel_log(void)
{
	int ret = drm_debug_enable(0x10);

	if (ret)
		tap_diag("cannot enable drm.debug atomic messages: %s", strerror(-ret));
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg_fd >= 0)
		lseek(kmsg_fd, 0, SEEK_END);
	return !ret && kmsg_fd >= 0;
}

/* Counts a recorded sample; @last is the one recorded before it. */
static void count_sample(struct tally *t, const struct sample *s, const struct sample *last)
{
	t->recorded++;
	t->modes[s->cs.mode]++;
	t->cursor_on += s->cs.cursor_on;
	t->over += cursor_over_overlay(s);
	if (!last ||
	    memcmp(&s->planes[j.cursor_index].v[P_CRTC_X],
		   &last->planes[j.cursor_index].v[P_CRTC_X], 2 * sizeof(uint64_t)))
		t->positions++;
}

static bool cursor_exercised(const struct judge_opts *o, const struct tally *t)
{
	return t->cursor_on >= o->min_cursor_on && t->positions >= 2 && t->over >= o->min_over;
}

/*
 * @o->want samples, then more, up to four times as many, until they saw the
 * cursor on, moving and over an overlay as often as asked: where they fall
 * in the client's walk, timed by its own clock, depends on how fast this
 * machine records them.
 */
static void take_samples(const struct judge_opts *o, struct tally *t)
{
	const unsigned int most = o->want * 4 < MAX_SAMPLES ? o->want * 4 : MAX_SAMPLES;
	const struct sample *last = NULL;

	for (unsigned int i = 0; t->started && i < most; i++) {
		struct sample *s = &j.samples[j.n_samples];
		int ret;

		if (i >= o->want && cursor_exercised(o, t))
			break;
		t->taken++;

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
		count_sample(t, s, last);
		last = s;
	}
}

static void report_samples(const struct judge_opts *o, const struct tally *t)
{
	const unsigned int *modes = t->modes, refused = t->lc.cursor_refused;
	const char *debug = t->log_ok ? "on" : "unavailable";

	tap_okf(t->started && t->taken >= o->want && t->recorded == t->taken, "samples-recorded",
		"%u of %u samples recorded, %u wanted (state, and CRC of a frame after the client stopped)",
		t->recorded, t->taken, o->want);
	tap_diag("%s: modes while sampled: native %u, dedicated %u, hidden %u, plane %u",
		 o->name, modes[CURSOR_NATIVE], modes[CURSOR_DEDICATED], modes[CURSOR_HIDDEN],
		 modes[CURSOR_PLANE]);
	tap_okf(t->recorded > 0 && modes[o->expect_m] == t->recorded, "cursor-in-expected-mode",
		"the cursor was in mode %s in %u of %u samples",
		o->expect_mode, modes[o->expect_m], t->recorded);
	tap_okf(cursor_exercised(o, t), "samples-exercised-cursor",
		"on in %u (at least %u), %u distinct positions (at least 2), over an overlay in %u (at least %u)",
		t->cursor_on, o->min_cursor_on, t->positions, t->over, o->min_over);
	tap_diag("%s: refused while the client ran: %u cursor updates (no pipe free), %u plane changes (protect_legacy_cursor), %u (pipes); cursor hidden %u times",
		 o->name, t->lc.cursor_refused, t->lc.guard_refused, t->lc.pipes_refused,
		 t->lc.hidden);
	/* "some": the updates it could not show right. */
	if (strcmp(o->expect_refused, "some") == 0)
		tap_okf(t->log_ok && refused > 0, "vkms-refused-legacy-cursor-updates",
			"%u refused; drm.debug atomic %s", refused, debug);
	else
		tap_okf(t->log_ok && refused == 0, "vkms-refused-no-legacy-cursor-update",
			"%u refused; drm.debug atomic %s", refused, debug);
}

/*
 * The client is gone: its buffers live on through our handles. Every
 * replay changes the planes and the cursor. With the cap such a commit may
 * be refused but never hidden, and protect_legacy_cursor does not apply:
 * the policy of the legacy cursor moves that made the recorded states (a
 * changed cursor may be refused too). A recorded state vkms could only
 * have hidden the cursor in is then refused on replay instead; and should
 * the replay's mode differ anyway, the mode check says so.
 */
static void prepare_replays(struct tally *t)
{
	int ret;

	if (drmSetMaster(j.fd))
		tap_diag("cannot become master: %s", strerror(errno));
	ret = kms_set_cap(j.fd, DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 1);
	if (ret)
		tap_diag("cannot set DRM_CLIENT_CAP_NO_LEGACY_CURSOR: %s", strerror(-ret));
	t->changed = bufs_changed();
}

/* Reference: the cursor as a plane on top, the picture there must be. */
static void replay_references(struct tally *t)
{
	int ret = set_per_pipe(false);

	if (ret)
		tap_diag("cannot switch the emulation off: %s", strerror(-ret));
	for (unsigned int i = 0; !ret && i < j.n_samples; i++) {
		struct sample *s = &j.samples[i];

		if (!s->ok)
			continue;
		if (replay(s, &s->crc_ref, &s->ref_mode)) {
			tap_diag("sample %u: reference replay failed", i);
			continue;
		}
		/* vkms's own word that the reference is the cursor as a plane */
		if (s->ref_mode != CURSOR_PLANE)
			t->ref_not_plane++;
		s->replayed = true;
	}
}

static void show_sample(unsigned int i, const struct sample *s)
{
	const uint64_t *c = s->planes[j.cursor_index].v;

	tap_diag("sample %u: mode %s (replayed %s, reference %s), cursor %s at %d,%d: shown %08x, replayed %08x, reference %08x",
		 i, cursor_mode_name(s->cs.mode), cursor_mode_name(s->again_mode),
		 cursor_mode_name(s->ref_mode), s->cs.cursor_on ? "on" : "off",
		 (int)(int64_t)c[P_CRTC_X], (int)(int64_t)c[P_CRTC_Y],
		 s->crc, s->crc_again, s->crc_ref);
}

/* The same states under the emulation as configured. */
static void replay_again(struct tally *t, bool per_plane)
{
	int ret = set_per_pipe(per_plane);

	if (ret)
		tap_diag("cannot restore the emulation: %s", strerror(-ret));
	for (unsigned int i = 0; i < j.n_samples; i++) {
		struct sample *s = &j.samples[i];

		if (!s->replayed)
			continue;
		ret = replay(s, &s->crc_again, &s->again_mode);
		if (ret) {
			tap_diag("sample %u: replay in mode %s failed: %s", i,
				 cursor_mode_name(s->cs.mode), strerror(-ret));
			s->replayed = false;
			continue;
		}
		t->replayed++;
		t->mismatched += s->crc_again != s->crc;
		t->mode_mismatched += s->again_mode != s->cs.mode;
		t->wrong += s->crc_ref != s->crc;
		if (s->crc_ref != s->crc || s->crc_again != s->crc ||
		    s->again_mode != s->cs.mode || s->ref_mode != CURSOR_PLANE)
			show_sample(i, s);
	}
}

static void release_replays(void)
{
	crc_close();
	release_fbs(replay_fbs);
	for (unsigned int i = 0; i < j.n_handles; i++)
		drmCloseBufferHandle(j.fd, j.handles[i]);
	drmDropMaster(j.fd);
}

static void report_replays(const struct judge_opts *o, const struct tally *t)
{
	tap_okf(t->replayed == t->recorded && t->recorded > 0 && t->changed == 0,
		"states-replayed-on-unchanged-buffers",
		"%u of %u recorded states replayed; %u of %u buffers changed since shown",
		t->replayed, t->recorded, t->changed, j.n_bufs);
	tap_okf(t->replayed > 0 && t->ref_not_plane == 0, "reference-cursor-drawn-as-plane",
		"%u of %u reference replays not drawn as a plane", t->ref_not_plane, t->replayed);
	tap_okf(t->replayed > 0 && t->mode_mismatched == 0, "replay-gives-recorded-mode",
		"%u of %u replays under the same emulation differ in cursor mode",
		t->mode_mismatched, t->replayed);
	tap_okf(t->replayed > 0 && t->mismatched == 0, "replay-gives-recorded-crc",
		"%u of %u replays under the same emulation differ in CRC",
		t->mismatched, t->replayed);
	if (o->expect_wrong)
		tap_okf(t->replayed > 0 && t->wrong > 0, "judge-sees-wrong-frames",
			"%u of %u sampled frames differ from the cursor drawn as a plane",
			t->wrong, t->replayed);
	else
		tap_okf(t->replayed > 0 && t->wrong == 0, "no-wrong-frame",
			"%u of %u sampled frames differ from the cursor drawn as a plane; %u with the cursor on",
			t->wrong, t->replayed, t->cursor_on);
	tap_okf(t->rc == o->expect_rc, "client-exit-status", "exited with %d, expected %d",
		t->rc, o->expect_rc);
}

static void show_client_log(const char *log)
{
	FILE *f = fopen(log, "r");
	char line[256];

	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		tap_diag("client: %s", line);
	}
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	struct judge_opts o;
	struct tally t = { };
	double t0 = kms_now_s();
	bool per_plane, shown;
	int ret;

	parse_options(argc, argv, &o);
	tap_start();
	ret = probe();
	if (ret) {
		tap_diag("no usable vkms device: %s", strerror(-ret));
		return 1;
	}
	/* The emulation as the caller configured it, to restore after the references. */
	per_plane = vkms_per_plane_cursor();
	t.log_ok = open_kernel_log();

	/* A client that exited early must not take the judge with it. */
	signal(SIGPIPE, SIG_IGN);
	ret = spawn(o.client, o.log);
	if (ret) {
		tap_diag("cannot start %s: %s", o.client[0], strerror(-ret));
		return 1;
	}
	shown = wait_cursor(CLIENT_WAIT_S);
	ret = shown ? crc_open() : 0;
	t.started = shown && !ret;
	tap_okf(t.started, "client-showed-cursor",
		"%s: mode and cursor %s within %d s; CRC file: %s", o.name,
		shown ? "shown" : "not shown", CLIENT_WAIT_S, shown ? strerror(-ret) : "not opened");
	take_samples(&o, &t);
	tap_diag("%s: sampling took %.1f s", o.name, kms_now_s() - t0);
	if (t.started && t.log_ok)
		count_log(&t.lc);
	t.rc = finish_child();
	crc_close();
	report_samples(&o, &t);

	prepare_replays(&t);
	replay_references(&t);
	replay_again(&t, per_plane);
	release_replays();
	tap_diag("%s: replays done after %.1f s", o.name, kms_now_s() - t0);
	report_replays(&o, &t);

	show_client_log(o.log);
	tap_diag("%s: %.1f s", o.name, kms_now_s() - t0);
	return tap_done();
}
