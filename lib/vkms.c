// SPDX-License-Identifier: MIT
#include "vkms.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kms_util.h"

int vkms_debugfs_dir(int fd, char *dir, size_t len)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	snprintf(dir, len, "/sys/kernel/debug/dri/%u", minor(st.st_rdev));
	return 0;
}

bool vkms_per_plane_cursor(void)
{
	char value[4] = "";
	FILE *f = fopen(VKMS_PARAMS "per_plane_cursor", "r");

	if (!f)
		return false;
	if (!fgets(value, sizeof(value), f))
		value[0] = '\0';
	fclose(f);
	return value[0] == 'Y' || value[0] == '1';
}

int set_per_pipe(bool on)
{
	return kms_write_file(VKMS_PARAMS "per_plane_cursor", on ? "1" : "0");
}

int set_protect_legacy(bool on)
{
	return kms_write_file(VKMS_PARAMS "protect_legacy_cursor", on ? "1" : "0");
}

#define AMDGPU_RULE_PARAM VKMS_PARAMS "amdgpu_cursor_rule"

bool have_amdgpu_rule(void)
{
	return access(AMDGPU_RULE_PARAM, W_OK) == 0;
}

int set_amdgpu_rule(enum amdgpu_rule rule)
{
	static const char *const value[] = {
		[AMDGPU_RULE_OFF] = "0", [AMDGPU_RULE_FIXED] = "1", [AMDGPU_RULE_RELEASED] = "2",
	};

	/* Kernels without the setting have nothing to turn off. */
	if (rule == AMDGPU_RULE_OFF && !have_amdgpu_rule())
		return 0;
	return kms_write_file(AMDGPU_RULE_PARAM, value[rule]);
}

int set_hw_pipes(unsigned int pipes)
{
	char value[16];

	snprintf(value, sizeof(value), "%u", pipes);
	return kms_write_file(VKMS_PARAMS "hw_pipes", value);
}

int vkms_set_skip_validation(const char *debugfs, bool on)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/vkms_skip_cursor_validation", debugfs);
	return kms_write_file(path, on ? "1" : "0");
}

static const char *const mode_names[CURSOR_MODES] = {
	[CURSOR_NATIVE] = "native",
	[CURSOR_DEDICATED] = "dedicated",
	[CURSOR_HIDDEN] = "hidden",
	[CURSOR_PLANE] = "plane",
};

const char *cursor_mode_name(enum cursor_mode mode)
{
	return mode < CURSOR_MODES ? mode_names[mode] : "?";
}

static int parse_yes_no(const char *word, const char *yes, const char *no, bool *out)
{
	if (!word)
		return -EPROTO;
	if (strcmp(word, yes) == 0)
		*out = true;
	else if (strcmp(word, no) == 0)
		*out = false;
	else
		return -EPROTO;
	return 0;
}

/* The next line of *@pos without its newline; NULL if there is no complete line. */
static char *next_line(char **pos)
{
	char *line = *pos, *nl = strchr(line, '\n');

	if (!nl)
		return NULL;
	*nl = '\0';
	*pos = nl + 1;
	return line;
}

/* "<key>: <value>" exactly, value a non-empty word without spaces. */
static const char *value_of(char *line, const char *key)
{
	size_t n = strlen(key);

	if (!line || strncmp(line, key, n) != 0 || strncmp(line + n, ": ", 2) != 0 ||
	    !line[n + 2] || strchr(line + n + 2, ' '))
		return NULL;
	return line + n + 2;
}

static int parse_uint(const char *word, unsigned long *out)
{
	char *end;

	if (!word || *word < '0' || *word > '9')
		return -EPROTO;
	*out = strtoul(word, &end, 10);
	return *end ? -EPROTO : 0;
}

int vkms_read_cursor_state(const char *debugfs, struct cursor_state *cs)
{
	char path[128], buf[512], *pos = buf, *line;
	unsigned long used, hw;
	const char *v;
	ssize_t len;
	int fd, ret;

	snprintf(path, sizeof(path), "%s/vkms_cursor_state", debugfs);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	ret = len < 0 ? -errno : 0;
	close(fd);
	if (ret)
		return ret;
	buf[len] = '\0';

	/*
	 * The format is part of the contract: exactly these five lines, in
	 * this order, each ending in a newline, nothing after them.
	 */
	v = value_of(next_line(&pos), "mode");
	for (cs->mode = 0; v && cs->mode < CURSOR_MODES; cs->mode++)
		if (strcmp(v, mode_names[cs->mode]) == 0)
			break;
	if (!v || cs->mode == CURSOR_MODES)
		return -EPROTO;
	if (parse_yes_no(value_of(next_line(&pos), "cursor"), "on", "off", &cs->cursor_on))
		return -EPROTO;
	line = next_line(&pos);
	if (!line || sscanf(line, "pipes: %lu of %lu%n", &used, &hw, &ret) != 2 ||
	    line[ret] || strncmp(line, "pipes: ", 7))
		return -EPROTO;
	cs->pipes_used = used;
	cs->hw_pipes = hw;
	if (parse_yes_no(value_of(next_line(&pos), "legacy_safe"), "yes", "no",
			 &cs->legacy_safe) ||
	    parse_uint(value_of(next_line(&pos), "hidden_count"), &cs->hidden_count) ||
	    *pos)
		return -EPROTO;
	return 0;
}
