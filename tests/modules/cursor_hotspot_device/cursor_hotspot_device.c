// SPDX-License-Identifier: GPL-2.0
/*
 * A DRM device that declares DRIVER_CURSOR_HOTSPOT, as virtio-gpu, vmwgfx,
 * qxl and vboxvideo do, and has nothing to display: the guest has none of
 * those devices, and the client capabilities a file may set are decided by
 * the DRM core from the driver's features alone.
 */
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/platform_device.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_mode_config.h>

static const struct file_operations cursor_hotspot_fops = {
	.owner = THIS_MODULE,
	.open = drm_open,
	.release = drm_release,
	.unlocked_ioctl = drm_ioctl,
	.compat_ioctl = drm_compat_ioctl,
	.poll = drm_poll,
	.read = drm_read,
	.llseek = noop_llseek,
	/* drm_open() requires it, as DRM_GEM_FOPS sets it */
	.fop_flags = FOP_UNSIGNED_OFFSET,
};

static const struct drm_driver cursor_hotspot_driver = {
	.driver_features = DRIVER_MODESET | DRIVER_ATOMIC | DRIVER_CURSOR_HOTSPOT,
	.fops = &cursor_hotspot_fops,
	.name = "cursor_hotspot",
	.desc = "DRM device declaring DRIVER_CURSOR_HOTSPOT",
	.major = 1,
};

static struct platform_device *cursor_hotspot_pdev;
static struct drm_device *cursor_hotspot_drm;

static int __init cursor_hotspot_init(void)
{
	struct drm_device *drm;
	int ret;

	cursor_hotspot_pdev = platform_device_register_simple("cursor_hotspot",
							      PLATFORM_DEVID_NONE, NULL, 0);
	if (IS_ERR(cursor_hotspot_pdev))
		return PTR_ERR(cursor_hotspot_pdev);

	drm = drm_dev_alloc(&cursor_hotspot_driver, &cursor_hotspot_pdev->dev);
	if (IS_ERR(drm)) {
		ret = PTR_ERR(drm);
		goto unregister_pdev;
	}
	ret = drmm_mode_config_init(drm);
	if (ret)
		goto put_drm;
	ret = drm_dev_register(drm, 0);
	if (ret)
		goto put_drm;
	cursor_hotspot_drm = drm;
	return 0;

put_drm:
	drm_dev_put(drm);
unregister_pdev:
	platform_device_unregister(cursor_hotspot_pdev);
	return ret;
}

static void __exit cursor_hotspot_exit(void)
{
	drm_dev_unregister(cursor_hotspot_drm);
	drm_dev_put(cursor_hotspot_drm);
	platform_device_unregister(cursor_hotspot_pdev);
}

module_init(cursor_hotspot_init);
module_exit(cursor_hotspot_exit);
MODULE_DESCRIPTION("DRM device declaring DRIVER_CURSOR_HOTSPOT, for tests");
MODULE_LICENSE("GPL");
