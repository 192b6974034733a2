/* SPDX-License-Identifier: MIT */
/*
 * Card emulator: the USB device side of a usbredir connection (the peer is
 * QEMU's usb-redir device, the "usb-guest" side of the usbredir protocol,
 * https://gitlab.freedesktop.org/spice/usbredir/-/blob/main/docs/usb-redirection-protocol.md).
 */
#ifndef RK_EMU_USBREDIR_H
#define RK_EMU_USBREDIR_H

#include "card.h"

/* USB strings of the emulated card. */
#define EMU_USB_MANUFACTURER	"Rockchip"
#define EMU_USB_PRODUCT		"RK1828 NPU (emulated)"

/**
 * emu_usbredir_serve() - present @card as a USB device on connection @fd
 * @card: the card model (its queues map to the bulk endpoint pairs)
 * @fd: connected stream socket to the usbredir peer; made non-blocking;
 *	not closed
 * @stop_fd: file descriptor that becomes readable when the emulator must
 *	stop (e.g. a signalfd for SIGTERM/SIGINT), or -1
 * @verbose: log USB traffic on stderr when non-zero
 *
 * Runs the I/O loop on the calling thread (the only thread that touches
 * the usbredir parser) until the peer closes the connection or @stop_fd
 * becomes readable. The device exposes one configuration with one vendor
 * interface and bulk endpoints 0x01/0x81 (MGMT), 0x02/0x82 (COMPUTE),
 * 0x03/0x83 (COPY), SuperSpeed, VID:PID %RK1828_USB_VID:%RK1828_USB_PID.
 *
 * Return: 0 when the peer closed the connection, 1 when @stop_fd fired,
 * -1 on an I/O or setup error (logged).
 */
int emu_usbredir_serve(struct emu_card *card, int fd, int stop_fd,
		       int verbose);

/**
 * emu_usb_descriptor() - build a standard descriptor of the emulated card
 * @card: the card (serial string)
 * @type: descriptor type (USB 3.2 spec table 9-6: 1 device, 2
 *	configuration, 3 string, 15 BOS)
 * @index: descriptor index (string index for strings)
 * @buf: destination, at least 256 bytes
 *
 * Return: descriptor length, or -1 when the device has no such descriptor
 * (the control request then stalls).
 */
int emu_usb_descriptor(const struct emu_card *card, unsigned int type,
		       unsigned int index, uint8_t *buf);

#endif
