// SPDX-License-Identifier: GPL-2.0
/*
 * Twin of exe_file_probe that touches the same object, the current mm,
 * through exported helpers only. It must build, load and unload: that shows
 * the export check can tell a real modpost failure from a broken setup.
 */
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>

static int __init exported_twin_init(void)
{
	struct mm_struct *mm = get_task_mm(current);

	pr_info("exported_twin: loaded, current mm %s\n", mm ? "held" : "absent");
	if (mm)
		mmput(mm);
	return 0;
}
module_init(exported_twin_init);

static void __exit exported_twin_exit(void)
{
	pr_info("exported_twin: unloaded\n");
}
module_exit(exported_twin_exit);

MODULE_DESCRIPTION("Builds and loads: uses exported mm helpers only");
MODULE_LICENSE("GPL");
