// SPDX-License-Identifier: MIT
/*
 * Card emulator: USB device side of usbredir.
 *
 * The emulator plays the "usb-host" role of the usbredir protocol (the side
 * that owns a real device in usbredirhost): QEMU's usb-redir forwards the
 * guest's USB traffic for one device to us, and we answer it as the RK1828
 * card would. EP0 requests are answered here (descriptors from the USB 3.2
 * specification, chapter 9); the bulk endpoint pairs carry the byte
 * streams of the card's queues (emulator/card.h).
 *
 * Only this thread touches the parser. Bulk OUT data buffers are handed to
 * the card without copying and released by the card's workers with
 * usbredirparser_free_packet_data(), which only calls free() and does not
 * touch the parser state.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>

#include <usbredirparser.h>

#include "usbredir.h"

/* USB 3.2 spec, tables 9-4 (requests), 9-5 (codes), 9-6 (descriptors). */
#define USB_DIR_IN		0x80
#define USB_TYPE_MASK		0x60
#define USB_TYPE_STANDARD	0x00
#define USB_TYPE_VENDOR		0x40
#define USB_RECIP_MASK		0x1f
#define USB_RECIP_DEVICE	0x00
#define USB_RECIP_ENDPOINT	0x02

#define USB_REQ_GET_STATUS	0x00
#define USB_REQ_CLEAR_FEATURE	0x01
#define USB_REQ_SET_FEATURE	0x03
#define USB_REQ_GET_DESCRIPTOR	0x06
#define USB_REQ_GET_CONFIGURATION 0x08
#define USB_REQ_SET_CONFIGURATION 0x09
#define USB_REQ_GET_INTERFACE	0x0a
#define USB_REQ_SET_INTERFACE	0x0b
#define USB_REQ_SET_SEL		0x30
#define USB_REQ_SET_ISOCH_DELAY	0x31

#define USB_DT_DEVICE		0x01
#define USB_DT_CONFIG		0x02
#define USB_DT_STRING		0x03
#define USB_DT_INTERFACE	0x04
#define USB_DT_ENDPOINT		0x05
#define USB_DT_BOS		0x0f
#define USB_DT_DEVICE_CAP	0x10
#define USB_DT_SS_EP_COMP	0x30

#define USB_CAP_USB20_EXT	0x02
#define USB_CAP_SS_USB		0x03

#define EMU_BULK_MPS		1024
#define EMU_EP0_MPS_EXP		9	/* 2^9 = 512 bytes, SuperSpeed EP0 */
#define EMU_CONFIG_VALUE	1

/* A bulk IN request waiting for completion bytes, or a held OUT ack. */
struct pending_in {
	uint64_t id;
	uint32_t len;
};

struct in_fifo {
	struct pending_in *v;
	size_t head;
	size_t n;
	size_t cap;
};

struct conn {
	struct usbredirparser *parser;
	struct emu_card *card;
	int fd;
	int verbose;
	bool peer_closed;
	bool io_error;
	uint8_t config;
	struct in_fifo in[RK1828_HIF_NUM_QUEUES];
	/* OUT transfers whose acknowledgement waits for the queue to drain */
	struct in_fifo out_held[RK1828_HIF_NUM_QUEUES];
	uint8_t *scratch;
	size_t scratch_cap;
};

__attribute__((format(printf, 2, 3)))
static void usb_log(const struct conn *c, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	(void)c;
	fprintf(stderr, "rk1828-emu: usb: %s\n", buf);
}

/* ---- descriptors ---------------------------------------------------------- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

static int device_descriptor(uint8_t *d)
{
	d[0] = 18;
	d[1] = USB_DT_DEVICE;
	put16(d + 2, 0x0320);		/* bcdUSB 3.2 */
	d[4] = 0xff;			/* vendor specific */
	d[5] = 0;
	d[6] = 0;
	d[7] = EMU_EP0_MPS_EXP;
	put16(d + 8, RK1828_USB_VID);
	put16(d + 10, RK1828_USB_PID);
	put16(d + 12, 0x0100);		/* bcdDevice */
	d[14] = 1;			/* iManufacturer */
	d[15] = 2;			/* iProduct */
	d[16] = 3;			/* iSerialNumber */
	d[17] = 1;			/* bNumConfigurations */
	return 18;
}

static int config_descriptor(uint8_t *d)
{
	static const uint8_t eps[] = { 0x01, 0x81, 0x02, 0x82, 0x03, 0x83 };
	uint8_t *p = d;
	size_t i;

	p[0] = 9;
	p[1] = USB_DT_CONFIG;
	/* wTotalLength at the end */
	p[4] = 1;			/* bNumInterfaces */
	p[5] = EMU_CONFIG_VALUE;
	p[6] = 0;			/* iConfiguration */
	p[7] = 0xc0;			/* self powered */
	p[8] = 0;			/* bMaxPower */
	p += 9;

	p[0] = 9;
	p[1] = USB_DT_INTERFACE;
	p[2] = 0;			/* bInterfaceNumber */
	p[3] = 0;			/* bAlternateSetting */
	p[4] = sizeof(eps);		/* bNumEndpoints */
	p[5] = 0xff;			/* vendor specific */
	p[6] = 0;
	p[7] = 0;
	p[8] = 0;
	p += 9;

	for (i = 0; i < sizeof(eps); i++) {
		p[0] = 7;
		p[1] = USB_DT_ENDPOINT;
		p[2] = eps[i];
		p[3] = 0x02;		/* bulk */
		put16(p + 4, EMU_BULK_MPS);
		p[6] = 0;		/* bInterval */
		p += 7;
		p[0] = 6;
		p[1] = USB_DT_SS_EP_COMP;
		p[2] = 15;		/* bMaxBurst: 16 packets */
		p[3] = 0;		/* no streams */
		put16(p + 4, 0);	/* wBytesPerInterval: 0 for bulk */
		p += 6;
	}
	put16(d + 2, (uint16_t)(p - d));
	return (int)(p - d);
}

static int bos_descriptor(uint8_t *d)
{
	d[0] = 5;
	d[1] = USB_DT_BOS;
	put16(d + 2, 5 + 7 + 10);
	d[4] = 2;			/* bNumDeviceCaps */

	d[5] = 7;
	d[6] = USB_DT_DEVICE_CAP;
	d[7] = USB_CAP_USB20_EXT;
	put32(d + 8, 0);		/* no USB 2.0 LPM */

	d[12] = 10;
	d[13] = USB_DT_DEVICE_CAP;
	d[14] = USB_CAP_SS_USB;
	d[15] = 0;			/* no LTM */
	put16(d + 16, 0x0008);		/* wSpeedsSupported: SuperSpeed */
	d[18] = 3;			/* bFunctionalitySupport: SuperSpeed */
	d[19] = 0x0a;			/* bU1DevExitLat: < 10 us */
	put16(d + 20, 0x0200);		/* wU2DevExitLat: < 512 us */
	return 22;
}

static int string_descriptor(const char *s, uint8_t *d)
{
	size_t i, n = strlen(s);

	if (n > 126)
		n = 126;
	d[0] = (uint8_t)(2 + 2 * n);
	d[1] = USB_DT_STRING;
	for (i = 0; i < n; i++)
		put16(d + 2 + 2 * i, (uint8_t)s[i]);
	return d[0];
}

int emu_usb_descriptor(const struct emu_card *card, unsigned int type,
		       unsigned int index, uint8_t *buf)
{
	char serial[24];

	switch (type) {
	case USB_DT_DEVICE:
		return index == 0 ? device_descriptor(buf) : -1;
	case USB_DT_CONFIG:
		return index == 0 ? config_descriptor(buf) : -1;
	case USB_DT_BOS:
		return index == 0 ? bos_descriptor(buf) : -1;
	case USB_DT_STRING:
		switch (index) {
		case 0:
			buf[0] = 4;
			buf[1] = USB_DT_STRING;
			put16(buf + 2, 0x0409);	/* English (US) */
			return 4;
		case 1:
			return string_descriptor(EMU_USB_MANUFACTURER, buf);
		case 2:
			return string_descriptor(EMU_USB_PRODUCT, buf);
		case 3:
			snprintf(serial, sizeof(serial), "%08" PRIX64,
				 emu_card_serial(card));
			return string_descriptor(serial, buf);
		}
		return -1;
	}
	return -1;
}

/* ---- parser I/O callbacks ------------------------------------------------- */

static int on_read(void *priv, uint8_t *data, int count)
{
	struct conn *c = priv;
	ssize_t r;

	do {
		r = read(c->fd, data, (size_t)count);
	} while (r < 0 && errno == EINTR);
	if (r > 0)
		return (int)r;
	if (r == 0) {
		c->peer_closed = true;
		return -1;
	}
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return 0;
	if (errno == ECONNRESET)
		c->peer_closed = true;
	else
		c->io_error = true;
	return -1;
}

static int on_write(void *priv, uint8_t *data, int count)
{
	struct conn *c = priv;
	ssize_t r;

	do {
		r = send(c->fd, data, (size_t)count, MSG_NOSIGNAL);
	} while (r < 0 && errno == EINTR);
	if (r >= 0)
		return (int)r;
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return 0;
	if (errno == EPIPE || errno == ECONNRESET)
		c->peer_closed = true;
	else
		c->io_error = true;
	return -1;
}

static void on_log(void *priv, int level, const char *msg)
{
	struct conn *c = priv;

	if (level <= usbredirparser_warning ||
	    (c->verbose && level <= usbredirparser_info))
		usb_log(c, "parser: %s", msg);
}

/* ---- bulk IN bookkeeping -------------------------------------------------- */

static int fifo_push(struct in_fifo *f, uint64_t id, uint32_t len)
{
	if (f->n == f->cap) {
		size_t ncap = f->cap ? f->cap * 2 : 16;
		struct pending_in *v = malloc(ncap * sizeof(*v));
		size_t i;

		if (!v)
			return -1;
		for (i = 0; i < f->n; i++)
			v[i] = f->v[(f->head + i) % f->cap];
		free(f->v);
		f->v = v;
		f->cap = ncap;
		f->head = 0;
	}
	f->v[(f->head + f->n) % f->cap] = (struct pending_in){ id, len };
	f->n++;
	return 0;
}

static struct pending_in *fifo_front(struct in_fifo *f)
{
	return f->n ? &f->v[f->head] : NULL;
}

static void fifo_pop(struct in_fifo *f)
{
	f->head = (f->head + 1) % f->cap;
	f->n--;
}

/* Remove the entry with @id; true when found. */
static bool fifo_remove(struct in_fifo *f, uint64_t id)
{
	size_t i;

	for (i = 0; i < f->n; i++) {
		if (f->v[(f->head + i) % f->cap].id != id)
			continue;
		for (; i + 1 < f->n; i++)
			f->v[(f->head + i) % f->cap] =
				f->v[(f->head + i + 1) % f->cap];
		f->n--;
		return true;
	}
	return false;
}

/*
 * Send a bulk packet reply: @len goes into the header (transferred bytes),
 * @data_len bytes of @data follow (IN replies only).
 */
static void send_bulk(struct conn *c, uint64_t id, uint8_t ep, uint8_t status,
		      uint32_t len, uint8_t *data, uint32_t data_len)
{
	struct usb_redir_bulk_packet_header h = {
		.endpoint = ep,
		.status = status,
		.length = (uint16_t)len,
		.length_high = (uint16_t)(len >> 16),
	};

	usbredirparser_send_bulk_packet(c->parser, id, &h, data, (int)data_len);
}

/* Answer queued IN requests of queue @q while completions are ready. */
static void service_in(struct conn *c, unsigned int q)
{
	struct in_fifo *f = &c->in[q];
	struct pending_in *p;

	while ((p = fifo_front(f))) {
		size_t avail = emu_card_out_avail(c->card, q);
		size_t n = p->len < avail ? p->len : avail;

		if (p->len && !avail)
			return;
		if (n > c->scratch_cap) {
			uint8_t *s = realloc(c->scratch, n);

			if (!s) {
				usb_log(c, "out of memory for a %zu-byte IN transfer", n);
				return;
			}
			c->scratch = s;
			c->scratch_cap = n;
		}
		n = emu_card_read(c->card, q, c->scratch, n);
		if (c->verbose)
			usb_log(c, "IN ep %#x id %" PRIu64 ": %zu of %u bytes",
				0x81 + q, p->id, n, p->len);
		send_bulk(c, p->id, (uint8_t)(0x81 + q), usb_redir_success,
			  (uint32_t)n, c->scratch, (uint32_t)n);
		fifo_pop(f);
	}
}

/* Acknowledge a bulk OUT transfer: its length, no data. */
static void ack_out(struct conn *c, uint64_t id, uint8_t ep, uint32_t len)
{
	send_bulk(c, id, ep, usb_redir_success, len, NULL, 0);
}

/* Acknowledge held OUT transfers of queue @q once its input drained. */
static void service_out(struct conn *c, unsigned int q)
{
	struct in_fifo *f = &c->out_held[q];
	struct pending_in *p;

	if (!f->n || emu_card_in_throttled(c->card, q))
		return;
	while ((p = fifo_front(f))) {
		ack_out(c, p->id, (uint8_t)(q + 1), p->len);
		fifo_pop(f);
	}
}

static void service_all(struct conn *c)
{
	unsigned int q;

	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		service_in(c, q);
		service_out(c, q);
	}
}

/* ---- packet callbacks ----------------------------------------------------- */

static void send_ep_info(struct conn *c)
{
	struct usb_redir_ep_info_header ep;
	unsigned int i;

	memset(&ep, 0, sizeof(ep));
	for (i = 0; i < 32; i++)
		ep.type[i] = usb_redir_type_invalid;
	ep.type[0] = usb_redir_type_control;
	ep.type[16] = usb_redir_type_control;
	ep.max_packet_size[0] = 1u << EMU_EP0_MPS_EXP;
	ep.max_packet_size[16] = 1u << EMU_EP0_MPS_EXP;
	for (i = 1; i <= RK1828_HIF_NUM_QUEUES; i++) {
		ep.type[i] = usb_redir_type_bulk;
		ep.type[16 + i] = usb_redir_type_bulk;
		ep.max_packet_size[i] = EMU_BULK_MPS;
		ep.max_packet_size[16 + i] = EMU_BULK_MPS;
	}
	usbredirparser_send_ep_info(c->parser, &ep);
}

static void on_hello(void *priv, struct usb_redir_hello_header *hello)
{
	struct conn *c = priv;
	struct usb_redir_interface_info_header ii;
	struct usb_redir_device_connect_header dc = {
		.speed = usb_redir_speed_super,
		.device_class = 0xff,
		.vendor_id = RK1828_USB_VID,
		.product_id = RK1828_USB_PID,
		.device_version_bcd = 0x0100,
	};

	usb_log(c, "peer \"%.64s\" connected", hello->version);
	memset(&ii, 0, sizeof(ii));
	ii.interface_count = 1;
	ii.interface_class[0] = 0xff;
	usbredirparser_send_interface_info(c->parser, &ii);
	send_ep_info(c);
	usbredirparser_send_device_connect(c->parser, &dc);
}

static void on_reset(void *priv)
{
	struct conn *c = priv;

	if (c->verbose)
		usb_log(c, "port reset");
	c->config = 0;
	emu_card_reset_all(c->card);
	service_all(c);
}

static void on_set_configuration(void *priv, uint64_t id,
				 struct usb_redir_set_configuration_header *h)
{
	struct conn *c = priv;
	struct usb_redir_configuration_status_header st = {
		.status = usb_redir_success,
		.configuration = h->configuration,
	};

	if (h->configuration > EMU_CONFIG_VALUE) {
		st.status = usb_redir_stall;
		st.configuration = c->config;
	} else {
		if (c->verbose)
			usb_log(c, "SET_CONFIGURATION %u", h->configuration);
		/* Selecting a configuration resets the card (protocol.rst). */
		emu_card_reset_all(c->card);
		service_all(c);
		c->config = h->configuration;
	}
	usbredirparser_send_configuration_status(c->parser, id, &st);
}

static void on_get_configuration(void *priv, uint64_t id)
{
	struct conn *c = priv;
	struct usb_redir_configuration_status_header st = {
		.status = usb_redir_success,
		.configuration = c->config,
	};

	usbredirparser_send_configuration_status(c->parser, id, &st);
}

static void on_set_alt_setting(void *priv, uint64_t id,
			       struct usb_redir_set_alt_setting_header *h)
{
	struct conn *c = priv;
	struct usb_redir_alt_setting_status_header st = {
		.status = usb_redir_success,
		.interface = h->interface,
		.alt = 0,
	};

	if (!c->config || h->interface != 0 || h->alt != 0)
		st.status = usb_redir_stall;
	usbredirparser_send_alt_setting_status(c->parser, id, &st);
}

static void on_get_alt_setting(void *priv, uint64_t id,
			       struct usb_redir_get_alt_setting_header *h)
{
	struct conn *c = priv;
	struct usb_redir_alt_setting_status_header st = {
		.status = usb_redir_success,
		.interface = h->interface,
		.alt = 0,
	};

	if (!c->config || h->interface != 0)
		st.status = usb_redir_stall;
	usbredirparser_send_alt_setting_status(c->parser, id, &st);
}

/*
 * Standard and vendor requests on EP0. Returns the reply length (IN) or 0
 * (OUT) on success, -1 to stall.
 */
static int control_request(struct conn *c,
			   const struct usb_redir_control_packet_header *h,
			   uint8_t *reply)
{
	unsigned int type = h->requesttype & USB_TYPE_MASK;
	unsigned int recip = h->requesttype & USB_RECIP_MASK;
	bool in = h->requesttype & USB_DIR_IN;

	if (type == USB_TYPE_VENDOR) {
		if (!in && h->request == RK1828_HIF_REQ_RESET_QUEUES) {
			usb_log(c, "RESET_QUEUES");
			emu_card_reset_queues(c->card);
			service_all(c);
			return 0;
		}
		return -1;
	}
	if (type != USB_TYPE_STANDARD)
		return -1;

	switch (h->request) {
	case USB_REQ_GET_DESCRIPTOR:
		if (!in || recip != USB_RECIP_DEVICE)
			return -1;
		return emu_usb_descriptor(c->card, h->value >> 8,
					  h->value & 0xff, reply);
	case USB_REQ_GET_STATUS:
		if (!in)
			return -1;
		/* Device: self powered; interface/endpoint: no flags. */
		reply[0] = recip == USB_RECIP_DEVICE ? 1 : 0;
		reply[1] = 0;
		return 2;
	case USB_REQ_CLEAR_FEATURE:
	case USB_REQ_SET_FEATURE:
		/* ENDPOINT_HALT: our endpoints never halt; U1/U2 enables. */
		return in ? -1 : 0;
	case USB_REQ_GET_CONFIGURATION:
		if (!in)
			return -1;
		reply[0] = c->config;
		return 1;
	case USB_REQ_GET_INTERFACE:
		if (!in || !c->config)
			return -1;
		reply[0] = 0;
		return 1;
	case USB_REQ_SET_INTERFACE:
		return (!in && c->config && h->value == 0 && h->index == 0) ?
		       0 : -1;
	case USB_REQ_SET_SEL:
	case USB_REQ_SET_ISOCH_DELAY:
		return in ? -1 : 0;
	}
	return -1;
}

static void on_control(void *priv, uint64_t id,
		       struct usb_redir_control_packet_header *h,
		       uint8_t *data, int data_len)
{
	struct conn *c = priv;
	struct usb_redir_control_packet_header r = *h;
	uint8_t reply[256];
	bool in = h->requesttype & USB_DIR_IN;
	int n;

	memset(reply, 0, sizeof(reply));
	n = control_request(c, h, reply);
	if (c->verbose)
		usb_log(c, "control type %#x req %#x value %#x index %#x len %u -> %d",
			h->requesttype, h->request, h->value, h->index,
			h->length, n);
	if (n < 0) {
		r.status = usb_redir_stall;
		r.length = 0;
		usbredirparser_send_control_packet(c->parser, id, &r, NULL, 0);
	} else if (in) {
		if (n > h->length)
			n = h->length;
		r.status = usb_redir_success;
		r.length = (uint16_t)n;
		usbredirparser_send_control_packet(c->parser, id, &r, reply, n);
	} else {
		r.status = usb_redir_success;
		r.length = (uint16_t)data_len;
		usbredirparser_send_control_packet(c->parser, id, &r, NULL, 0);
	}
	if (data)
		usbredirparser_free_packet_data(c->parser, data);
}

/* Release callback for OUT buffers handed to the card (any thread). */
static void release_packet(void *opaque, uint8_t *data)
{
	usbredirparser_free_packet_data(opaque, data);
}

static void on_bulk(void *priv, uint64_t id,
		    struct usb_redir_bulk_packet_header *h,
		    uint8_t *data, int data_len)
{
	struct conn *c = priv;
	uint8_t ep = h->endpoint;
	uint32_t len = h->length | ((uint32_t)h->length_high << 16);
	unsigned int num = ep & 0x7f;

	if (!c->config || num < 1 || num > RK1828_HIF_NUM_QUEUES) {
		usb_log(c, "bulk packet for endpoint %#x %s: stall", ep,
			c->config ? "that does not exist" : "while unconfigured");
		send_bulk(c, id, ep, usb_redir_stall, 0, NULL, 0);
		if (data)
			usbredirparser_free_packet_data(c->parser, data);
		return;
	}
	if (ep & USB_DIR_IN) {
		if (data)
			usbredirparser_free_packet_data(c->parser, data);
		if (fifo_push(&c->in[num - 1], id, len)) {
			usb_log(c, "out of memory queueing an IN request");
			send_bulk(c, id, ep, usb_redir_ioerror, 0, NULL, 0);
			return;
		}
		service_in(c, num - 1);
		return;
	}
	if (c->verbose)
		usb_log(c, "OUT ep %#x id %" PRIu64 ": %d bytes", ep, id,
			data_len);
	if (data_len > 0 &&
	    emu_card_feed_owned(c->card, num - 1, data, (size_t)data_len,
				release_packet, c->parser)) {
		usb_log(c, "out of memory queueing %d OUT bytes", data_len);
		send_bulk(c, id, ep, usb_redir_ioerror, 0, NULL, 0);
		return;
	}
	if (data_len <= 0 && data)
		usbredirparser_free_packet_data(c->parser, data);
	/*
	 * Hold the acknowledgement while the queue has too much unconsumed
	 * input (a real device NAKs); keep acks in order.
	 */
	if (c->out_held[num - 1].n || emu_card_in_throttled(c->card, num - 1)) {
		if (!fifo_push(&c->out_held[num - 1], id, (uint32_t)data_len))
			return;
		usb_log(c, "out of memory holding an OUT acknowledgement");
	}
	ack_out(c, id, ep, (uint32_t)data_len);
}

static void on_cancel(void *priv, uint64_t id)
{
	struct conn *c = priv;
	unsigned int q;

	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		if (fifo_remove(&c->in[q], id)) {
			if (c->verbose)
				usb_log(c, "IN ep %#x id %" PRIu64 " cancelled",
					0x81 + q, id);
			send_bulk(c, id, (uint8_t)(0x81 + q),
				  usb_redir_cancelled, 0, NULL, 0);
			return;
		}
		if (fifo_remove(&c->out_held[q], id)) {
			/* Its data is already in the stream; the host resets. */
			send_bulk(c, id, (uint8_t)(q + 1), usb_redir_cancelled,
				  0, NULL, 0);
			return;
		}
	}
	/* Already answered: the peer drops the late reply itself. */
}

static void on_filter_filter(void *priv, struct usbredirfilter_rule *rules,
			     int rules_count)
{
	(void)priv;
	(void)rules_count;
	free(rules);
}

/* ---- the I/O loop --------------------------------------------------------- */

static struct usbredirparser *parser_new(struct conn *c)
{
	struct usbredirparser *p = usbredirparser_create();
	uint32_t caps[USB_REDIR_CAPS_SIZE] = { 0 };

	if (!p)
		return NULL;
	p->priv = c;
	p->log_func = on_log;
	p->read_func = on_read;
	p->write_func = on_write;
	p->hello_func = on_hello;
	p->reset_func = on_reset;
	p->set_configuration_func = on_set_configuration;
	p->get_configuration_func = on_get_configuration;
	p->set_alt_setting_func = on_set_alt_setting;
	p->get_alt_setting_func = on_get_alt_setting;
	p->control_packet_func = on_control;
	p->bulk_packet_func = on_bulk;
	p->cancel_data_packet_func = on_cancel;
	p->filter_filter_func = on_filter_filter;

	usbredirparser_caps_set_cap(caps, usb_redir_cap_connect_device_version);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_ep_info_max_packet_size);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_64bits_ids);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_32bits_bulk_length);
	usbredirparser_init(p, "rk1828-emu 1.0", caps, USB_REDIR_CAPS_SIZE,
			    usbredirparser_fl_usb_host);
	return p;
}

#define SERVE_ON 2	/* serve_once(): keep going */

/*
 * One round of emu_usbredir_serve(): write what the parser holds, wait for
 * the socket, the card's completions or the stop request, and handle them.
 * Return: SERVE_ON, or the result of emu_usbredir_serve() (0, 1, -1).
 */
static int serve_once(struct conn *c, int notify_fd, int stop_fd)
{
	struct pollfd pfd[3] = {
		{ .fd = c->fd, .events = POLLIN },
		{ .fd = notify_fd, .events = POLLIN },
		{ .fd = stop_fd, .events = POLLIN },
	};
	uint64_t v;
	int r;

	if (usbredirparser_has_data_to_write(c->parser)) {
		if (usbredirparser_do_write(c->parser) < 0 && !c->peer_closed) {
			usb_log(c, "write error: %s", strerror(errno));
			return -1;
		}
		if (c->peer_closed)
			return 0;
		if (usbredirparser_has_data_to_write(c->parser))
			pfd[0].events |= POLLOUT;
	}
	r = poll(pfd, stop_fd >= 0 ? 3 : 2, -1);
	if (r < 0) {
		if (errno == EINTR)
			return SERVE_ON;
		usb_log(c, "poll: %s", strerror(errno));
		return -1;
	}
	if (stop_fd >= 0 && (pfd[2].revents & POLLIN))
		return 1;
	if (pfd[1].revents & POLLIN) {
		if (read(notify_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			usb_log(c, "eventfd: %s", strerror(errno));
		service_all(c);
	}
	if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
		r = usbredirparser_do_read(c->parser);
		if (c->peer_closed)
			return 0;
		if (r == usbredirparser_read_io_error || c->io_error) {
			usb_log(c, "read error: %s", strerror(errno));
			return -1;
		}
		if (r == usbredirparser_read_parse_error)
			usb_log(c, "malformed usbredir packet skipped");
	}
	return SERVE_ON;
}

int emu_usbredir_serve(struct emu_card *card, int fd, int stop_fd, int verbose)
{
	struct conn c = {
		.card = card,
		.fd = fd,
		.verbose = verbose,
	};
	int notify_fd = emu_card_notify_fd(card);
	int ret;
	unsigned int q;
	int fl;

	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		usb_log(&c, "fcntl: %s", strerror(errno));
		return -1;
	}
	c.parser = parser_new(&c);
	if (!c.parser) {
		usb_log(&c, "cannot create the usbredir parser");
		return -1;
	}
	do {
		ret = serve_once(&c, notify_fd, stop_fd);
	} while (ret == SERVE_ON);

	/* Release the OUT buffers the card still holds while the parser lives. */
	emu_card_reset_queues(card);
	usbredirparser_destroy(c.parser);
	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		free(c.in[q].v);
		free(c.out_held[q].v);
	}
	free(c.scratch);
	return ret;
}
