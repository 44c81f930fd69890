"""The architectures the lab builds for, one record each: how make names
it, where the image lands, which toolchain and emulator it needs, and how
QEMU boots it bare (no userspace: the KUnit runs)."""
from __future__ import annotations

from dataclasses import dataclass

from .runner import LabError


@dataclass(frozen=True)
class Arch:
    name: str
    make_arch: str
    image: str                          # inside the O= directory
    cross_compile: str = ""             # toolchain prefix; "" for the host's
    toolchain_packages: tuple[str, ...] = ()
    # A bare boot (memlab kunit): emulator, its machine options, console.
    qemu: tuple[str, ...] = ()
    qemu_packages: tuple[str, ...] = ()
    console: str = ""

    @property
    def bootable(self) -> bool:
        return bool(self.qemu)


# The architecture of the guests (virtme-ng), which run the scenarios.
GUEST_ARCH = "x86_64"

ARCHES: dict[str, Arch] = {a.name: a for a in [
    # Guests boot through virtme-ng (guest.py); bare boots run KUnit.
    Arch("x86_64", "x86_64", "arch/x86/boot/bzImage",
         qemu=("qemu-system-x86_64",), qemu_packages=("qemu-system-x86",),
         console="ttyS0"),
    # 32-bit: compile tests only (the HIGHMEM fallbacks).
    Arch("i386", "i386", "arch/x86/boot/bzImage"),
    # KUnit only: the generic, plain-store copy helpers.
    Arch("arm64", "arm64", "arch/arm64/boot/Image", "aarch64-linux-gnu-",
         toolchain_packages=("gcc-aarch64-linux-gnu",),
         qemu=("qemu-system-aarch64", "-machine", "virt", "-cpu", "max,pauth-impdef=on"),
         qemu_packages=("qemu-system-arm",), console="ttyAMA0"),
]}


def get(name: str) -> Arch:
    if name not in ARCHES:
        raise LabError(f"unknown arch {name!r} (supported: {', '.join(ARCHES)})")
    return ARCHES[name]
