/* SPDX-License-Identifier: MIT */
/*
 * What the subtests of kms_cursor_pipes share: the rig they commit through,
 * the client policies and how a commit is made under one, and the oracle
 * that tells from writeback captures what a state should display.
 *
 * The oracle composes a state twice through the writeback connector, once
 * per pipe in native mode (validation skipped through debugfs, which also
 * forces native) and once with the ideal cursor plane on top
 * (per_plane_cursor=0), and reports the pixels that differ. What is
 * displayed is captured per pipe with validation on, in whatever mode vkms
 * chose, and compared with the ideal picture.
 *
 * Both pictures come from vkms, whose copies the kernel's per-plane cursor
 * helper places: the oracle cannot see the helper put a copy in the wrong
 * place. reference() computes the per-pipe picture from the uAPI alone, and
 * the sweep compares the native per-pipe capture with it.
 */
#ifndef CURSOR_ORACLE_H
#define CURSOR_ORACLE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "kms_scene.h"

/*
 * The three policies a client meets, then two rules that do not look at
 * the client, for reference only:
 *
 *   no-legacy-cursor  the client holds DRM_CLIENT_CAP_NO_LEGACY_CURSOR
 *                     (a file of its own: the cap cannot be cleared)
 *   guarded           a client without it, protect_legacy_cursor=1
 *   unguarded         a client without it, protect_legacy_cursor=0
 *   amdgpu-fixed      vkms.amdgpu_cursor_rule=1: vkms picks the mode as
 *                     amdgpu_dm does with the 6.12 series' fixes (planes
 *                     scaled in one direction, moved planes), committed and
 *                     displayed like the others (only on kernels that offer
 *                     the setting)
 *   amdgpu-released   vkms.amdgpu_cursor_rule=2: the same rule as 6.11 to
 *                     6.12 released it
 *   validate-overlay  amdgpu's historical validate_overlay(), evaluated here
 *                     in user space
 */
enum policy {
	NO_LEGACY, GUARDED, UNGUARDED, AMDGPU_RULE, AMDGPU_RELEASED, VALIDATE_OVERLAY_RULE, N_POLICIES
};

/* Whether @p is one of amdgpu's rules, which vkms applies to every client. */
static inline bool amdgpu_policy(enum policy p)
{
	return p == AMDGPU_RULE || p == AMDGPU_RELEASED;
}

/* For diagnostics; those of the three client policies are test labels too. */
extern const char *const policy_name[N_POLICIES];

/* Short names for the tables; REF: refused, so no mode at all. */
#define NAT CURSOR_NATIVE
#define DED CURSOR_DEDICATED
#define REF CURSOR_MODES
#define ANY_MODE CURSOR_MODES

extern struct rig rig;
/*
 * The oracle's two pictures, a capture whose picture is not looked at, and
 * the picture reference() computes.
 */
extern struct image img_pipes, img_ideal, img_scratch, img_ref;
/* The sweep's captures of what each policy's commit displays. */
extern struct image img_shown[5];

/* Ends the program, which has no plan then, if @ret says a setup step failed. */
void check_setup(int ret, const char *what);

/* libdrm's legacy calls return -1 and set errno: -errno or 0. */
static inline int neg_errno(int ret)
{
	return ret ? -errno : 0;
}

/* Sets vkms.hw_pipes; a failure is reported once, as a diagnostic. */
void hw_pipes(unsigned int n);
/* The state vkms reports now; mode CURSOR_MODES ("?") if it cannot be read. */
struct cursor_state cursor_state_now(void);
/*
 * Diagnostics about single states of the sweep and the teardown: enough
 * to debug from, not thousands of lines when everything fails.
 */
void state_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Whether an overlay of @s is on with per-pixel alpha (ARGB8888, alpha 0x80). */
bool scene_has_translucent(const struct scene *s);
/* Pipes a scene needs: every plane but the cursor (all of them are on screen). */
unsigned int scene_planes(const struct scene *s);
/* The default scene with the overlays of @overlays that are on, and @cur. */
void scene_with(struct scene *s, const struct plane_cfg overlays[SCENE_MAX_OVERLAYS],
		struct cursor_cfg cur);
struct plane_cfg overlay(bool translucent, int x, int y, unsigned int w, unsigned int h,
			 unsigned int src_w, unsigned int src_h, unsigned int zpos);
struct cursor_cfg cursor(int x, int y, unsigned int w, unsigned int h);

/* Hands DRM master from one file to another (we are root in the guest). */
bool give_master(int from, int to);
/* The rig's commits come from @fd from now on, which becomes master. */
void commit_from(int fd);
void set_policy(enum policy p);
/* Refusals by the cursor rules that came without their debug line. */
extern unsigned int silent_refusals;
/*
 * Commits @s under policy @p, from the file of @p, and the rig commits from
 * the plain file again. commit_as() also counts a refusal that did not say
 * why in the log (silent_refusals); commit_raw() is for the tests of that
 * log line themselves (call kmsg_seen() right after it).
 */
int commit_as(const struct scene *s, enum policy p, uint32_t flags);
int commit_raw(const struct scene *s, enum policy p, uint32_t flags);
/* The verdict of the kernel for @s under policy @p, from the current state. */
bool accepted(const struct scene *s, enum policy p);
/* The same for every policy, the seed rule evaluated here. */
bool verdict(const struct scene *s, enum policy p);
/*
 * The primary plane alone: native for any cursor, so safe for legacy
 * clients, never refused, and the state every guarded verdict starts from
 * (the policy depends on the state before the commit).
 */
int reset_state(void);

/*
 * Pixels that differ between the native per-plane and the ideal picture of
 * @s, or -errno if the state cannot be composed at all. Leaves @s
 * committed.
 */
long oracle(const struct scene *s, int *x, int *y);
/*
 * Whether @cs is a mode the rules allow for a full commit of a state with
 * @planes planes, @pipes hardware pipes and a native picture that is
 * @native_right.
 */
bool mode_allowed(const struct cursor_state *cs, unsigned int planes, unsigned int pipes,
		  bool native_right);
/*
 * How reference() samples planes and places cursor copies: REF_UAPI by the
 * rules below, on the rectangles as committed; REF_CORE_CLIP the same on
 * the rectangles the DRM core clips to the CRTC for the driver
 * (drm_rect_clip_scaled(): a scaled plane cut by the CRTC's edges gets a
 * source rounded to 1/65536 pixel, which moves a sample that falls exactly
 * on a source pixel's edge); two references that must disagree with vkms
 * somewhere: REF_ORIGIN_UP rounds the cursor's position in a scaled
 * plane's source up instead of down, REF_CLIP_DOWN is REF_CORE_CLIP with
 * the clipped source always rounded down.
 */
enum ref_rule { REF_UAPI, REF_CORE_CLIP, REF_ORIGIN_UP, REF_CLIP_DOWN };

/* What a reference() picture shows of the cursor, from its own pixels. */
struct ref_stats {
	unsigned int copies_shown;	/* planes whose copy shows on top somewhere */
	bool scaled_copy;		/* one of them is scaled */
};

/*
 * The per-pipe picture of @s computed in software from the scene as
 * committed: every plane samples its framebuffer at the source pixel
 * nearest the centre of each destination pixel (src * (2 i + 1) /
 * (2 dst), rounded down; the pixel itself when unscaled); a plane's copy of
 * the cursor starts at the source pixel into which the cursor's CRTC
 * position maps and samples the cursor like the framebuffer; a copy is off
 * where a plane above shows all of what the plane shows; the planes, with
 * their copies, are blended in zpos order (premultiplied alpha, on black).
 * Without a cursor, the planes alone. Returns false, leaving @img, for
 * scenes outside these rules (rotated planes). @stats may be NULL.
 */
bool reference(const struct scene *s, enum ref_rule rule, struct image *img,
	       struct ref_stats *stats);

/*
 * The current state per pipe into img_pipes, its cursor state into @cs,
 * then the ideal picture into img_ideal; leaves per_plane_cursor=0.
 */
int capture_displayed(struct cursor_state *cs);
/*
 * What is on screen now against the ideal picture of the same state,
 * composed in the mode vkms chooses for it (returned in @cs). The captures
 * change no plane, so they are never refused. Returns the pixels that
 * differ, or -errno.
 */
long displayed_diff(struct cursor_state *cs);
/* A state_diag() about @diff pixels of @a (displayed) unlike @b (ideal), from @x, @y. */
void report_diff(const struct image *a, const struct image *b, long diff, int x, int y);
/* What the last look() found, for the diagnostic of its test. */
extern char last_look[96];
/* Nothing wrong displayed, and the cursor in mode @want (or ANY_MODE). */
bool look(enum cursor_mode want);
/* The test @name: the commit before returned @ret = 0, and look(@want) holds. */
bool look_ok(const char *name, int ret, enum cursor_mode want);
/* The test @name: a call returned @want (0 or -errno); @ret is what it returned. */
bool ret_ok(const char *name, int ret, int want);

/* The random states of the sweep and the teardown, reproducible from @seed. */
void random_seed(uint32_t seed);
void random_scene(struct scene *s);

/* The legacy cursor ioctl on the rig's file; 0 or -errno. */
int legacy_move(int x, int y);
bool crtc_active(int fd);

#endif
