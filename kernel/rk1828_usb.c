// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Copyright (C) 2026 The rk1828 authors
 *
 * USB transport of the RK1828 card: one vendor-class interface with a bulk
 * OUT/IN endpoint pair per hardware queue (queue q: OUT ep q + 1, IN ep
 * 0x80 | (q + 1)) and a vendor control request that resets the queues
 * (kernel/rk1828_hif.h). Each direction of each queue has one preallocated
 * URB, and so has the reset request, so the driver allocates nothing on
 * the job execution path; URBs are submitted with GFP_ATOMIC, so the host
 * controller driver's own allocations never enter reclaim there either
 * (the path is a dma-fence signalling critical section, see
 * &struct rk1828_transport_ops).
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/usb.h>
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/rk1828_accel.h>

#include "rk1828_drv.h"
#include "rk1828_hif_engine.h"

/* Control request timeout in milliseconds. */
#define RK1828_USB_CTRL_TIMEOUT_MS	5000

/*
 * Attempts of a submit whose atomic allocation in the host controller
 * driver failed, 1-2 ms apart.
 */
#define RK1828_USB_SUBMIT_TRIES		50

/*
 * Preferred size of the per-queue bounce buffers (rk1828_hif_init() falls
 * back to 64 KiB).
 */
#define RK1828_USB_BOUNCE_SIZE		SZ_256K

/**
 * struct rk1828_usb_ep - one bulk endpoint
 * @pipe: USB pipe
 * @urb: the endpoint's only URB
 * @done: completed by the URB's completion handler
 */
struct rk1828_usb_ep {
	unsigned int pipe;
	struct urb *urb;
	struct completion done;
};

/**
 * struct rk1828_usb - USB transport state of one card
 * @rdev: the card
 * @udev: USB device (referenced until the drm_device is released)
 * @intf: the card's interface (referenced likewise)
 * @out: bulk OUT endpoint of each queue (commands)
 * @in: bulk IN endpoint of each queue (completions)
 * @ctrl: the %RK1828_HIF_REQ_RESET_QUEUES request on EP0 (pipe unused)
 * @ctrl_req: its setup packet (&struct usb_ctrlrequest), kmalloc'ed
 *	(DMA-able)
 */
struct rk1828_usb {
	struct rk1828_device *rdev;
	struct usb_device *udev;
	struct usb_interface *intf;
	struct rk1828_usb_ep out[RK1828_HIF_NUM_QUEUES];
	struct rk1828_usb_ep in[RK1828_HIF_NUM_QUEUES];
	struct rk1828_usb_ep ctrl;
	u8 *ctrl_req;
};

/*
 * Setup packet of RESET_QUEUES (USB 3.2 9.3): bmRequestType host to
 * device, vendor, device; bRequest; wValue, wIndex and wLength zero.
 */
static const u8 rk1828_usb_reset_setup[8] = {
	USB_DIR_OUT | USB_TYPE_VENDOR | USB_RECIP_DEVICE,
	RK1828_HIF_REQ_RESET_QUEUES,
};

static void rk1828_usb_complete(struct urb *urb)
{
	complete(urb->context);
}

static int rk1828_usb_status(struct rk1828_device *rdev, int status)
{
	struct rk1828_usb *usb = rdev->transport;

	/* The USB core cancels our URBs while it unbinds the interface. */
	if (status && (rk1828_is_gone(rdev) ||
		       usb->intf->condition == USB_INTERFACE_UNBINDING ||
		       usb->intf->condition == USB_INTERFACE_UNBOUND ||
		       usb->udev->state == USB_STATE_NOTATTACHED))
		return -ENODEV;

	switch (status) {
	case 0:
		return 0;
	case -ENOENT:
	case -ECONNRESET:
	case -EPERM:
		return -ECANCELED;
	case -ENODEV:
	case -ESHUTDOWN:
		return -ENODEV;
	default:
		return rk1828_is_gone(rdev) ? -ENODEV : status;
	}
}

/*
 * Start a bulk transfer of generation @gen. GFP_ATOMIC: the host
 * controller driver allocates per submit, and reclaim may wait for the
 * very fences this transfer is to signal. A failed atomic allocation is
 * retried a few times (outside the transfer section, so a reset or an
 * unplug is not held up) before it fails the transfer.
 */
static int rk1828_usb_submit(struct rk1828_device *rdev,
			     struct rk1828_usb_ep *ep, u32 gen, void *buf,
			     size_t len)
{
	struct rk1828_usb *usb = rdev->transport;
	struct urb *urb = ep->urb;
	unsigned int tries = 0;
	int ret;

	usb_fill_bulk_urb(urb, usb->udev, ep->pipe, buf, len,
			  rk1828_usb_complete, &ep->done);
	reinit_completion(&ep->done);

	for (;;) {
		if (!rk1828_xfer_begin(rdev, gen))
			return rk1828_is_gone(rdev) ? -ENODEV : -ECANCELED;
		ret = usb_submit_urb(urb, GFP_ATOMIC);
		rk1828_xfer_end(rdev);
		if (ret != -ENOMEM || ++tries == RK1828_USB_SUBMIT_TRIES)
			break;
		usleep_range(1000, 2000);
	}
	return ret ? rk1828_usb_status(rdev, ret) : 0;
}

static int rk1828_usb_wait(struct rk1828_device *rdev, struct rk1828_usb_ep *ep,
			   size_t *actual, long timeout)
{
	struct urb *urb = ep->urb;

	if (!wait_for_completion_timeout(&ep->done, timeout)) {
		usb_kill_urb(urb);
		if (urb->status != 0)
			return -ETIMEDOUT;
	}
	*actual = urb->actual_length;
	return rk1828_usb_status(rdev, urb->status);
}

static int rk1828_usb_send(struct rk1828_device *rdev, u32 queue, u32 gen,
			   const void *buf, size_t len, long timeout)
{
	struct rk1828_usb *usb = rdev->transport;
	struct rk1828_usb_ep *ep = &usb->out[queue];
	size_t actual = 0;
	int ret;

	rk1828_assert_queue_locked(rdev, queue);

	ret = rk1828_usb_submit(rdev, ep, gen, (void *)buf, len);
	if (!ret)
		ret = rk1828_usb_wait(rdev, ep, &actual, timeout);
	if (!ret && actual != len)
		ret = -EPROTO;
	return ret;
}

static int rk1828_usb_recv_start(struct rk1828_device *rdev, u32 queue,
				 u32 gen, void *buf, size_t len)
{
	struct rk1828_usb *usb = rdev->transport;

	rk1828_assert_queue_locked(rdev, queue);

	return rk1828_usb_submit(rdev, &usb->in[queue], gen, buf, len);
}

static int rk1828_usb_recv_wait(struct rk1828_device *rdev, u32 queue,
				size_t *actual, long timeout)
{
	struct rk1828_usb *usb = rdev->transport;

	rk1828_assert_queue_locked(rdev, queue);

	return rk1828_usb_wait(rdev, &usb->in[queue], actual, timeout);
}

static void rk1828_usb_recv_cancel(struct rk1828_device *rdev, u32 queue)
{
	struct rk1828_usb *usb = rdev->transport;

	rk1828_assert_queue_locked(rdev, queue);

	usb_kill_urb(usb->in[queue].urb);
}

static void rk1828_usb_abort(struct rk1828_device *rdev)
{
	struct rk1828_usb *usb = rdev->transport;
	int q;

	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		usb_kill_urb(usb->out[q].urb);
		usb_kill_urb(usb->in[q].urb);
	}
	/* A reset request in flight when the card is unplugged. */
	usb_kill_urb(usb->ctrl.urb);
}

/*
 * The RESET_QUEUES vendor request, on the preallocated control URB: a job
 * that timed out resets the card from inside the fence signalling section,
 * where usb_control_msg()'s allocations are not allowed. The caller holds
 * &rk1828_device.xfer_sem for reading, so the retry of a failed atomic
 * allocation sleeps in place.
 */
static int rk1828_usb_reset_queues(struct rk1828_device *rdev)
{
	struct rk1828_usb *usb = rdev->transport;
	struct urb *urb = usb->ctrl.urb;
	unsigned int tries = 0;
	int ret;

	lockdep_assert_held(&rdev->reset_lock);

	usb_fill_control_urb(urb, usb->udev, usb_sndctrlpipe(usb->udev, 0),
			     usb->ctrl_req, NULL, 0, rk1828_usb_complete,
			     &usb->ctrl.done);
	reinit_completion(&usb->ctrl.done);
	for (;;) {
		ret = usb_submit_urb(urb, GFP_ATOMIC);
		if (ret != -ENOMEM || ++tries == RK1828_USB_SUBMIT_TRIES)
			break;
		usleep_range(1000, 2000);
	}
	if (ret)
		return rk1828_usb_status(rdev, ret);
	if (!wait_for_completion_timeout(&usb->ctrl.done,
					 msecs_to_jiffies(RK1828_USB_CTRL_TIMEOUT_MS))) {
		usb_kill_urb(urb);
		if (urb->status != 0)
			return rk1828_is_gone(rdev) ? -ENODEV : -ETIMEDOUT;
	}
	return rk1828_usb_status(rdev, urb->status);
}

static const struct rk1828_transport_ops rk1828_usb_ops = {
	.send = rk1828_usb_send,
	.recv_start = rk1828_usb_recv_start,
	.recv_wait = rk1828_usb_recv_wait,
	.recv_cancel = rk1828_usb_recv_cancel,
	.abort = rk1828_usb_abort,
	.reset_queues = rk1828_usb_reset_queues,
};

/* Final release of the drm_device: drop what the transport holds. */
static void rk1828_usb_release(struct drm_device *drm, void *data)
{
	struct rk1828_usb *usb = data;
	int q;

	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		usb_free_urb(usb->out[q].urb);
		usb_free_urb(usb->in[q].urb);
	}
	usb_free_urb(usb->ctrl.urb);
	kfree(usb->ctrl_req);
	usb_put_intf(usb->intf);
	usb_put_dev(usb->udev);
}

static void rk1828_usb_put_dma_dev(struct drm_device *drm, void *data)
{
	put_device(data);
}

static u32 rk1828_usb_speed(enum usb_device_speed speed)
{
	switch (speed) {
	case USB_SPEED_LOW:
		return 2;
	case USB_SPEED_FULL:
		return 12;
	case USB_SPEED_HIGH:
		return 480;
	case USB_SPEED_SUPER:
		return 5000;
	case USB_SPEED_SUPER_PLUS:
		return 10000;
	default:
		return 0;
	}
}

/* Queue q needs bulk OUT endpoint q + 1 and bulk IN endpoint 0x80 | (q + 1). */
static int rk1828_usb_find_eps(struct rk1828_usb *usb)
{
	struct usb_host_endpoint *ep;
	int q;

	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		usb->out[q].pipe = usb_sndbulkpipe(usb->udev, q + 1);
		ep = usb_pipe_endpoint(usb->udev, usb->out[q].pipe);
		if (!ep || !usb_endpoint_is_bulk_out(&ep->desc))
			return -ENODEV;

		usb->in[q].pipe = usb_rcvbulkpipe(usb->udev, q + 1);
		ep = usb_pipe_endpoint(usb->udev, usb->in[q].pipe);
		if (!ep || !usb_endpoint_is_bulk_in(&ep->desc))
			return -ENODEV;
	}
	return 0;
}

static int rk1828_usb_probe(struct usb_interface *intf,
			    const struct usb_device_id *id)
{
	struct usb_device *udev = interface_to_usbdev(intf);
	struct rk1828_device *rdev;
	struct rk1828_usb *usb;
	int ret, q;

	rdev = rk1828_device_alloc(&intf->dev);
	if (IS_ERR(rdev))
		return PTR_ERR(rdev);

	usb = drmm_kzalloc(&rdev->drm, sizeof(*usb), GFP_KERNEL);
	if (!usb)
		return -ENOMEM;
	usb->rdev = rdev;
	usb->udev = usb_get_dev(udev);
	usb->intf = usb_get_intf(intf);
	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		init_completion(&usb->out[q].done);
		init_completion(&usb->in[q].done);
		usb->out[q].urb = usb_alloc_urb(0, GFP_KERNEL);
		usb->in[q].urb = usb_alloc_urb(0, GFP_KERNEL);
	}
	init_completion(&usb->ctrl.done);
	usb->ctrl.urb = usb_alloc_urb(0, GFP_KERNEL);
	usb->ctrl_req = kmemdup(rk1828_usb_reset_setup,
				sizeof(rk1828_usb_reset_setup), GFP_KERNEL);
	ret = drmm_add_action_or_reset(&rdev->drm, rk1828_usb_release, usb);
	if (ret)
		return ret;
	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++)
		if (!usb->out[q].urb || !usb->in[q].urb)
			return -ENOMEM;
	if (!usb->ctrl.urb || !usb->ctrl_req)
		return -ENOMEM;

	ret = rk1828_usb_find_eps(usb);
	if (ret) {
		dev_err(&intf->dev, "missing bulk endpoints\n");
		return ret;
	}

	rdev->dma_dev = usb_intf_get_dma_device(intf);
	if (rdev->dma_dev) {
		ret = drmm_add_action_or_reset(&rdev->drm, rk1828_usb_put_dma_dev,
					       rdev->dma_dev);
		if (ret)
			return ret;
	} else {
		dev_warn(&intf->dev, "no DMA device, PRIME import disabled\n");
	}

	rdev->transport = usb;
	rdev->tops = &rk1828_usb_ops;
	rdev->link_type = DRM_RK1828_LINK_USB;
	rdev->link_speed = rk1828_usb_speed(udev->speed);
	rdev->bounce_size = RK1828_USB_BOUNCE_SIZE;

	ret = rk1828_device_register(rdev);
	if (ret)
		return ret;
	usb_set_intfdata(intf, rdev);
	return 0;
}

static void rk1828_usb_disconnect(struct usb_interface *intf)
{
	struct rk1828_device *rdev = usb_get_intfdata(intf);

	if (!rdev)
		return;
	rk1828_device_unplug(rdev);
	usb_set_intfdata(intf, NULL);
}

static const struct usb_device_id rk1828_usb_ids[] = {
	{ USB_DEVICE_INTERFACE_CLASS(RK1828_USB_VID, RK1828_USB_PID,
				     USB_CLASS_VENDOR_SPEC) },
	{ }
};
MODULE_DEVICE_TABLE(usb, rk1828_usb_ids);

static struct usb_driver rk1828_usb_driver = {
	.name = RK1828_DRIVER_NAME,
	.probe = rk1828_usb_probe,
	.disconnect = rk1828_usb_disconnect,
	.id_table = rk1828_usb_ids,
	.soft_unbind = 0,
};

/**
 * rk1828_usb_register() - register the USB transport driver
 *
 * Return: 0 or the errno of usb_register().
 */
int rk1828_usb_register(void)
{
	return usb_register(&rk1828_usb_driver);
}

/**
 * rk1828_usb_unregister() - unregister the USB transport driver
 */
void rk1828_usb_unregister(void)
{
	usb_deregister(&rk1828_usb_driver);
}
