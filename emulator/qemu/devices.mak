# Devices of our qemu-system-x86_64 (tools/build-qemu passes it as
# --with-devices-x86_64 with --without-default-devices): the q35 machine
# and what tools/vm-run and virtme-ng put on it, nothing else.
CONFIG_Q35=y
CONFIG_PCIE_PORT=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_9P=y
CONFIG_VIRTIO_SERIAL=y
CONFIG_VIRTIO_NET=y
CONFIG_WDT_IB6300ESB=y
CONFIG_USB_XHCI_PCI=y
CONFIG_RK1828_PCI=y
