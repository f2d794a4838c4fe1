// SPDX-License-Identifier: GPL-2.0
/*
 * The 2021 linux-next break, reproduced: a module that asks for the
 * executable of the current process. get_mm_exe_file() is no longer
 * exported (commit 05da8113c9ba), so modpost must refuse this module.
 * tests/host/exports.sh passes only if the build fails for that reason.
 */
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>

static int __init exe_file_probe_init(void)
{
	struct file *exe = get_mm_exe_file(current->mm);

	if (exe)
		fput(exe);
	return 0;
}
module_init(exe_file_probe_init);

MODULE_DESCRIPTION("Must not link: uses the unexported get_mm_exe_file()");
MODULE_LICENSE("GPL");
