# Devices of our qemu-system-x86_64 (tools/build-qemu passes it as
# --with-devices-x86_64 with --without-default-devices): the q35 machine
# and what tools/vm-run and virtme-ng put on it, nothing else.
CONFIG_Q35=y
CONFIG_PCIE_PORT=y
# tools/vm-run --pcie-switch: the PCIe cards behind one switch (TI XIO3130
# upstream x3130-upstream and downstream xio3130-downstream ports), the
# topology where a kernel with CONFIG_PCI_P2PDMA allows peer-to-peer DMA.
CONFIG_XIO3130=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_9P=y
CONFIG_VIRTIO_SERIAL=y
CONFIG_VIRTIO_NET=y
CONFIG_WDT_IB6300ESB=y
CONFIG_USB_XHCI_PCI=y
CONFIG_RK1828_PCI=y
