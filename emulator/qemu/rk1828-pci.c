/*
 * SPDX-License-Identifier: MIT
 * Copyright (C) 2026 The rk1828 authors
 *
 * rk1828-pci: QEMU device model of the emulated Rockchip RK1828 PCIe card.
 *
 * A thin proxy. The card itself - its registers, rings, DMA engine,
 * memory and compute - is the card emulator (rk1828-emu --pcie), a
 * separate host process reached over a unix socket; this file only
 * presents it on the guest's PCI bus:
 *  - BAR0 reads and writes are forwarded over the socket (a read waits for
 *    the answer, a write is posted);
 *  - BAR2 is the MSI-X table; the emulator raises vectors by writing to
 *    eventfds it got from us, and we call msix_notify();
 *  - the guest's RAM (a memory-backend-memfd with share=on) is described
 *    to the emulator with its file descriptors whenever bus mastering is
 *    switched on or off, so the card's bus-master DMA is a memcpy in the
 *    emulator at the bus address the driver programmed;
 *  - BAR4, the card's peer window, is RAM from the memfd the emulator
 *    sends with HELLO_ACK (memory_region_init_ram_from_fd), so a peer
 *    card's DMA into it is a memory write; the memory map sent to the
 *    emulator includes the other cards' windows, and a memory listener
 *    sends it again whenever the guest's memory map changes while bus
 *    mastering is on (protocol.rst, "Peer window").
 * The PCI identity, BAR0 size, link and vector count come from the
 * emulator's HELLO_ACK. The link protocol is emulator/qemu/rk1828-link.h;
 * the card's registers are documented in Documentation/accel/rk1828/
 * protocol.rst (section PCIe).
 *
 * Usage (the emulator must listen before QEMU starts):
 *   rk1828-emu --pcie --socket /tmp/card0.sock &
 *   qemu-system-x86_64 -M q35,memory-backend=mem -m 2G \
 *     -object memory-backend-memfd,id=mem,size=2G,share=on \
 *     -device pcie-root-port,id=rp0,chassis=1 \
 *     -device rk1828-pci,bus=rp0,id=card0,socket=/tmp/card0.sock
 *
 * tools/build-qemu copies this file and rk1828-link.h into hw/misc of
 * Debian's qemu source and builds qemu-system-x86_64 with it.
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qemu/rcu.h"
#include "qapi/error.h"
#include "exec/cpu-common.h"
#include "exec/memory.h"
#include "hw/pci/msix.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qom/object.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "rk1828-link.h"

#define TYPE_RK1828_PCI "rk1828-pci"
OBJECT_DECLARE_SIMPLE_TYPE(RK1828PCIState, RK1828_PCI)

/* Offset of the PCIe capability in configuration space. */
#define RK1828_PCIE_CAP_OFFSET 0x80
/* BAR2: MSI-X table and PBA (BAR0 is 64-bit: it takes BAR0 and BAR1). */
#define RK1828_MSIX_BAR 2
/* BAR4 (and BAR5): the peer window, 64-bit prefetchable RAM. */
#define RK1828_P2P_BAR 4

typedef struct RK1828Vector {
    RK1828PCIState *s;
    unsigned int nr;
    int fd;
} RK1828Vector;

struct RK1828PCIState {
    PCIDevice parent_obj;

    /* properties */
    char *socket_path;
    uint32_t timeout_ms;

    int fd;             /* connection to the emulator, -1 once gone */
    struct rk1828_link_identity id;
    MemoryRegion bar0;
    MemoryRegion p2p_bar;
    int p2p_fd;         /* memfd of the peer window until BAR4 owns it */
    RK1828Vector vec[RK1828_LINK_MAX_VECTORS];
    unsigned int nvec;
    bool dma_on;        /* state of the last MEMMAP sent */
    MemoryListener listener;
    bool listening;
};

/* The emulator is gone: the card behaves like a device that fell off the bus. */
static void rk1828_link_lost(RK1828PCIState *s, const char *what, int err)
{
    if (s->fd < 0) {
        return;
    }
    error_report("rk1828-pci: %s: %s %s%s; the card no longer answers",
                 s->socket_path, what, err ? "failed: " : "",
                 err ? strerror(err) : "");
    close(s->fd);
    s->fd = -1;
}

/* Send one message with an optional payload and file descriptors. */
static int rk1828_link_send(RK1828PCIState *s, uint32_t type, uint32_t size,
                            uint32_t count, uint64_t addr, uint64_t value,
                            const void *payload, size_t plen,
                            const int *fds, unsigned int nfds)
{
    struct rk1828_link_msg msg = {
        .magic = RK1828_LINK_MAGIC, .type = type, .size = size,
        .count = count, .addr = addr, .value = value,
    };
    union {
        char buf[CMSG_SPACE(sizeof(int) * RK1828_LINK_MAX_REGIONS)];
        struct cmsghdr align;
    } ctl;
    struct iovec iov[2] = {
        { .iov_base = &msg, .iov_len = sizeof(msg) },
        { .iov_base = (void *)payload, .iov_len = plen },
    };
    struct msghdr mh = { .msg_iov = iov, .msg_iovlen = plen ? 2 : 1 };
    size_t total = sizeof(msg) + plen, done = 0;

    if (s->fd < 0) {
        return -1;
    }
    assert(nfds <= RK1828_LINK_MAX_REGIONS);
    if (nfds) {
        struct cmsghdr *c;

        memset(&ctl, 0, sizeof(ctl));
        mh.msg_control = ctl.buf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
        c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
    }
    while (done < total) {
        ssize_t n = sendmsg(s->fd, &mh, MSG_NOSIGNAL);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            rk1828_link_lost(s, "send", errno);
            return -1;
        }
        done += n;
        /* A partial write: the descriptors went with the first byte. */
        mh.msg_control = NULL;
        mh.msg_controllen = 0;
        while (mh.msg_iovlen && (size_t)n >= mh.msg_iov[0].iov_len) {
            n -= mh.msg_iov[0].iov_len;
            mh.msg_iov++;
            mh.msg_iovlen--;
        }
        if (mh.msg_iovlen) {
            mh.msg_iov[0].iov_base = (char *)mh.msg_iov[0].iov_base + n;
            mh.msg_iov[0].iov_len -= n;
        }
    }
    return 0;
}

/* Receive exactly @len bytes, waiting at most the read timeout. */
static int rk1828_link_recv(RK1828PCIState *s, void *buf, size_t len)
{
    size_t done = 0;

    while (done < len) {
        struct pollfd p = { .fd = s->fd, .events = POLLIN };
        ssize_t n;
        int r;

        if (s->fd < 0) {
            return -1;
        }
        r = poll(&p, 1, s->timeout_ms);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r == 0) {
            rk1828_link_lost(s, "no answer within the timeout", 0);
            return -1;
        }
        n = recv(s->fd, (char *)buf + done, len - done, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
            continue;
        }
        if (n <= 0) {
            rk1828_link_lost(s, n ? "recv" : "connection closed by the emulator",
                             n ? errno : 0);
            return -1;
        }
        done += n;
    }
    return 0;
}

static uint64_t rk1828_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    RK1828PCIState *s = opaque;
    struct rk1828_link_msg r;
    uint64_t ones = size == 8 ? UINT64_MAX : (1ULL << (size * 8)) - 1;

    if (rk1828_link_send(s, RK1828_LINK_MMIO_READ, size, 0, addr, 0,
                         NULL, 0, NULL, 0) ||
        rk1828_link_recv(s, &r, sizeof(r))) {
        return ones;    /* like a read from a device that is gone */
    }
    if (r.magic != RK1828_LINK_MAGIC || r.type != RK1828_LINK_MMIO_DATA) {
        rk1828_link_lost(s, "bad answer to a register read", 0);
        return ones;
    }
    return r.value & ones;
}

static void rk1828_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                              unsigned size)
{
    rk1828_link_send(opaque, RK1828_LINK_MMIO_WRITE, size, 0, addr, val,
                     NULL, 0, NULL, 0);
}

static const MemoryRegionOps rk1828_mmio_ops = {
    .read = rk1828_mmio_read,
    .write = rk1828_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 4, .max_access_size = 8 },
    .impl = { .min_access_size = 4, .max_access_size = 8 },
};

/* The emulator raised a vector. */
static void rk1828_vector_fired(void *opaque)
{
    RK1828Vector *v = opaque;
    PCIDevice *pdev = PCI_DEVICE(v->s);
    uint64_t cnt;

    if (read(v->fd, &cnt, sizeof(cnt)) != sizeof(cnt)) {
        return;
    }
    /* msix_notify() sets the pending bit while the vector is masked. */
    if (msix_enabled(pdev)) {
        msix_notify(pdev, v->nr);
    }
}

typedef struct RK1828MemMap {
    struct rk1828_link_region r[RK1828_LINK_MAX_REGIONS];
    int fds[RK1828_LINK_MAX_REGIONS];
    unsigned int nr, nfd;
    uint64_t ram_bytes, unshared_bytes;
    bool overflow;
} RK1828MemMap;

/* flatview_for_each_range() callback: collect the fd-backed RAM ranges. */
static bool rk1828_memmap_range(Int128 start, Int128 len,
                                const MemoryRegion *cmr, hwaddr off,
                                void *opaque)
{
    MemoryRegion *mr = (MemoryRegion *)cmr;
    RK1828MemMap *m = opaque;
    uint64_t gpa = int128_get64(start), size = int128_get64(len);
    struct rk1828_link_region *prev;
    unsigned int i;
    int fd;

    if (!memory_region_is_ram(mr) || memory_region_is_ram_device(mr) ||
        memory_region_is_rom(mr) || mr->readonly || !mr->ram_block) {
        return false;
    }
    m->ram_bytes += size;
    fd = memory_region_get_fd(mr);
    if (fd < 0 || !qemu_ram_is_shared(mr->ram_block)) {
        m->unshared_bytes += size;
        return false;
    }
    for (i = 0; i < m->nfd && m->fds[i] != fd; i++) {
        continue;
    }
    prev = m->nr ? &m->r[m->nr - 1] : NULL;
    if (prev && i < m->nfd && prev->fd_index == i &&
        prev->gpa + prev->size == gpa && prev->offset + prev->size == off) {
        prev->size += size;
        return false;
    }
    if (m->nr == RK1828_LINK_MAX_REGIONS ||
        (i == m->nfd && m->nfd == RK1828_LINK_MAX_REGIONS)) {
        m->overflow = true;
        return true;
    }
    if (i == m->nfd) {
        m->fds[m->nfd++] = fd;
    }
    m->r[m->nr++] = (struct rk1828_link_region) {
        .gpa = gpa, .size = size, .offset = off, .fd_index = i,
    };
    return false;
}

static void rk1828_memmap_collect(AddressSpace *as, RK1828MemMap *m)
{
    memset(m, 0, sizeof(*m));
    RCU_READ_LOCK_GUARD();
    flatview_for_each_range(address_space_to_flatview(as),
                            rk1828_memmap_range, m);
}

/* Tell the emulator what DMA can reach now (nothing while bus mastering is off). */
static void rk1828_send_memmap(RK1828PCIState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    bool on = pci_get_word(pdev->config + PCI_COMMAND) & PCI_COMMAND_MASTER;
    RK1828MemMap m;

    if (on) {
        rk1828_memmap_collect(pci_get_address_space(pdev), &m);
        if (m.overflow) {
            warn_report("rk1828-pci: guest memory map has more than %u pieces; DMA reaches only the first ones",
                        RK1828_LINK_MAX_REGIONS);
        }
    } else {
        memset(&m, 0, sizeof(m));
    }
    s->dma_on = on;
    rk1828_link_send(s, RK1828_LINK_MEMMAP, m.nfd, m.nr, 0, 0, m.r,
                     m.nr * sizeof(m.r[0]), m.fds, m.nfd);
}

static void rk1828_write_config(PCIDevice *pdev, uint32_t addr, uint32_t val,
                                int len)
{
    RK1828PCIState *s = RK1828_PCI(pdev);

    pci_default_write_config(pdev, addr, val, len);
    if (pci_is_express(pdev)) {
        pcie_cap_flr_write_config(pdev, addr, val, len);
    }
    if (s->dma_on != !!(pci_get_word(pdev->config + PCI_COMMAND) &
                        PCI_COMMAND_MASTER)) {
        rk1828_send_memmap(s);
    }
}

/*
 * Device reset (system reset, FLR): the card resets fully. The PCI core
 * clears the command register right after this, so DMA is off until the
 * driver enables bus mastering again (rk1828_write_config()).
 */
static void rk1828_pci_reset(DeviceState *dev)
{
    RK1828PCIState *s = RK1828_PCI(dev);

    rk1828_link_send(s, RK1828_LINK_RESET, 0, 0, 0, 0, NULL, 0, NULL, 0);
    s->dma_on = false;
    rk1828_link_send(s, RK1828_LINK_MEMMAP, 0, 0, 0, 0, NULL, 0, NULL, 0);
}

/*
 * Receive the HELLO_ACK: @len bytes, and the window's memfd that comes
 * with the first byte when the card has a peer window.
 */
static int rk1828_recv_ack(RK1828PCIState *s, void *buf, size_t len)
{
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = { .iov_base = buf, .iov_len = len };
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1,
        .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
    };
    struct pollfd p = { .fd = s->fd, .events = POLLIN };
    struct cmsghdr *c;
    ssize_t n;

    if (poll(&p, 1, s->timeout_ms) <= 0) {
        rk1828_link_lost(s, "no HELLO answer within the timeout", 0);
        return -1;
    }
    do {
        n = recvmsg(s->fd, &mh, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
        rk1828_link_lost(s, "recvmsg", n ? errno : 0);
        return -1;
    }
    for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len == CMSG_LEN(sizeof(int)) && s->p2p_fd < 0) {
            memcpy(&s->p2p_fd, CMSG_DATA(c), sizeof(int));
        }
    }
    return rk1828_link_recv(s, (char *)buf + n, len - n);
}

static int rk1828_connect(RK1828PCIState *s, Error **errp)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    struct {
        struct rk1828_link_msg msg;
        struct rk1828_link_identity id;
    } ack;

    if (!s->socket_path || !*s->socket_path) {
        error_setg(errp, "rk1828-pci: the 'socket' property (the card emulator's unix socket) is required");
        return -1;
    }
    if (strlen(s->socket_path) >= sizeof(sa.sun_path)) {
        error_setg(errp, "rk1828-pci: socket path too long: %s", s->socket_path);
        return -1;
    }
    strcpy(sa.sun_path, s->socket_path);
    s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->fd < 0 || connect(s->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        error_setg_errno(errp, errno,
                         "rk1828-pci: cannot reach the card emulator at %s (start 'rk1828-emu --pcie --socket %s' first)",
                         s->socket_path, s->socket_path);
        if (s->fd >= 0) {
            close(s->fd);
        }
        s->fd = -1;
        return -1;
    }
    if (rk1828_link_send(s, RK1828_LINK_HELLO, 0, 0, 0, RK1828_LINK_VERSION,
                         NULL, 0, NULL, 0) ||
        rk1828_recv_ack(s, &ack, sizeof(ack))) {
        error_setg(errp, "rk1828-pci: no HELLO answer from %s", s->socket_path);
        return -1;
    }
    if (ack.msg.magic != RK1828_LINK_MAGIC ||
        ack.msg.type != RK1828_LINK_HELLO_ACK ||
        ack.msg.value != RK1828_LINK_VERSION) {
        error_setg(errp, "rk1828-pci: %s speaks link version %" PRIu64 " (type %u), we speak %u",
                   s->socket_path, ack.msg.value, ack.msg.type,
                   RK1828_LINK_VERSION);
        return -1;
    }
    s->id = ack.id;
    if (!s->id.vectors || s->id.vectors > RK1828_LINK_MAX_VECTORS ||
        s->id.bar0_size < 4096 || (s->id.bar0_size & (s->id.bar0_size - 1))) {
        error_setg(errp, "rk1828-pci: %s announces %u vectors, BAR0 of %u bytes",
                   s->socket_path, s->id.vectors, s->id.bar0_size);
        return -1;
    }
    if (s->id.p2p_size_mib &&
        (s->p2p_fd < 0 || (s->id.p2p_size_mib & (s->id.p2p_size_mib - 1)))) {
        error_setg(errp, "rk1828-pci: %s announces a %u MiB peer window %s",
                   s->socket_path, s->id.p2p_size_mib,
                   s->p2p_fd < 0 ? "without its memfd" : "(not a power of two)");
        return -1;
    }
    return 0;
}

/* BAR4: the peer window, the emulator's memfd as RAM (no MMIO callbacks). */
static int rk1828_setup_p2p_bar(RK1828PCIState *s, Error **errp)
{
    Error *err = NULL;

    if (!s->id.p2p_size_mib) {
        return 0;
    }
    memory_region_init_ram_from_fd(&s->p2p_bar, OBJECT(s), "rk1828-p2p-window",
                                   (uint64_t)s->id.p2p_size_mib << 20,
                                   RAM_SHARED, s->p2p_fd, 0, &err);
    if (err) {
        error_propagate(errp, err);
        return -1;
    }
    s->p2p_fd = -1;     /* the RAM block closes it */
    pci_register_bar(PCI_DEVICE(s), RK1828_P2P_BAR,
                     PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->p2p_bar);
    return 0;
}

/* The guest's memory map changed (a BAR moved, a card came or went). */
static void rk1828_memory_commit(MemoryListener *l)
{
    RK1828PCIState *s = container_of(l, RK1828PCIState, listener);

    if (s->dma_on) {
        rk1828_send_memmap(s);
    }
}

static int rk1828_setup_vectors(RK1828PCIState *s, Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    int fds[RK1828_LINK_MAX_VECTORS];
    unsigned int i;

    if (msix_init_exclusive_bar(pdev, s->id.vectors, RK1828_MSIX_BAR, errp)) {
        return -1;
    }
    for (i = 0; i < s->id.vectors; i++) {
        RK1828Vector *v = &s->vec[i];

        v->s = s;
        v->nr = i;
        v->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (v->fd < 0) {
            error_setg_errno(errp, errno, "rk1828-pci: eventfd");
            return -1;
        }
        s->nvec++;
        fds[i] = v->fd;
        msix_vector_use(pdev, i);
        qemu_set_fd_handler(v->fd, rk1828_vector_fired, NULL, v);
    }
    if (rk1828_link_send(s, RK1828_LINK_IRQFDS, 0, s->nvec, 0, 0, NULL, 0,
                         fds, s->nvec)) {
        error_setg(errp, "rk1828-pci: cannot hand the interrupt eventfds to %s",
                   s->socket_path);
        return -1;
    }
    return 0;
}

/* The card DMAs into guest RAM itself: it must be a shared file mapping. */
static int rk1828_check_ram(RK1828PCIState *s, Error **errp)
{
    RK1828MemMap m;

    rk1828_memmap_collect(&address_space_memory, &m);
    if (!m.nr || m.unshared_bytes > 16 * 1024 * 1024) {
        error_setg(errp, "rk1828-pci: the card reaches guest RAM by DMA, so RAM must be shareable: "
                   "-object memory-backend-memfd,id=mem,size=SIZE,share=on -machine memory-backend=mem "
                   "(%" PRIu64 " of %" PRIu64 " bytes are not)",
                   m.unshared_bytes, m.ram_bytes);
        return -1;
    }
    return 0;
}

static void rk1828_set_identity(RK1828PCIState *s, Error **errp)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint8_t *cfg = pdev->config;

    pci_config_set_vendor_id(cfg, s->id.vendor_id);
    pci_config_set_device_id(cfg, s->id.device_id);
    pci_config_set_revision(cfg, s->id.revision);
    pci_config_set_class(cfg, s->id.class_code >> 8);
    pci_config_set_prog_interface(cfg, s->id.class_code & 0xff);
    pci_set_word(cfg + PCI_SUBSYSTEM_VENDOR_ID, s->id.subsystem_vendor_id);
    pci_set_word(cfg + PCI_SUBSYSTEM_ID, s->id.subsystem_id);
    pci_config_set_interrupt_pin(cfg, 1);

    if (pci_is_express(pdev)) {
        uint8_t *exp;

        if (pcie_endpoint_cap_init(pdev, RK1828_PCIE_CAP_OFFSET) < 0) {
            error_setg(errp, "rk1828-pci: cannot add the PCIe capability");
            return;
        }
        pcie_cap_flr_init(pdev);
        /* The link the card trained, e.g. PCIe 2.1 x2: 5 GT/s, 2 lanes. */
        exp = cfg + pdev->exp.exp_cap;
        pci_long_test_and_clear_mask(exp + PCI_EXP_LNKCAP,
                                     PCI_EXP_LNKCAP_MLW | PCI_EXP_LNKCAP_SLS);
        pci_long_test_and_set_mask(exp + PCI_EXP_LNKCAP,
                                   (s->id.link_width << 4) | s->id.link_speed);
        pci_set_word(exp + PCI_EXP_LNKSTA,
                     (s->id.link_width << 4) | s->id.link_speed);
    }
}

static void rk1828_pci_realize(PCIDevice *pdev, Error **errp)
{
    RK1828PCIState *s = RK1828_PCI(pdev);
    Error *err = NULL;

    s->fd = -1;
    s->p2p_fd = -1;
    if (rk1828_check_ram(s, errp) || rk1828_connect(s, errp)) {
        goto fail;
    }
    rk1828_set_identity(s, &err);
    if (err) {
        error_propagate(errp, err);
        goto fail;
    }
    memory_region_init_io(&s->bar0, OBJECT(s), &rk1828_mmio_ops, s,
                          "rk1828-regs", s->id.bar0_size);
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->bar0);
    if (rk1828_setup_p2p_bar(s, errp) || rk1828_setup_vectors(s, errp)) {
        goto fail;
    }
    s->dma_on = true;
    rk1828_send_memmap(s);      /* bus mastering starts off: no DMA */
    s->listener = (MemoryListener) {
        .name = "rk1828-pci",
        .commit = rk1828_memory_commit,
    };
    memory_listener_register(&s->listener, &address_space_memory);
    s->listening = true;
    return;

fail:
    if (s->p2p_fd >= 0) {
        close(s->p2p_fd);
        s->p2p_fd = -1;
    }
    if (s->fd >= 0) {
        close(s->fd);
        s->fd = -1;
    }
}

static void rk1828_pci_exit(PCIDevice *pdev)
{
    RK1828PCIState *s = RK1828_PCI(pdev);
    unsigned int i;

    if (s->listening) {
        memory_listener_unregister(&s->listener);
        s->listening = false;
    }
    for (i = 0; i < s->nvec; i++) {
        qemu_set_fd_handler(s->vec[i].fd, NULL, NULL, NULL);
        msix_vector_unuse(pdev, i);
        close(s->vec[i].fd);
    }
    s->nvec = 0;
    msix_uninit_exclusive_bar(pdev);
    if (s->fd >= 0) {
        close(s->fd);    /* the emulator sees the card unplugged */
        s->fd = -1;
    }
}

static Property rk1828_pci_properties[] = {
    DEFINE_PROP_STRING("socket", RK1828PCIState, socket_path),
    DEFINE_PROP_UINT32("timeout", RK1828PCIState, timeout_ms, 10000),
    DEFINE_PROP_END_OF_LIST(),
};

/* The card's state lives in the emulator process: no migration. */
static const VMStateDescription rk1828_pci_vmsd = {
    .name = TYPE_RK1828_PCI,
    .unmigratable = 1,
};

static void rk1828_pci_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = rk1828_pci_realize;
    k->exit = rk1828_pci_exit;
    k->config_write = rk1828_write_config;
    /* Placeholders until realize takes the emulator's identity. */
    k->vendor_id = 0x1d87;
    k->device_id = 0x1828;
    k->class_id = 0x1200;
    dc->reset = rk1828_pci_reset;
    dc->vmsd = &rk1828_pci_vmsd;
    dc->desc = "Rockchip RK1828 NPU card (proxy to rk1828-emu --pcie)";
    dc->hotpluggable = true;
    device_class_set_props(dc, rk1828_pci_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static void rk1828_pci_register_types(void)
{
    static InterfaceInfo interfaces[] = {
        { INTERFACE_PCIE_DEVICE },
        { INTERFACE_CONVENTIONAL_PCI_DEVICE },
        { },
    };
    static const TypeInfo info = {
        .name = TYPE_RK1828_PCI,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(RK1828PCIState),
        .class_init = rk1828_pci_class_init,
        .interfaces = interfaces,
    };

    type_register_static(&info);
}

type_init(rk1828_pci_register_types)
