// SPDX-License-Identifier: MIT
/*
 * Card emulator, PCIe front end: the bus-master DMA window. The proxy
 * sends the guest RAM ranges the card may reach (emulator/qemu/
 * rk1828-link.h, MEMMAP) with the file descriptors of the guest's
 * memory-backend-memfd; they are mapped shared, so a DMA is a memcpy at
 * the bus address the driver programmed. A file stays mapped until the
 * emulator exits: pointers the card's workers still hold never dangle.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcie_priv.h"

/* Map @fd shared (or find it mapped already); NULL on failure. */
static struct dma_file *dma_file_get(struct dma_map *m, int fd)
{
	struct dma_file *f;
	struct stat st;
	unsigned int i;
	void *p;

	if (fstat(fd, &st) < 0 || st.st_size <= 0)
		return NULL;
	for (i = 0; i < m->n_files; i++) {
		f = &m->files[i];
		if (f->dev == st.st_dev && f->ino == st.st_ino &&
		    f->size == (size_t)st.st_size)
			return f;
	}
	f = realloc(m->files, (m->n_files + 1) * sizeof(*f));
	if (!f)
		return NULL;
	m->files = f;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	f = &m->files[m->n_files++];
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->base = p;
	f->size = (size_t)st.st_size;
	return f;
}

/**
 * pcie_dma_set_map() - install the DMA window the proxy sent
 * @m: the map
 * @r: regions (@n of them; 0: bus mastering is off)
 * @n: region count
 * @fds: the message's file descriptors (closed here)
 * @n_fds: their count
 *
 * Return: 0, or -1 when a region names a bad descriptor or lies outside
 * its file; the window is then empty (DMA faults) and the error logged by
 * the caller.
 */
int pcie_dma_set_map(struct dma_map *m, const struct rk1828_link_region *r,
		     unsigned int n, const int *fds, unsigned int n_fds)
{
	struct dma_file *files[RK1828_LINK_MAX_REGIONS] = { NULL };
	unsigned int i;
	int ret = 0;

	m->n = 0;
	for (i = 0; i < n_fds && i < RK1828_LINK_MAX_REGIONS; i++)
		files[i] = dma_file_get(m, fds[i]);
	for (i = 0; i < n_fds; i++)
		close(fds[i]);
	if (n > RK1828_LINK_MAX_REGIONS)
		return -1;
	for (i = 0; i < n; i++) {
		struct dma_file *f = r[i].fd_index < n_fds &&
			r[i].fd_index < RK1828_LINK_MAX_REGIONS ?
			files[r[i].fd_index] : NULL;

		if (!f || !r[i].size || r[i].offset > f->size ||
		    r[i].size > f->size - r[i].offset ||
		    r[i].gpa + r[i].size < r[i].gpa) {
			ret = -1;
			break;
		}
		m->r[i].gpa = r[i].gpa;
		m->r[i].size = r[i].size;
		m->r[i].host = f->base + r[i].offset;
	}
	m->n = ret ? 0 : n;
	return ret;
}

/**
 * pcie_dma_fini() - unmap every guest RAM file
 * @m: the map; nothing may use its pointers any more
 */
void pcie_dma_fini(struct dma_map *m)
{
	unsigned int i;

	for (i = 0; i < m->n_files; i++)
		munmap(m->files[i].base, m->files[i].size);
	free(m->files);
	m->files = NULL;
	m->n_files = 0;
	m->n = 0;
}

/**
 * pcie_dma_ptr() - where the emulator sees bus addresses [addr, addr + len)
 * @m: the map
 * @addr: bus address
 * @len: bytes, at least 1
 *
 * Return: the host pointer, or NULL when the range is not inside one
 * region of the window (an out-of-range DMA, or bus mastering off).
 */
uint8_t *pcie_dma_ptr(const struct dma_map *m, uint64_t addr, uint64_t len)
{
	unsigned int i;

	if (!len || addr + len < addr)
		return NULL;
	for (i = 0; i < m->n; i++) {
		const struct dma_region *r = &m->r[i];

		if (addr >= r->gpa && addr - r->gpa < r->size &&
		    len <= r->size - (addr - r->gpa))
			return r->host + (addr - r->gpa);
	}
	return NULL;
}

/**
 * pcie_dma_buffer() - translate a descriptor's data buffer
 * @m: the map
 * @desc: the descriptor (a snapshot, not guest memory)
 * @segs: set to a malloc'ed array of the pieces (NULL for no buffer)
 * @n_segs: set to their count
 * @cap: set to the buffer's total size in bytes
 *
 * A contiguous buffer is one piece; with %RK1828_PCI_DESC_F_SGL the
 * scatter-gather list is read from guest memory and each entry becomes a
 * piece. Every piece must lie inside the window.
 *
 * Return: 0; -EFAULT for an address the card cannot reach; -EINVAL for a
 * malformed list (too many entries, an empty entry, unknown flags);
 * -ENOMEM.
 */
int pcie_dma_buffer(const struct dma_map *m, const struct rk1828_pci_desc *desc,
		    struct dma_seg **segs, unsigned int *n_segs, uint64_t *cap)
{
	uint64_t addr = le64toh(desc->data_addr);
	uint32_t count = le32toh(desc->data_count);
	uint32_t flags = le32toh(desc->flags);
	const struct rk1828_pci_sg *sg;
	struct dma_seg *s;
	uint32_t i;

	*segs = NULL;
	*n_segs = 0;
	*cap = 0;
	if (flags & ~RK1828_PCI_DESC_F_SGL)
		return -EINVAL;
	if (!count)
		return 0;
	if (!(flags & RK1828_PCI_DESC_F_SGL)) {
		s = malloc(sizeof(*s));
		if (!s)
			return -ENOMEM;
		s->p = pcie_dma_ptr(m, addr, count);
		s->len = count;
		if (!s->p) {
			free(s);
			return -EFAULT;
		}
		*segs = s;
		*n_segs = 1;
		*cap = count;
		return 0;
	}
	if (count > EMU_PCIE_MAX_SG)
		return -EINVAL;
	sg = (const void *)pcie_dma_ptr(m, addr, (uint64_t)count * sizeof(*sg));
	if (!sg)
		return -EFAULT;
	s = calloc(count, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		struct rk1828_pci_sg e;

		memcpy(&e, &sg[i], sizeof(e));	/* the host may change it */
		s[i].len = le32toh(e.len);
		if (!s[i].len || e.pad) {
			free(s);
			return -EINVAL;
		}
		s[i].p = pcie_dma_ptr(m, le64toh(e.addr), s[i].len);
		if (!s[i].p) {
			free(s);
			return -EFAULT;
		}
		*cap += s[i].len;
	}
	*segs = s;
	*n_segs = count;
	return 0;
}
