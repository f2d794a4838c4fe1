// SPDX-License-Identifier: MIT
/*
 * kms_fault: the operations the series touches, each run with its 1st,
 * 2nd, ... kernel allocation failed until it runs without reaching the
 * failure (/proc/thread-self/fail-nth, FAILSLAB and FAIL_PAGE_ALLOC).
 *
 * Every operation starts from a state its preparation commits without any
 * failure. After each injected run:
 *   - the call returned 0 or -ENOMEM, nothing else;
 *   - the kernel logged no WARNING, BUG, KASAN or lockdep report;
 *   - the state read back (every property of the CRTC and its planes, and
 *     vkms' cursor state) is the state before the call if it failed, and
 *     the state an undisturbed run of the call leaves if it succeeded;
 *   - the frame read back through writeback is the one that state shows
 *     in the undisturbed runs;
 *   - the next ordinary commit succeeds.
 * An operation that reached no injection point fails: the injection would
 * be blind there.
 *
 * The kernel's own plane-disabling commit after RMFB and close runs in a
 * kworker (drm_mode_rmfb_work_fn), out of this task's reach: for those
 * operations every kworker is armed instead, with the allocations counted
 * only below drm_mode_rmfb_work_fn (the fault attributes' stack filter).
 * Upstream's drm_framebuffer_remove() WARNs when that commit fails, by
 * design ("atomic remove_fb failed"): that report, and only that one, is
 * what such a failure must produce; the marker written to the kernel log
 * before it lets the verdict tell it from a report of the series.
 *
 * The sweeps reach the series' own allocations only by chance. Each
 * "inject-FUNCTION" subtest targets one function of the series that
 * allocates (targets[]): only the allocations with that function on the
 * stack are counted and failed, over the operations that reach it, with
 * the same checks.
 *
 * Without a stack filter (6.1 on x86_64) the kernel's own commit is not
 * injected, and a targeted run sweeps the whole call until a failure at
 * its target failed it (see targets[]).
 *
 * usage: kms_fault inject SWEEPS [--max-points N] [--only SUBSTR]
 *        kms_fault inject-vkms-crtc-build-layers | inject-vkms-crtc-planes-kept
 * Each check of an operation is named "check@operation" (check_names[]),
 * the same whether it ran or was skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <drm_fourcc.h>

#include "kms_scene.h"
#include "tap.h"

/* The checks of an operation, in the order run_op() reports them. */
enum check {
	CHECK_REACHED, CHECK_ENOMEM, CHECK_NO_REPORT, CHECK_STATE, CHECK_FRAME,
	CHECK_NEXT_COMMIT, CHECKS_PER_OP
};

static const char *const check_names[CHECKS_PER_OP] = {
	[CHECK_REACHED] = "injection-reached-and-ran-clean",
	[CHECK_ENOMEM] = "failed-calls-returned-enomem",
	[CHECK_NO_REPORT] = "no-kernel-report",
	[CHECK_STATE] = "state-unchanged-or-undisturbed",
	[CHECK_FRAME] = "frame-shows-state",
	[CHECK_NEXT_COMMIT] = "next-commit-succeeded",
};
#define MAX_OBJS (2 + SCENE_MAX_OVERLAYS + 1)
#define MAX_PROPS 32

enum policy { CAP, GUARDED, UNGUARDED, AMDGPU, PLANE };

static const char *const policy_name[] = {
	[CAP] = "cap", [GUARDED] = "guarded", [UNGUARDED] = "unguarded",
	[AMDGPU] = "amdgpu-rule", [PLANE] = "emulation-off",
};

static struct rig rig;
static int fail_nth_fd = -1;
static int kmsg_fd = -1;
static char card_path[64];

/* The second client of the close operation and the framebuffer RMFB removes. */
static int client_fd = -1;
static struct kms_fb client_fb, doomed_fb;
/* Their ids, kept after the call took them, to read the planes back. */
static uint32_t client_fb_id, doomed_fb_id;

struct snapshot {
	unsigned int n_objs;
	struct {
		uint32_t id;
		unsigned int n;
		uint32_t prop[MAX_PROPS];
		uint64_t value[MAX_PROPS];
	} obj[MAX_OBJS];
	struct cursor_state cs;
	int cs_ret;
	struct image frame;
	int frame_ret;
};

struct op {
	/* Kebab-case: the variant of its checks' names. */
	const char *name;
	enum policy policy;
	/* The state the operation starts from, committed without failures. */
	int (*prepare)(const struct op *op);
	/* The operation itself: system calls only, no user-space allocation. */
	int (*run)(const struct op *op);
	/* Puts back what run() took (master, files); never injected. */
	void (*after)(const struct op *op);
	struct scene scene;
	/* What prepare_scene() commits, if not @scene. */
	const struct scene *from;
	uint32_t flags;
	unsigned int hw_pipes;
	/* The cursor mode an undisturbed run must leave, or CURSOR_MODES: any. */
	enum cursor_mode expect_mode;
	/* The failure goes into the commit a kworker makes for the call. */
	bool kernel_commit;
	/* The call returns 0 whatever fails (close()). */
	bool cannot_fail;
};

/* Per-operation results; the injection counts go into diagnostics. */
struct result {
	unsigned int points, failed_calls, succeeded_injected;
	/* Runs of the kernel's work in no armed kworker, tried again. */
	unsigned int unseen;
	unsigned int bad_errno, splats, state_changed, wrong_state, wrong_frame;
	unsigned int next_commit_failed, prepare_drift;
	/* Targeted runs: failed calls whose failure was logged elsewhere, at the target. */
	unsigned int off_target, at_target;
	unsigned int sweeps;
	int first_bad_errno;
	enum cursor_mode mode;
};

static unsigned int max_points = 400;
/*
 * Whether the fault attributes have a stack filter (require-start,
 * require-end). 6.1 builds it only for other architectures than x86_64
 * (FAULT_INJECTION_STACKTRACE_FILTER depends on !X86_64 there).
 */
static bool have_stack_filter;
#define NO_STACK_FILTER "this kernel's fault injection has no stack filter"
/*
 * inject's argument. The nth allocation is not the same one on every run:
 * KASAN's stack depot and kmemleak allocate for themselves now and then,
 * which shifts the count by one or two. A single sweep can step over an
 * allocation of the series; a second one, shifted differently, catches
 * most of those.
 */
static unsigned int sweeps;
/* --only SUBSTR: the operations whose name holds it, the others skipped. */
static const char *only;
static unsigned long total_points, total_failed_calls, total_at_target;

#define MIN_FAILED_CALLS_PER_SWEEP 250UL
/* Sweeps of a targeted run without a stack filter, at most. */
#define MAX_TARGET_SWEEPS 8

/* ---- fault injection ----------------------------------------------------- */

static int write_str(const char *path, const char *value)
{
	int ret = kms_write_file(path, value);

	if (ret)
		tap_diag("writing %s to %s failed: %s", value, path, strerror(-ret));
	return ret;
}

/*
 * The defaults spare the allocations a DRM ioctl makes (GFP_KERNEL may
 * sleep, order-0 pages) and log a stack for each failure: off with both.
 */
static int injection_setup(void)
{
	static const char *const files[][2] = {
		{ "/sys/kernel/debug/failslab/ignore-gfp-wait", "N" },
		{ "/sys/kernel/debug/failslab/verbose", "0" },
		{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N" },
		{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem", "N" },
		{ "/sys/kernel/debug/fail_page_alloc/min-order", "0" },
		{ "/sys/kernel/debug/fail_page_alloc/verbose", "0" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		if (write_str(files[i][0], files[i][1]))
			return -ENOENT;
	fail_nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	return fail_nth_fd < 0 ? -errno : 0;
}

/* Fails the @nth allocation from here on, in this thread. */
static void arm(unsigned int nth)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", nth);

	if (pwrite(fail_nth_fd, buf, len, 0) != len)
		abort();
}

/* True if the armed failure was injected; leaves nothing armed. */
static bool disarm(void)
{
	char buf[16] = "";
	ssize_t n = pread(fail_nth_fd, buf, sizeof(buf) - 1, 0);

	if (pwrite(fail_nth_fd, "0", 1, 0) != 1 || n <= 0)
		abort();
	return atoi(buf) == 0;
}

/* Set while an operation runs: the commits it makes are the ones to fail. */
static unsigned int armed_nth;

static int armed_commit(int fd, drmModeAtomicReqPtr req, uint32_t flags)
{
	int ret;

	if (armed_nth)
		arm(armed_nth);
	ret = drmModeAtomicCommit(fd, req, flags, NULL) ? -errno : 0;
	armed_nth = 0;
	return ret;
}

/*
 * The kernel's own commit: every kworker armed, allocations counted only
 * with drm_mode_rmfb_work_fn on the stack, so that whichever kworker runs
 * the work fails its nth allocation there and nowhere else.
 */
#define MAX_WORKERS 256
static int worker_fd[MAX_WORKERS];
static unsigned int n_workers;

/* A function's text in /proc/kallsyms: its address up to the next symbol's. */
struct text_range {
	const char *name;
	unsigned long start, end;
	/* The symbol found, with its clone suffix if GCC cloned it, and module. */
	char symbol[320];
};

static struct text_range rmfb_work = { .name = "drm_mode_rmfb_work_fn" };

/*
 * @name itself, or a clone GCC made of it (".isra.0", ".constprop.0",
 * ".part.0"): its body is the clone's. A ".cold" part holds only the
 * unlikely paths GCC moved out, never the function's entry.
 */
static bool names_function(const char *symbol, const char *name)
{
	size_t len = strlen(name);

	return strncmp(symbol, name, len) == 0 &&
	       (symbol[len] == '\0' || (symbol[len] == '.' && !strstr(symbol + len, ".cold")));
}

static int find_text(struct text_range *t)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned long addr, next = ~0ul;
	char type, name[256], module[64];
	int fields;

	if (!f)
		return -errno;
	t->start = 0;
	while ((fields = fscanf(f, "%lx %c %255s%63[^\n]", &addr, &type, name, module)) >= 3) {
		if ((type == 't' || type == 'T') && !t->start && names_function(name, t->name)) {
			t->start = addr;
			snprintf(t->symbol, sizeof(t->symbol), "%s %s", name,
				 fields == 4 ? module + strspn(module, " \t") : "");
		}
	}
	rewind(f);
	while (t->start && fscanf(f, "%lx %c %255s%*[^\n]", &addr, &type, name) == 3)
		if (addr > t->start && addr < next)
			next = addr;
	fclose(f);
	/* Without kptr_restrict's permission every address reads 0. */
	if (!t->start || next == ~0ul)
		return -ENOENT;
	t->end = next;
	return 0;
}

/*
 * Without a stack filter, fail-nth counts every allocation of the task,
 * KASAN's and kmemleak's own among them, which move the count from one
 * run to the next: a sweep steps over a call site now and then (it did
 * over upstream's kcalloc() in vkms_crtc_atomic_check, and a walk took
 * that site for the series'). failslab asks its cache filter before it
 * counts fail-nth, and fail_page_alloc its min-order: with the filter on,
 * the kmalloc caches alone marked (6.1's SLUB marks caches at boot only:
 * slub_debug=A,kmalloc-*, harness/boot.sh) and no page order counted,
 * fail-nth counts kmalloc() alone, which neither kmemleak (a cache of its
 * own) nor KASAN (pages) uses for itself.
 */
static int kmalloc_only(bool on)
{
	char flag[4] = "";
	int fd;

	if (on) {
		fd = open("/sys/kernel/slab/kmalloc-64/failslab", O_RDONLY | O_CLOEXEC);
		if (fd < 0 || read(fd, flag, sizeof(flag) - 1) <= 0 || flag[0] != '1') {
			if (fd >= 0)
				close(fd);
			tap_diag("the kmalloc caches are not marked for failslab's cache filter (boot with slub_debug=A,kmalloc-*)");
			return -ENOENT;
		}
		close(fd);
	}
	return write_str("/sys/kernel/debug/failslab/cache-filter", on ? "Y" : "N") ?:
	       write_str("/sys/kernel/debug/fail_page_alloc/min-order", on ? "11" : "0");
}

/* The fault attributes count only allocations with @t on the stack; NULL: all. */
static int stack_filter(const struct text_range *t)
{
	static const char *const attrs[] = { "failslab", "fail_page_alloc" };
	char path[96], start[32], end[32];
	int ret = 0;

	snprintf(start, sizeof(start), "%#lx", t ? t->start : 0);
	snprintf(end, sizeof(end), "%#lx", t ? t->end : ~0ul);
	for (size_t i = 0; i < ARRAY_SIZE(attrs); i++) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/%s/require-start", attrs[i]);
		ret = ret ?: write_str(path, start);
		snprintf(path, sizeof(path), "/sys/kernel/debug/%s/require-end", attrs[i]);
		ret = ret ?: write_str(path, end);
	}
	return ret;
}

static bool is_kworker(int pid)
{
	char path[64], comm[16] = "";
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (read(fd, comm, sizeof(comm) - 1) < 0)
		comm[0] = '\0';
	close(fd);
	return strncmp(comm, "kworker/", 8) == 0;
}

static void arm_workers(unsigned int nth)
{
	DIR *proc = opendir("/proc");
	struct dirent *d;
	char path[64], buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", nth);

	n_workers = 0;
	while (proc && (d = readdir(proc)) && n_workers < MAX_WORKERS) {
		int pid = atoi(d->d_name), fd;

		if (pid <= 0 || !is_kworker(pid))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/fail-nth", pid, pid);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (pwrite(fd, buf, len, 0) != len) {
			close(fd);
			continue;
		}
		worker_fd[n_workers++] = fd;
	}
	if (proc)
		closedir(proc);
}

/*
 * Set by disarm_workers() when no armed kworker counted an allocation
 * under the stack filter: the work ran in a kworker born after they were
 * armed (or beyond MAX_WORKERS), and the run says nothing about @nth. An
 * operation whose work allocates nothing under the filter stays unseen
 * and fails.
 */
static bool work_unseen;
/*
 * A new kworker is rare: runs no armed kworker saw are tried again up to
 * this many times in a row; one more means the arming misses them all.
 */
#define MAX_UNSEEN 20

/* True if a kworker reached its failure, armed at @nth; leaves none armed. */
static bool disarm_workers(unsigned int nth)
{
	bool injected = false;

	work_unseen = true;
	for (unsigned int i = 0; i < n_workers; i++) {
		char buf[16] = "";
		unsigned int left = nth;

		if (pread(worker_fd[i], buf, sizeof(buf) - 1, 0) > 0)
			left = strtoul(buf, NULL, 10);
		injected |= left == 0;
		/* The count goes down only under the stack filter. */
		work_unseen &= left == nth;
		pwrite(worker_fd[i], "0", 1, 0);
		close(worker_fd[i]);
	}
	n_workers = 0;
	return injected;
}

/* ---- the kernel log ------------------------------------------------------ */

/*
 * The window of the kernel log policy (lib/kernel_log_policy.def) inside
 * which harness/verdict.sh expects upstream's WARN for a failed kernel
 * commit, and only that.
 */
#define FAULT_WINDOW "kms_fault"

/*
 * While set, the call site in this function of the allocation a dumped
 * failure failed (verbose 2 logs "FAULT_INJECTION: forcing a failure" and
 * the stack, unless the allocation asked for __GFP_NOWARN, as kmemleak's
 * and KASAN's own do): its offset, the return address the stack
 * filter sees, goes to fault_site. The first reliable frame of the
 * function after the notice is the call that allocated; a frame marked
 * "? " is a stale address the unwinder found on the stack (an earlier
 * call's, from the same function).
 */
static const char *fault_site_in;
static unsigned long fault_site;
static bool fault_site_next;

/*
 * Both attributes log each failure they inject with its stack, or nothing.
 * The stacks go to the kernel log, which kms_fault reads, and not to the
 * console, where harness/verdict.sh takes every "Call Trace:" for a
 * report: dump_stack() prints at the default message level, KERN_DEBUG
 * meanwhile, below the console's level. A report still shows there by its
 * first line, which WARN, BUG, KASAN and lockdep print at their own level.
 */
static int fault_dumps(bool on)
{
	static int level[4] = { -1 };
	char buf[64] = "";
	int fd = open("/proc/sys/kernel/printk", O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0 && level[0] < 0 &&
	    sscanf(buf, "%d %d %d %d", &level[0], &level[1], &level[2], &level[3]) != 4)
		level[0] = -1;
	if (fd >= 0)
		close(fd);
	if (level[0] < 0)
		return -ENOENT;
	snprintf(buf, sizeof(buf), "%d %d %d %d", level[0], on ? 7 : level[1], level[2],
		 level[3]);
	return write_str("/proc/sys/kernel/printk", buf) ?:
	       write_str("/sys/kernel/debug/failslab/verbose", on ? "2" : "0") ?:
	       write_str("/sys/kernel/debug/fail_page_alloc/verbose", on ? "2" : "0");
}

static void note_fault_site(const char *msg)
{
	char frame[128];
	const char *f;

	if (!fault_site_in)
		return;
	if (strstr(msg, "FAULT_INJECTION: forcing a failure")) {
		fault_site_next = true;
		return;
	}
	snprintf(frame, sizeof(frame), "%s+0x", fault_site_in);
	f = strstr(msg, frame);
	if (!fault_site_next || !f || (f - msg >= 2 && !strncmp(f - 2, "? ", 2)))
		return;
	if (sscanf(f + strlen(frame), "%lx/", &fault_site) == 1)
		fault_site_next = false;
}

/* Upstream WARNs of the policy, counted when their trace names the caller. */
static unsigned int upstream_warns;

/*
 * The first report the kernel logged since the last call, copied to @buf.
 * Upstream's WARN for a failed kernel commit is not a report when
 * @expect_warn: its errno goes to @warn_errno instead, and its trace up to
 * "end trace" is skipped.
 */
static bool kmsg_splat(char *buf, size_t len, bool expect_warn, int *warn_errno)
{
	/* A trace may still be arriving at the end of a call: kept for the next. */
	static const struct kernel_warn_upstream *upstream;
	static char upstream_warn[256];
	static bool upstream_caller;
	const struct kernel_warn_expected *expected = kernel_log_expected_warn(FAULT_WINDOW);
	char rec[8192];
	bool found = false, in_warn = false;

	for (;;) {
		ssize_t n = read(kmsg_fd, rec, sizeof(rec) - 1);
		const char *msg, *w;

		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		msg = strchr(rec, ';') ? strchr(rec, ';') + 1 : rec;
		note_fault_site(msg);
		if (in_warn) {
			in_warn = !strstr(msg, "---[ end trace");
			continue;
		}
		if (upstream) {
			const char *frame = msg + strspn(msg, " ");

			if (!strncmp(frame, upstream->caller, strlen(upstream->caller)))
				upstream_caller = true;
			if (!strstr(msg, "---[ end trace"))
				continue;
			upstream = NULL;
			if (upstream_caller) {
				upstream_warns++;
			} else if (!found) {
				snprintf(buf, len, "%s", upstream_warn);
				found = true;
			}
			continue;
		}
		upstream = kernel_log_upstream_warn(msg);
		if (upstream) {
			snprintf(upstream_warn, sizeof(upstream_warn), "%.200s", msg);
			upstream_warn[strcspn(upstream_warn, "\n")] = '\0';
			upstream_caller = false;
			continue;
		}
		w = expected ? strstr(msg, expected->holds) : NULL;
		if (expect_warn && w && warn_errno && !*warn_errno) {
			*warn_errno = atoi(w + strlen(expected->holds));
			in_warn = true;
			continue;
		}
		if (!found && kernel_log_report(msg)) {
			snprintf(buf, len, "%.200s", msg);
			buf[strcspn(buf, "\n")] = '\0';
			found = true;
		}
	}
	return found;
}

/* ---- state and frame ----------------------------------------------------- */

/*
 * Framebuffer ids the kernel makes itself (the legacy cursor's) differ on
 * every call: compare those by size and format.
 */
static uint64_t fb_key(uint32_t fb_id)
{
	const struct kms_fb *own[] = {
		&rig.primary_fb, &rig.cursor_fb,
		&rig.overlay_fb[0][0], &rig.overlay_fb[0][1], &rig.overlay_fb[1][0],
		&rig.overlay_fb[1][1], &rig.overlay_fb[2][0], &rig.overlay_fb[2][1],
	};
	drmModeFB2Ptr fb;
	uint64_t key;

	if (!fb_id)
		return 0;
	if (fb_id == client_fb_id)
		return 100;
	if (fb_id == doomed_fb_id)
		return 101;
	for (size_t i = 0; i < ARRAY_SIZE(own); i++)
		if (own[i]->fb_id == fb_id)
			return i + 1;
	fb = drmModeGetFB2(rig.fd, fb_id);
	if (!fb)
		return ~0ull;
	key = 1ull << 63 | (uint64_t)fb->pixel_format << 32 | fb->width << 16 | fb->height;
	for (int i = 0; i < 4; i++)
		if (fb->handles[i] && (i == 0 || fb->handles[i] != fb->handles[0]))
			drmCloseBufferHandle(rig.fd, fb->handles[i]);
	drmModeFreeFB2(fb);
	return key;
}

static bool is_rect_prop(const char *name)
{
	static const char *const rect[] = {
		"CRTC_X", "CRTC_Y", "CRTC_W", "CRTC_H", "SRC_X", "SRC_Y", "SRC_W", "SRC_H",
	};

	for (size_t i = 0; i < ARRAY_SIZE(rect); i++)
		if (strcmp(name, rect[i]) == 0)
			return true;
	return false;
}

static void read_props(struct snapshot *s, uint32_t id, uint32_t type)
{
	drmModeObjectPropertiesPtr props = drmModeObjectGetProperties(rig.fd, id, type);
	unsigned int i = s->n_objs++;
	bool rect_prop[MAX_PROPS] = { false }, shown = true;

	s->obj[i].id = id;
	s->obj[i].n = 0;
	if (!props)
		return;
	for (uint32_t p = 0; p < props->count_props && p < MAX_PROPS; p++) {
		drmModePropertyPtr prop = drmModeGetProperty(rig.fd, props->props[p]);
		uint64_t v = props->prop_values[p];

		if (prop && strcmp(prop->name, "FB_ID") == 0) {
			v = fb_key(v);
			shown = v != 0;
		}
		if (prop && is_rect_prop(prop->name))
			rect_prop[p] = true;
		drmModeFreeProperty(prop);
		s->obj[i].prop[p] = props->props[p];
		s->obj[i].value[p] = v;
		s->obj[i].n++;
	}
	drmModeFreeObjectProperties(props);
	/*
	 * A plane without a framebuffer shows nothing, and its rectangles are
	 * whatever the last commit that disabled it left: they depend on the
	 * operations run before, not on this one.
	 */
	for (unsigned int p = 0; p < s->obj[i].n && !shown; p++)
		if (rect_prop[p])
			s->obj[i].value[p] = 0;
}

/* Properties and cursor state only: reading them commits nothing. */
static void snapshot_state(struct snapshot *s)
{
	s->n_objs = 0;
	read_props(s, rig.kms.crtc_id, DRM_MODE_OBJECT_CRTC);
	read_props(s, rig.kms.primary_id, DRM_MODE_OBJECT_PLANE);
	for (int i = 0; i < SCENE_MAX_OVERLAYS; i++)
		read_props(s, rig.kms.overlay_ids[i], DRM_MODE_OBJECT_PLANE);
	read_props(s, rig.kms.cursor_id, DRM_MODE_OBJECT_PLANE);
	s->cs_ret = vkms_read_cursor_state(rig.debugfs, &s->cs);
}

/*
 * The frame: a writeback-only commit, which changes no plane. While the
 * second client is DRM master, the rig takes master back for it.
 */
static void snapshot_frame(struct snapshot *s)
{
	bool swap = client_fd >= 0;

	if (swap && (drmDropMaster(client_fd) || drmSetMaster(rig.fd))) {
		s->frame_ret = -errno;
		return;
	}
	s->frame_ret = scene_capture(&rig, NULL, &s->frame);
	if (swap && (drmDropMaster(rig.fd) || drmSetMaster(client_fd)) && !s->frame_ret)
		s->frame_ret = -errno;
}

/* The property of @b that differs from @a, for the diagnostics. */
static bool same_state(const struct snapshot *a, const struct snapshot *b,
		       char *why, size_t len)
{
	if (a->n_objs != b->n_objs) {
		snprintf(why, len, "objects read back differ");
		return false;
	}
	for (unsigned int i = 0; i < a->n_objs; i++) {
		if (a->obj[i].n != b->obj[i].n) {
			snprintf(why, len, "object %u: property count", a->obj[i].id);
			return false;
		}
		for (unsigned int p = 0; p < a->obj[i].n; p++) {
			if (a->obj[i].prop[p] != b->obj[i].prop[p] ||
			    a->obj[i].value[p] != b->obj[i].value[p]) {
				snprintf(why, len, "object %u property %u: %#llx, not %#llx",
					 a->obj[i].id, a->obj[i].prop[p],
					 (unsigned long long)b->obj[i].value[p],
					 (unsigned long long)a->obj[i].value[p]);
				return false;
			}
		}
	}
	if (a->cs_ret != b->cs_ret || (!a->cs_ret &&
	    (a->cs.mode != b->cs.mode || a->cs.cursor_on != b->cs.cursor_on ||
	     a->cs.pipes_used != b->cs.pipes_used || a->cs.legacy_safe != b->cs.legacy_safe))) {
		snprintf(why, len, "vkms cursor state: %s, not %s",
			 b->cs_ret ? "unreadable" : cursor_mode_name(b->cs.mode),
			 a->cs_ret ? "unreadable" : cursor_mode_name(a->cs.mode));
		return false;
	}
	return true;
}

/* Snapshots own their frames: copy the pixels, not the pointer. */
static void snapshot_copy(struct snapshot *dst, const struct snapshot *src)
{
	struct image frame = dst->frame;

	*dst = *src;
	dst->frame = frame;
	memcpy(frame.px, src->frame.px, (size_t)frame.w * frame.h * 4 * sizeof(*frame.px));
}

static bool same_frame(const struct snapshot *a, const struct snapshot *b)
{
	int x, y;

	return !a->frame_ret && !b->frame_ret && image_diff(&a->frame, &b->frame, &x, &y) == 0;
}

/* ---- policies and preparations ------------------------------------------- */

/*
 * The cap holder commits by taking master (rig_open_holder()); the rig goes
 * back to its own file for the ordinary commit after every call.
 */
static int set_policy(enum policy p)
{
	int ret = rig_commit_from(&rig, p == CAP ? rig.holder_fd : rig.plain_fd);

	ret = ret ?: set_per_pipe(p != PLANE);
	ret = ret ?: set_protect_legacy(p != UNGUARDED);
	if (have_amdgpu_rule())
		ret = ret ?: set_amdgpu_rule(p == AMDGPU ? AMDGPU_RULE_FIXED : AMDGPU_RULE_OFF);
	return ret;
}

/* The primary alone, no cursor, default pipes, no capability: every op's start. */
static int ordinary_commit(void)
{
	struct scene s;
	int ret;

	ret = rig_commit_from(&rig, rig.plain_fd) ?: set_per_pipe(true) ?:
	      set_protect_legacy(true) ?: set_hw_pipes(HW_PIPES_DEFAULT);
	if (!ret && have_amdgpu_rule())
		ret = set_amdgpu_rule(AMDGPU_RULE_OFF);
	scene_default(&s);
	return ret ?: scene_commit(&rig, &s, 0);
}

static int prepare_default(const struct op *op)
{
	return set_policy(op->policy);
}

/* The scene committed for real, then the pipe budget the op runs with. */
static int prepare_scene(const struct op *op)
{
	int ret = set_policy(op->policy) ?: scene_commit(&rig, op->from ?: &op->scene, 0);

	return ret ?: set_hw_pipes(op->hw_pipes ?: HW_PIPES_DEFAULT);
}

/*
 * The scene committed with the emulation off and a smaller pipe budget:
 * the next check with the emulation on must describe the old planes itself
 * (they were never described) to see that the commit keeps them.
 */
static int prepare_emulation_off(const struct op *op)
{
	int ret = set_policy(PLANE) ?: scene_commit(&rig, &op->scene, 0);

	return ret ?: set_hw_pipes(op->hw_pipes);
}

/* The scene's planes without the cursor: the legacy cursor comes next. */
static int prepare_no_cursor(const struct op *op)
{
	struct scene s = op->scene;

	s.cursor.on = false;
	return set_policy(op->policy) ?: scene_commit(&rig, &s, 0);
}

/*
 * A framebuffer of @fd's own, filled with @argb, put on overlay 0 by @fd:
 * what the call takes away is then that file's, not the rig's. @id keeps
 * its id for fb_key() after the call took it.
 */
static int show_own_fb(int fd, struct kms_fb *fb, uint32_t *id, uint32_t argb)
{
	drmModeAtomicReqPtr req;
	int ret;

	ret = kms_fb_create(fd, SCENE_W, SCENE_H, DRM_FORMAT_XRGB8888, fb);
	if (ret)
		return ret;
	kms_fb_fill(fb, argb);
	*id = fb->fb_id;
	req = drmModeAtomicAlloc();
	if (!req)
		return -ENOMEM;
	ret = kms_add(fd, req, rig.kms.overlay_ids[0], DRM_MODE_OBJECT_PLANE, "FB_ID", fb->fb_id);
	ret = ret ?: kms_commit(fd, req, 0);
	drmModeAtomicFree(req);
	return ret;
}

/* Overlay 0 shows a framebuffer of its own, which RMFB removes. */
static int prepare_doomed_fb(const struct op *op)
{
	int ret = set_policy(op->policy) ?: scene_commit(&rig, &op->scene, 0);

	return ret ?: show_own_fb(rig.fd, &doomed_fb, &doomed_fb_id, 0xff2080c0);
}

/*
 * A second client, DRM master, puts overlay 0 up with a framebuffer of its
 * own; the rig's file gives master up meanwhile.
 */
static int prepare_client(const struct op *op)
{
	int ret;

	ret = set_policy(op->policy) ?: scene_commit(&rig, &op->scene, 0);
	if (ret)
		return ret;
	drmDropMaster(rig.fd);
	client_fd = open(card_path, O_RDWR | O_CLOEXEC);
	if (client_fd < 0)
		return -errno;
	if (drmSetMaster(client_fd) || kms_set_cap(client_fd, DRM_CLIENT_CAP_ATOMIC, 1))
		return -errno;
	ret = show_own_fb(client_fd, &client_fb, &client_fb_id, 0xffc08020);
	/*
	 * The mapping holds the file: close() releases it only once unmapped.
	 * Unmapped here, not in the call, where the armed failure can fail
	 * munmap() itself (6.1's maple tree preallocates its nodes) and keep
	 * the file, its master and its plane alive behind a close() that
	 * returned 0.
	 */
	if (client_fb.pixels && munmap(client_fb.pixels, client_fb.size) && !ret)
		ret = -errno;
	client_fb.pixels = NULL;
	return ret;
}

static void after_doomed_fb(const struct op *op)
{
	(void)op;
	/* RMFB took the framebuffer; the dumb buffer is still ours. */
	doomed_fb.fb_id = 0;
	kms_fb_destroy(rig.fd, &doomed_fb);
}

static void after_client(const struct op *op)
{
	(void)op;
	if (client_fd >= 0) {
		/* The call failed before the file was closed. */
		kms_fb_destroy(client_fd, &client_fb);
		close(client_fd);
	}
	memset(&client_fb, 0, sizeof(client_fb));
	client_fd = -1;
	drmSetMaster(rig.fd);
}

/* ---- the operations ------------------------------------------------------ */

static int run_commit(const struct op *op)
{
	return scene_commit(&rig, &op->scene, op->flags);
}

/* The emulation on again, and the same planes committed. */
static int run_emulation_on(const struct op *op)
{
	int ret = set_policy(op->policy);

	return ret ?: scene_commit(&rig, &op->scene, op->flags);
}

/*
 * The frame is read back with the emulation off, as before the call: its
 * writeback commit would otherwise be the first check with it on.
 */
static void after_emulation_on(const struct op *op)
{
	(void)op;
	set_per_pipe(false);
}

static struct image wb_frame;

static int run_writeback(const struct op *op)
{
	(void)op;
	return scene_capture(&rig, NULL, &wb_frame);
}

static int errno_of(int ret)
{
	return ret ? -errno : 0;
}

static int run_legacy_set(const struct op *op)
{
	return errno_of(drmModeSetCursor(rig.fd, rig.kms.crtc_id, rig.cursor_fb.handle,
					 op->scene.cursor.w, op->scene.cursor.h));
}

static int run_legacy_move(const struct op *op)
{
	return errno_of(drmModeMoveCursor(rig.fd, rig.kms.crtc_id, op->scene.cursor.x + 7,
					  op->scene.cursor.y + 5));
}

static int run_rmfb(const struct op *op)
{
	(void)op;
	return errno_of(drmModeRmFB(rig.fd, doomed_fb.fb_id));
}

/* A new file that opts in: open, the atomic cap, then DRM_CLIENT_CAP_NO_LEGACY_CURSOR. */
static int run_open_opt_in(const struct op *op)
{
	int fd = open(card_path, O_RDWR | O_CLOEXEC);
	int ret;

	(void)op;
	if (fd < 0)
		return -errno;
	ret = kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 1);
	ret = ret ?: kms_set_cap(fd, DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 1);
	close(fd);
	return ret;
}

static int run_close(const struct op *op)
{
	int ret;

	(void)op;
	ret = close(client_fd) ? -errno : 0;
	client_fd = -1;
	return ret;
}

/* ---- the loop ------------------------------------------------------------ */

static struct snapshot ref_before, ref_after, before, after;

/*
 * Set by a targeted run (targets[]): only the allocations with this
 * function on the stack are counted and failed, in this task and, for the
 * kernel's own commit, in the kworkers.
 */
static const struct text_range *target;
/*
 * Its call site in fault_site_in, or 0 for a function with text of its
 * own: the frame every failure a targeted run injects must be logged at.
 */
static unsigned long target_site;

/*
 * Whether the failure of the last run was logged at the target: the
 * filter is not taken on trust (a kernel whose fail-nth counted before
 * asking it would fail others' allocations).
 */
static bool on_target(void)
{
	return fault_site && (!target_site || fault_site == target_site);
}

/*
 * One run of @op: prepared, read back, the call with the @nth allocation
 * failed (0: none), read back again. Returns the call's result; @injected
 * says whether the failure was reached.
 */
static int run_once(const struct op *op, unsigned int nth, bool *injected, char *splat,
		    size_t splat_len, int *prepare_ret)
{
	int ret, warn_errno = 0;

	*prepare_ret = op->prepare(op);
	/*
	 * The frame is read through a writeback commit, which checks the CRTC
	 * again and may choose another cursor mode: the state the call starts
	 * from is read after it, the state the call leaves before the next one.
	 */
	snapshot_frame(&before);
	snapshot_state(&before);
	kmsg_splat(splat, splat_len, false, NULL);
	splat[0] = '\0';

	if (nth && (op->kernel_commit || (target && have_stack_filter)) &&
	    stack_filter(target ?: &rmfb_work)) {
		/*
		 * Unfiltered, the kworkers would fail anyone's allocations, and
		 * a targeted run would fail others than its target's.
		 */
		tap_diag("%s: no stack filter for the fault attributes: not injected", op->name);
		stack_filter(NULL);
		ret = op->run(op);
		*injected = false;
	} else if (nth && op->kernel_commit) {
		kms_write_file("/dev/kmsg", kernel_log_window_marker(FAULT_WINDOW, true));
		arm_workers(nth);
		ret = op->run(op);
		*injected = disarm_workers(nth);
		stack_filter(NULL);
		kms_write_file("/dev/kmsg", kernel_log_window_marker(FAULT_WINDOW, false));
	} else if (nth && (op->run == run_commit || op->run == run_writeback ||
			   op->run == run_emulation_on)) {
		/* Armed inside, once libdrm has built the request. */
		armed_nth = nth;
		rig.commit = armed_commit;
		ret = op->run(op);
		rig.commit = NULL;
		*injected = disarm();
	} else if (nth) {
		arm(nth);
		ret = op->run(op);
		*injected = disarm();
	} else {
		ret = op->run(op);
		*injected = false;
	}
	if (nth && target && have_stack_filter)
		stack_filter(NULL);
	snapshot_state(&after);
	if (op->after)
		op->after(op);
	if (!kmsg_splat(splat, splat_len, *injected && op->kernel_commit, &warn_errno))
		splat[0] = '\0';
	/* The call itself returns 0: its commit's error is in the WARN. */
	if (*injected && op->kernel_commit && !ret)
		ret = warn_errno;
	snapshot_frame(&after);
	return ret;
}

/*
 * The call fails its 1st, 2nd, ... allocation until it runs clean. Returns
 * false if it was still reaching failures after max_points.
 */
static bool sweep(const struct op *op, struct result *r)
{
	char splat[256], why[160] = "";
	int ret, prepare_ret;
	bool injected;
	unsigned int nth, missed = 0;

	for (nth = 1; nth <= max_points; nth++) {
		work_unseen = false;
		fault_site = 0;
		fault_site_next = false;
		ret = run_once(op, nth, &injected, splat, sizeof(splat), &prepare_ret);
		/* That nth proved nothing: tried again, in the kworkers of now. */
		if (work_unseen) {
			r->unseen++;
			if (splat[0] && !r->splats++)
				tap_diag("%s: fail-nth %u, unseen: kernel report: %s",
					 op->name, nth, splat);
			if (++missed > MAX_UNSEEN) {
				tap_diag("%s: fail-nth %u: %u runs no armed kworker saw: stopped",
					 op->name, nth, missed);
				break;
			}
			nth--;
			ordinary_commit();
			continue;
		}
		missed = 0;
		if (prepare_ret || !same_state(&ref_before, &before, why, sizeof(why)) ||
		    !same_frame(&ref_before, &before)) {
			if (!r->prepare_drift++)
				tap_diag("%s: fail-nth %u: the preparation left another state (%s)",
					 op->name, nth, prepare_ret ? strerror(-prepare_ret) : why);
		}
		if (!injected) {
			/* Every point passed: this run must equal the undisturbed one. */
			if (ret || !same_state(&ref_after, &after, why, sizeof(why)))
				r->wrong_state++;
			if (!same_frame(&ref_after, &after))
				r->wrong_frame++;
			if (splat[0] && !r->splats++)
				tap_diag("%s: kernel report: %s", op->name, splat);
			break;
		}
		r->points++;
		if (splat[0] && !r->splats++)
			tap_diag("%s: fail-nth %u: kernel report: %s", op->name, nth, splat);
		if (ret && ret != -ENOMEM && !r->bad_errno++)
			r->first_bad_errno = ret;
		if (ret) {
			r->failed_calls++;
			if (target && fault_site_in && on_target())
				r->at_target++;
			else if (target && fault_site_in && !r->off_target++ && have_stack_filter)
				tap_diag("%s: fail-nth %u: the call failed, but no failure was logged at %s",
					 op->name, nth, target->symbol);
			if (!same_state(&before, &after, why, sizeof(why)) && !r->state_changed++)
				tap_diag("%s: fail-nth %u: %s failed, but the state changed: %s",
					 op->name, nth, strerror(-ret), why);
			if (!same_frame(&before, &after) && !r->wrong_frame++)
				tap_diag("%s: fail-nth %u: the frame after the failed call is not the one before",
					 op->name, nth);
		} else {
			r->succeeded_injected++;
			if (!same_state(&ref_after, &after, why, sizeof(why)) && !r->wrong_state++)
				tap_diag("%s: fail-nth %u: succeeded with a failed allocation, but left another state: %s",
					 op->name, nth, why);
			if (!same_frame(&ref_after, &after) && !r->wrong_frame++)
				tap_diag("%s: fail-nth %u: succeeded, but the frame is not the undisturbed run's",
					 op->name, nth);
		}
		if (ordinary_commit() && !r->next_commit_failed++)
			tap_diag("%s: fail-nth %u: the next ordinary commit failed", op->name, nth);
	}
	ordinary_commit();
	if (nth > max_points)
		tap_diag("%s: still injecting after %u points: stopped there", op->name, max_points);
	return nth <= max_points && missed <= MAX_UNSEEN;
}

static struct tap_name_buf check_name(enum check check, const struct op *op)
{
	return tap_name_fmt("%s@%s", check_names[check], op->name);
}

/* Every check of @op failed, or skipped with @skip, for @why. */
static void report_not_run(const struct op *op, bool skip, const char *why)
{
	for (int i = 0; i < CHECKS_PER_OP; i++) {
		if (skip)
			tap_skip(check_name(i, op).s, "%s", why);
		else
			tap_okf(false, check_name(i, op).s, "%s", why);
	}
}

static void run_op(const struct op *op)
{
	struct result r = { .mode = CURSOR_MODES };
	char splat[256];
	int ret, prepare_ret;
	bool injected, ended = true;
	/*
	 * Without a stack filter a targeted run sweeps the whole call, and
	 * the count KASAN and kmemleak shift may step over the target: swept
	 * again until it failed a call.
	 */
	bool until_on_target = target && fault_site_in && !have_stack_filter;

	/*
	 * fail-nth and the task filter (make-it-fail) count every allocation
	 * of a task; a kworker runs anyone's work.
	 */
	if (op->kernel_commit && !have_stack_filter) {
		report_not_run(op, true, NO_STACK_FILTER ": the kworker committing for the call cannot be failed alone");
		if (target) {
			tap_skip(tap_name("failed-at-the-target@%s", op->name), NO_STACK_FILTER);
			tap_skip(tap_name("target-failed@%s", op->name), NO_STACK_FILTER);
		}
		return;
	}

	ret = run_once(op, 0, &injected, splat, sizeof(splat), &prepare_ret);
	snapshot_copy(&ref_before, &before);
	snapshot_copy(&ref_after, &after);
	if (prepare_ret || ret || splat[0] || ref_after.cs_ret || ref_after.frame_ret ||
	    (op->expect_mode != CURSOR_MODES && ref_after.cs.mode != op->expect_mode)) {
		tap_diag("%s: the undisturbed run failed: prepare %d, call %d, mode %s%s%s",
			 op->name, prepare_ret, ret,
			 ref_after.cs_ret ? "?" : cursor_mode_name(ref_after.cs.mode),
			 splat[0] ? ", kernel: " : "", splat);
		report_not_run(op, false, "the undisturbed run failed");
		ordinary_commit();
		return;
	}
	r.mode = ref_after.cs.mode;
	ordinary_commit();

	while (r.sweeps < sweeps ||
	       (until_on_target && !r.at_target && r.sweeps < MAX_TARGET_SWEEPS)) {
		ended = sweep(op, &r) && ended;
		r.sweeps++;
	}

	tap_diag("%s (%s, mode %s): %u injection points in %u sweeps, %u calls failed, %u succeeded anyway, %u runs in no armed kworker",
		 op->name, policy_name[op->policy], cursor_mode_name(r.mode), r.points, r.sweeps,
		 r.failed_calls, r.succeeded_injected, r.unseen);
	/*
	 * 6.1's close() allocates nothing in the closing task: its commit
	 * runs in a kworker. There is nothing to fail, which is not a pass.
	 */
	if (op->cannot_fail && !r.points && ended) {
		report_not_run(op, true, "the call made no allocation in this task: fail-nth 1 was still armed after it");
		return;
	}
	/*
	 * kmemleak and KASAN allocate for themselves inside the call and
	 * survive a failure: only a call that failed proves the injection
	 * reached the operation's own allocations.
	 */
	tap_okf(r.points > 0 && (r.failed_calls > 0 || op->cannot_fail) && ended,
		check_name(CHECK_REACHED, op).s, "%u points, %u calls failed, %s",
		r.points, r.failed_calls,
		ended ? "ran clean at last" : "stopped before a clean run");
	tap_okf(!r.bad_errno, check_name(CHECK_ENOMEM, op).s, "%u failed otherwise%s%s",
		r.bad_errno, r.bad_errno ? ", first with " : "",
		r.bad_errno ? strerror(-r.first_bad_errno) : "");
	tap_okf(!r.splats, check_name(CHECK_NO_REPORT, op).s, "%u runs with a kernel report",
		r.splats);
	/* A failed call changed nothing, a successful one left the undisturbed state. */
	tap_okf(!r.state_changed && !r.wrong_state && !r.prepare_drift,
		check_name(CHECK_STATE, op).s,
		"%u failed calls changed the state, %u runs left another, %u preparations drifted",
		r.state_changed, r.wrong_state, r.prepare_drift);
	tap_okf(!r.wrong_frame, check_name(CHECK_FRAME, op).s, "%u frames differ", r.wrong_frame);
	tap_okf(!r.next_commit_failed, check_name(CHECK_NEXT_COMMIT, op).s,
		"%u ordinary commits failed", r.next_commit_failed);
	if (target && fault_site_in && have_stack_filter)
		tap_okf(!r.off_target, tap_name("failed-at-the-target@%s", op->name),
			"%u of %u failed calls failed elsewhere", r.off_target, r.failed_calls);
	else if (target && fault_site_in)
		tap_skip(tap_name("failed-at-the-target@%s", op->name),
			 NO_STACK_FILTER ": the sweep fails upstream's allocations of the call too (%u failed calls, checked as above)",
			 r.off_target);
	else if (target)
		tap_skip(tap_name("failed-at-the-target@%s", op->name),
			 "the kernel's own commit: upstream's WARN must reach the console whole, without stack dumps");
	if (target && fault_site_in)
		tap_okf(r.at_target > 0, tap_name("target-failed@%s", op->name),
			"%u failed calls failed at %s, in %u sweeps", r.at_target, target->symbol,
			r.sweeps);
	else if (target)
		tap_skip(tap_name("target-failed@%s", op->name),
			 "the kernel's own commit: no stack dumps to see where it failed");
	total_points += r.points;
	total_failed_calls += r.failed_calls;
	total_at_target += r.at_target;
}

/* ---- the list ------------------------------------------------------------ */

#define PLANE_AT(x_, y_, w_, h_, sw, sh, z) \
	{ .on = true, .x = (x_), .y = (y_), .w = (w_), .h = (h_), .src_w = (sw), .src_h = (sh), .zpos = (z) }
#define PRIMARY PLANE_AT(0, 0, SCENE_W, SCENE_H, SCENE_W, SCENE_H, 0)
#define CURSOR { .on = true, .x = 40, .y = 30, .w = 64, .h = 64 }

/* Primary and cursor: one copy per pipe shows it right. */
#define NATIVE_SCENE { .primary = PRIMARY, .overlay = { { .zpos = 1 }, { .zpos = 2 }, { .zpos = 3 } }, .cursor = CURSOR }
/* The cursor over an overlay scaled 2x: a pipe of its own. */
#define SCALED_SCENE { .primary = PRIMARY, \
	.overlay = { PLANE_AT(16, 16, 128, 80, 64, 40, 1), { .zpos = 2 }, { .zpos = 3 } }, .cursor = CURSOR }
static const struct scene scaled_scene = SCALED_SCENE;

#define COMMITS(what, scene_, flags_, mode_) \
	{ what "-cap", CAP, prepare_default, run_commit, .scene = scene_, .flags = flags_, \
	  .expect_mode = mode_ }, \
	{ what "-guarded", GUARDED, prepare_default, run_commit, .scene = scene_, \
	  .flags = flags_, .expect_mode = mode_ }, \
	{ what "-unguarded", UNGUARDED, prepare_default, run_commit, .scene = scene_, \
	  .flags = flags_, .expect_mode = mode_ }, \
	{ what "-amdgpu-rule", AMDGPU, prepare_default, run_commit, .scene = scene_, \
	  .flags = flags_, .expect_mode = mode_ }

static const struct op ops[] = {
	/*
	 * A TEST_ONLY commit runs the real one's check, and the policies
	 * differ in the verdict, not in what the check allocates: two of them.
	 */
	{ "test-only-native-cap", CAP, prepare_default, run_commit, .scene = NATIVE_SCENE,
	  .flags = DRM_MODE_ATOMIC_TEST_ONLY, .expect_mode = CURSOR_MODES },
	{ "test-only-dedicated-guarded", GUARDED, prepare_default, run_commit,
	  .scene = SCALED_SCENE, .flags = DRM_MODE_ATOMIC_TEST_ONLY, .expect_mode = CURSOR_MODES },
	{ "test-only-emulation-off", PLANE, prepare_default, run_commit, .scene = SCALED_SCENE,
	  .flags = DRM_MODE_ATOMIC_TEST_ONLY, .expect_mode = CURSOR_MODES },
	COMMITS("commit-native", NATIVE_SCENE, 0, CURSOR_NATIVE),
	COMMITS("commit-dedicated", SCALED_SCENE, 0, CURSOR_DEDICATED),
	{ "commit-emulation-off", PLANE, prepare_default, run_commit, .scene = SCALED_SCENE,
	  .expect_mode = CURSOR_PLANE },
	/* Planes kept while the pipe budget shrank: a commit that may not fail. */
	{ "commit-hidden-guarded", GUARDED, prepare_scene, run_writeback, .scene = SCALED_SCENE,
	  .hw_pipes = 2, .expect_mode = CURSOR_HIDDEN },
	/* The same planes, first checked with the emulation on: they are kept. */
	{ "commit-emulation-switched-on-guarded", GUARDED, prepare_emulation_off,
	  run_emulation_on, after_emulation_on, .scene = SCALED_SCENE, .hw_pipes = 2,
	  .expect_mode = CURSOR_HIDDEN },
	{ "writeback-emulation-on", GUARDED, prepare_scene, run_writeback, .scene = SCALED_SCENE,
	  .expect_mode = CURSOR_DEDICATED },
	{ "writeback-emulation-off", PLANE, prepare_scene, run_writeback, .scene = SCALED_SCENE,
	  .expect_mode = CURSOR_PLANE },
	{ "legacy-set-guarded", GUARDED, prepare_no_cursor, run_legacy_set, .scene = NATIVE_SCENE,
	  .expect_mode = CURSOR_NATIVE },
	{ "legacy-set-unguarded", UNGUARDED, prepare_no_cursor, run_legacy_set,
	  .scene = NATIVE_SCENE, .expect_mode = CURSOR_NATIVE },
	{ "legacy-set-scaled-guarded", GUARDED, prepare_no_cursor, run_legacy_set,
	  .scene = SCALED_SCENE, .expect_mode = CURSOR_DEDICATED },
	{ "legacy-set-amdgpu-rule", AMDGPU, prepare_no_cursor, run_legacy_set,
	  .scene = SCALED_SCENE, .expect_mode = CURSOR_DEDICATED },
	{ "legacy-move-guarded", GUARDED, prepare_scene, run_legacy_move, .scene = SCALED_SCENE,
	  .expect_mode = CURSOR_DEDICATED },
	{ "legacy-move-unguarded", UNGUARDED, prepare_scene, run_legacy_move,
	  .scene = NATIVE_SCENE, .expect_mode = CURSOR_NATIVE },
	{ "open-and-opt-in", GUARDED, prepare_scene, run_open_opt_in, .scene = SCALED_SCENE,
	  .expect_mode = CURSOR_DEDICATED },
	/* Overlay 0 off again: what the kernel commits after RMFB, made by the client. */
	{ "disable-only-cap", CAP, prepare_scene, run_commit, .scene = NATIVE_SCENE,
	  .from = &scaled_scene, .expect_mode = CURSOR_NATIVE },
	{ "disable-only-guarded", GUARDED, prepare_scene, run_commit, .scene = NATIVE_SCENE,
	  .from = &scaled_scene, .expect_mode = CURSOR_NATIVE },
	{ "rmfb-on-plane-guarded", GUARDED, prepare_doomed_fb, run_rmfb, after_doomed_fb,
	  .scene = SCALED_SCENE, .expect_mode = CURSOR_NATIVE, .kernel_commit = true },
	{ "rmfb-on-plane-cap", CAP, prepare_doomed_fb, run_rmfb, after_doomed_fb,
	  .scene = SCALED_SCENE, .expect_mode = CURSOR_NATIVE, .kernel_commit = true },
	{ "close-with-planes-up-guarded", GUARDED, prepare_client, run_close, after_client,
	  .scene = SCALED_SCENE, .expect_mode = CURSOR_NATIVE, .kernel_commit = true },
	/* What close itself allocates, in the closing task. */
	{ "close-with-planes-up-closing-task", GUARDED, prepare_client, run_close, after_client,
	  .scene = SCALED_SCENE, .expect_mode = CURSOR_NATIVE, .cannot_fail = true },
};

/* ---- targeted runs ------------------------------------------------------- */

/*
 * A sweep fails the nth allocation of the whole call: upstream's
 * allocations alone meet its floor, and the series' own are hit only when
 * the count, which KASAN and kmemleak shift, happens to land on them. A
 * targeted run counts only the allocations made with one of the series'
 * functions on the stack: both fault attributes' stack filter
 * (require-start, require-end) covers that function's text, from its
 * address in /proc/kallsyms to the next symbol's.
 *
 * fail-nth honours the filter: 6.12's should_fail_ex() (lib/fault-inject.c)
 * asks fail_stacktrace() before it decrements the task's fail_nth, and
 * returns without failing or counting when no return address of the
 * stack lies in the range. So the nth allocation failed is the nth one
 * below the function, wherever the call's other allocations fall. The
 * failslab and fail_page_alloc attributes share the task's count, so both
 * get the filter. The function's own kzalloc() is the first count
 * (slab_pre_alloc_hook() asks before allocating); the later ones fail
 * what KASAN and kmemleak allocate for that object, which the call
 * survives, until a run reaches no allocation there.
 *
 * GCC inlines a static function called once, and then kallsyms has no
 * text of its own for it: the allocation is a call site inside the
 * function it went into, which holds upstream's allocations too. The
 * range is then that one call's return address, the frame the stack
 * filter sees. It is found by what the allocation does, not by a compiled
 * offset: with the stack dumps on, an operation that reaches the
 * allocation and one that reaches only the others (same planes, the
 * emulation off, or kept on) each list the call sites whose failure fails
 * the call (failing_sites()); the allocation is the one site in the first
 * list only.
 *
 * The filter is not taken on trust: with the stack dumps on during the
 * targeted runs, every call that failed must have had its failure logged
 * at the target (failed-at-the-target). A kernel whose fail-nth ignores
 * the filter fails that check instead of passing on upstream's
 * allocations.
 *
 * 6.1 has no filter on x86_64, and its fail-nth and task filter count
 * every allocation of a task. There a targeted run counts kmalloc() alone
 * (kmalloc_only()) and sweeps the operation's whole call, with the stack
 * dumps on, as many times as it takes (up to MAX_TARGET_SWEEPS) for a
 * failure logged at the target to fail a call (target-failed); every run
 * gets the sweep's checks, and the failures elsewhere are upstream's
 * allocations. The call sites are found by full sweeps likewise. The
 * kernel's own commit cannot be aimed at there: a kworker runs anyone's
 * work.
 */
struct target {
	/* The series' function, and where GCC may have inlined it. */
	const char *function, *inlined_into;
	/* ops[] reaching its allocation and, for the difference, one that does not. */
	const char *with, *without;
	/* ops[] run with its allocation targeted, each checked as in a sweep. */
	const char *ops[4];
	struct text_range text;
	/* Its allocation's call site in inlined_into, or 0: its own text. */
	unsigned long site;
};

static struct target targets[] = {
	/*
	 * Patch 16: the CRTC's layer stack, built in every check with the
	 * emulation on, whoever commits: an atomic commit, the legacy cursor
	 * ioctl through the atomic helpers, the kernel's commit after RMFB.
	 */
	{ .function = "vkms_crtc_build_layers", .inlined_into = "vkms_crtc_atomic_check",
	  .with = "commit-dedicated-guarded", .without = "commit-emulation-off",
	  .ops = { "commit-dedicated-guarded", "legacy-move-guarded", "rmfb-on-plane-guarded" } },
	/*
	 * Patch 17: the old planes described again, only in the first check
	 * with the emulation on after a state checked without it.
	 */
	{ .function = "vkms_crtc_planes_kept", .inlined_into = "vkms_crtc_atomic_check",
	  .with = "commit-emulation-switched-on-guarded", .without = "commit-dedicated-guarded",
	  .ops = { "commit-emulation-switched-on-guarded" } },
};

static const struct op *find_op(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++)
		if (strcmp(ops[i].name, name) == 0)
			return &ops[i];
	return NULL;
}

#define MAX_SITES 16
#define MAX_LOCATE_TRIES 3

struct sites {
	unsigned int n, reports;
	unsigned long off[MAX_SITES];
};

static bool has_site(const struct sites *s, unsigned long off)
{
	for (unsigned int i = 0; i < s->n; i++)
		if (s->off[i] == off)
			return true;
	return false;
}

/*
 * The call sites of @in whose failure fails a call of @op, added to @s,
 * walking the function's text upwards: under the text from just past the
 * last site found, the first allocation a run counts is the next site's
 * own (the kzalloc() asks before allocating), so no count that KASAN or
 * kmemleak shift decides what is found.
 */
/*
 * Without a stack filter: one sweep of @op's whole call, adding the site
 * of @in of every failure that failed the call.
 */
static int failing_sites_unfiltered(const struct op *op, const struct text_range *in,
				    struct sites *s)
{
	char splat[256];
	int ret, prepare_ret;
	bool injected = true;
	unsigned int nth;

	if (!op || fault_dumps(true))
		return -ENOENT;
	fault_site_in = in->name;
	for (nth = 1; nth <= max_points && injected; nth++) {
		fault_site = 0;
		fault_site_next = false;
		ret = run_once(op, nth, &injected, splat, sizeof(splat), &prepare_ret);
		if (splat[0] && !s->reports++)
			tap_diag("%s: fail-nth %u: kernel report: %s", op->name, nth, splat);
		if (injected && ret && fault_site && !has_site(s, fault_site) && s->n < MAX_SITES)
			s->off[s->n++] = fault_site;
		ordinary_commit();
	}
	fault_site_in = NULL;
	fault_dumps(false);
	return injected ? -E2BIG : 0;
}

static int failing_sites(const struct op *op, const struct text_range *in, struct sites *s)
{
	struct text_range above = *in;
	char splat[256];
	int ret = 0, prepare_ret;
	bool injected = true;
	unsigned long found = 0;

	if (!have_stack_filter)
		return failing_sites_unfiltered(op, in, s);
	if (!op || fault_dumps(true))
		return -ENOENT;
	fault_site_in = in->name;
	target = &above;
	do {
		found = 0;
		injected = true;
		for (unsigned int nth = 1; nth <= max_points && injected && !found; nth++) {
			fault_site = 0;
			fault_site_next = false;
			ret = run_once(op, nth, &injected, splat, sizeof(splat), &prepare_ret);
			if (splat[0] && !s->reports++)
				tap_diag("%s: fail-nth %u: kernel report: %s", op->name, nth, splat);
			if (injected && ret && fault_site && fault_site >= above.start - in->start)
				found = fault_site;
			ordinary_commit();
		}
		if (found && !has_site(s, found) && s->n < MAX_SITES)
			s->off[s->n++] = found;
		above.start = in->start + found + 1;
	} while (found && above.start < above.end);
	fault_site_in = NULL;
	target = NULL;
	fault_dumps(false);
	return injected && !found ? -E2BIG : 0;
}

static void print_sites(const char *what, const char *op, const struct sites *s)
{
	char list[MAX_SITES * 12] = "";
	size_t len = 0;

	for (unsigned int i = 0; i < s->n; i++)
		len += snprintf(list + len, sizeof(list) - len, " +%#lx", s->off[i]);
	tap_diag("%s %s: calls failed at%s", what, op, s->n ? list : " no site");
}

/*
 * @t's range: its own text, or the one call site that allocates only in
 * the operation that reaches it. Reported as the test allocation-located.
 */
static bool locate(struct target *t)
{
	struct text_range in = { .name = t->inlined_into };
	struct sites with = { 0 }, without = { 0 };
	unsigned long site = 0;
	unsigned int n = 0, tries = 0;
	int ret;

	t->text.name = t->function;
	t->site = 0;
	if (!find_text(&t->text))
		return tap_okf(true, "allocation-located", "%s: its own text, %#lx-%#lx",
			       t->text.symbol, t->text.start, t->text.end);
	ret = find_text(&in);
	if (ret)
		return tap_okf(false, "allocation-located", "neither %s nor %s in /proc/kallsyms",
			       t->function, t->inlined_into);
	/*
	 * The sites of a few walks together, until exactly one differs.
	 * Unfiltered sweeps step over a site now and then: then every walk
	 * is run, so that a site the walks without the allocation missed is
	 * not taken for it.
	 */
	do {
		tries++;
		ret = failing_sites(find_op(t->with), &in, &with) ?:
		      failing_sites(find_op(t->without), &in, &without);
		n = 0;
		for (unsigned int i = 0; i < with.n; i++) {
			if (!has_site(&without, with.off[i])) {
				site = with.off[i];
				n++;
			}
		}
	} while (!ret && (n != 1 || !have_stack_filter) && tries < MAX_LOCATE_TRIES);
	print_sites("with", t->with, &with);
	print_sites("without", t->without, &without);
	t->site = site;
	t->text.start = in.start + site;
	t->text.end = t->text.start + 1;
	snprintf(t->text.symbol, sizeof(t->text.symbol), "%.200s+%#lx", in.name, site);
	return tap_okf(!ret && n == 1 && !with.reports && !without.reports, "allocation-located",
		       "%s inlined into %s: %u call sites failed %s only, %u walks each%s%s",
		       t->function, t->inlined_into, n, t->with, tries,
		       ret ? ", a walk did not end: " : "", ret ? strerror(-ret) : "");
}

static void inject_target(struct target *t)
{
	/* Failures under one call site do not move: one sweep takes them all. */
	sweeps = 1;
	if (!have_stack_filter &&
	    !tap_okf(!kmalloc_only(true), "only-kmalloc-counted",
		     "failslab's cache filter on the kmalloc caches, no page order counted"))
		return;
	if (!locate(t)) {
		kmalloc_only(false);
		return;
	}
	tap_diag("%s: stack filter %#lx-%#lx", t->text.symbol, t->text.start, t->text.end);
	target_site = t->site;
	for (size_t i = 0; i < ARRAY_SIZE(t->ops) && t->ops[i]; i++) {
		const struct op *op = find_op(t->ops[i]);

		if (!op) {
			tap_okf(false, tap_name("operation-listed@%s", t->ops[i]),
				"kms_fault has no operation %s", t->ops[i]);
			continue;
		}
		/*
		 * Every failure logged with its stack, to see where it was
		 * injected; but for the kernel's own commit, whose upstream
		 * WARN the verdict excuses only as a block of its own, with
		 * its call trace on the console.
		 */
		if (!op->kernel_commit && fault_dumps(true)) {
			tap_okf(false, tap_name("stack-dumps-on@%s", op->name),
				"the fault attributes' verbose or the printk levels");
			continue;
		}
		fault_site_in = op->kernel_commit ? NULL :
				t->site ? t->inlined_into : t->function;
		target = &t->text;
		run_op(op);
		target = NULL;
		fault_site_in = NULL;
		fault_dumps(false);
	}
	if (!have_stack_filter)
		kmalloc_only(false);
	if (have_stack_filter)
		tap_diag("%s: %lu allocation failures injected below it, %lu of them failed the call",
			 t->function, total_points, total_failed_calls);
	else
		tap_diag("%s: %lu allocation failures injected in the calls, %lu of them failed the call, %lu at its site",
			 t->function, total_points, total_failed_calls, total_at_target);
}

static void inject_build_layers(char **argv)
{
	(void)argv;
	inject_target(&targets[0]);
}

static void inject_planes_kept(char **argv)
{
	(void)argv;
	inject_target(&targets[1]);
}

static void setup(void)
{
	struct snapshot *snaps[] = { &ref_before, &ref_after, &before, &after };
	char link[64];
	ssize_t len;
	int ret;

	/*
	 * libdrm allocates while it builds a request; once the heap is as
	 * large as it gets, those allocations make no system call that could
	 * consume the armed failure.
	 */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_MMAP_THRESHOLD, 64 << 20);

	ret = rig_open(&rig);
	ret = ret ?: injection_setup();
	ret = ret ?: find_text(&rmfb_work);
	have_stack_filter = !access("/sys/kernel/debug/failslab/require-start", F_OK);
	if (!have_stack_filter)
		tap_diag("%s: targeted runs sweep the whole call and look for their target in the stack dumps",
			 NO_STACK_FILTER);
	for (size_t i = 0; i < ARRAY_SIZE(snaps) && !ret; i++)
		ret = image_alloc(&snaps[i]->frame);
	ret = ret ?: image_alloc(&wb_frame);
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", rig.fd);
	len = readlink(link, card_path, sizeof(card_path) - 1);
	if (ret || kmsg_fd < 0 || len <= 0) {
		tap_diag("setup failed: %s", strerror(ret ? -ret : errno));
		exit(1);
	}
	card_path[len] = '\0';
	ret = rig_open_holder(&rig);
	if (ret) {
		tap_diag("setup failed: a second file holding the cap: %s", strerror(-ret));
		exit(1);
	}
	lseek(kmsg_fd, 0, SEEK_END);
}

static void teardown(void)
{
	set_per_pipe(false);
	rig_close(&rig);
}

static void inject(char **argv)
{
	/* tap_main() took only a count from 1. */
	sweeps = strtoul(argv[0], NULL, 10);
	for (size_t i = 0; i < ARRAY_SIZE(ops); i++) {
		if (only && !strstr(ops[i].name, only))
			report_not_run(&ops[i], true, "not selected");
		else if (ops[i].policy == AMDGPU && !have_amdgpu_rule())
			report_not_run(&ops[i], true, "this vkms has no amdgpu_cursor_rule");
		else
			run_op(&ops[i]);
	}
	tap_diag("%lu allocation failures injected in all, %lu of them failed the call",
		 total_points, total_failed_calls);
	if (upstream_warns)
		tap_diag("known upstream WARNs from their known callers: %u, not counted",
			 upstream_warns);
	/*
	 * Each operation must already have failed once; this floor catches
	 * sweeps that stop going deep (a fail-nth that only ever fails the
	 * first allocation would fail about one call per operation). Two
	 * sweeps failed 1064 calls here, one sweep fewer than 500 on CI's
	 * machine: KASAN's and kmemleak's own allocations move the count,
	 * so the floor is half of what a sweep measures, not the measure.
	 */
	tap_okf(only || total_failed_calls >= MIN_FAILED_CALLS_PER_SWEEP * sweeps,
		"enough-calls-failed",
		"%lu injected allocation failures failed the call, floor %lu%s",
		total_failed_calls, MIN_FAILED_CALLS_PER_SWEEP * sweeps,
		only ? " (--only: not counted)" : "");
}

static const struct tap_subtest subtests[] = {
	/* Named after the function whose allocations they fail. */
	{ "inject-vkms-crtc-build-layers", "", 0, inject_build_layers },
	{ "inject-vkms-crtc-planes-kept", "", 0, inject_planes_kept },
	{ "inject", "SWEEPS", 1, inject },
};

/*
 * "--max-points N" and "--only SUBSTR", anywhere, for a run by hand: taken
 * out before tap_main() sees the subtest and its argument.
 */
static int take_options(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i++) {
		if (strcmp(argv[i], "--max-points") == 0) {
			if (!tap_arg_is_count(argv[i + 1])) {
				fprintf(stderr, "kms_fault: --max-points takes a count from 1, not \"%s\"\n",
					argv[i + 1]);
				exit(2);
			}
			max_points = strtoul(argv[i + 1], NULL, 10);
		} else if (strcmp(argv[i], "--only") == 0) {
			only = argv[i + 1];
		} else {
			continue;
		}
		memmove(&argv[i], &argv[i + 2], (argc - i - 1) * sizeof(*argv));
		argc -= 2;
		i--;
	}
	return argc;
}

int main(int argc, char **argv)
{
	const struct tap_program program = { subtests, ARRAY_SIZE(subtests), setup, teardown };

	return tap_main(&program, take_options(argc, argv), argv);
}
