"""The architectures the lab builds for, one record each: how make names
it, where the image lands, which toolchain and emulator it needs, how QEMU
boots it bare (no userspace: the KUnit runs), and which kernels `memlab
test` builds for it. Everything else (CLI choices, deps, builds, KUnit,
guests, the test plan) reads this table."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import paths
from .runner import LabError


@dataclass(frozen=True)
class Arch:
    name: str
    make_arch: str
    image: str                          # inside the O= directory
    # The configs `memlab test` builds, in order; on a bootable arch each
    # one's patched kernel runs the KUnit suites, the first by default.
    test_configs: tuple[str, ...]
    cross_compile: str = ""             # toolchain prefix; "" for the host's
    toolchain_packages: tuple[str, ...] = ()
    # A bare boot (memlab kunit): emulator, its machine options, console.
    qemu: tuple[str, ...] = ()
    qemu_packages: tuple[str, ...] = ()
    console: str = ""
    max_cpus: int = 0                   # the most its QEMU machine takes (0: no limit)
    # How a bare boot ends after the suites (kunit_shutdown=): a reset,
    # which -no-reboot turns into QEMU's exit, where the machine resets.
    kunit_shutdown: str = "reboot"
    # What its bare KUnit boots add to the command line.
    kunit_append: tuple[str, ...] = ()

    @property
    def bootable(self) -> bool:
        return bool(self.qemu)

    @property
    def qemu_binary(self) -> str:
        return self.qemu[0] if self.qemu else ""


# A QEMU CPU with every feature TCG has that calls itself Intel (ERMS
# included: clear_pages()'s REP STOSB variant).
INTEL_TCG_CPU = "max,vendor=GenuineIntel"
# TCG has no CLZERO, and x86-64 clears large runs with MOVNTI only when
# asked to: the boots that test the streaming clear ask.
TCG_CLEAR_STREAM = "clear_pages_stream=movnti"
# The config built from Debian's own (configs/debian.config): what users
# run, so its base kernel runs guests too and the kernel's selftests run on it.
DEBIAN_CONFIG = "debian"

ARCHES: dict[str, Arch] = {a.name: a for a in [
    # The guests' architecture (virtme-ng): the lab kernels, measured (lab),
    # with deferred struct page init (defer), under DEBUG_VM with the fast
    # paths on (vm), under KASAN (debug); and Debian's own (debian).
    # Its bare boots run on INTEL_TCG_CPU with TCG_CLEAR_STREAM, so that
    # KUnit's clear_pages() streams.
    Arch("x86_64", "x86_64", "arch/x86/boot/bzImage",
         ("lab", "defer", "vm", "debug", DEBIAN_CONFIG),
         qemu=("qemu-system-x86_64", "-cpu", INTEL_TCG_CPU),
         qemu_packages=("qemu-system-x86",), console="ttyS0",
         kunit_append=(TCG_CLEAR_STREAM,)),
    # KUnit only: the generic, plain-store copy helpers.
    Arch("arm64", "arm64", "arch/arm64/boot/Image", ("kunit",), "aarch64-linux-gnu-",
         toolchain_packages=("gcc-aarch64-linux-gnu",),
         qemu=("qemu-system-aarch64", "-machine", "virt", "-cpu", "max,pauth-impdef=on"),
         qemu_packages=("qemu-system-arm",), console="ttyAMA0"),
    # KUnit only: WANT_PAGE_VIRTUAL, page->virtual refreshed per pfn.
    Arch("sparc64", "sparc64", "arch/sparc/boot/image", ("kunit",), "sparc64-linux-gnu-",
         toolchain_packages=("gcc-sparc64-linux-gnu",),
         qemu=("qemu-system-sparc64", "-machine", "sun4u"),
         qemu_packages=("qemu-system-sparc",), console="ttyS0", max_cpus=1,
         kunit_shutdown="poweroff"),    # its PROM cannot reset: "Reboot failed!"
    # 32-bit: compile tests only (the HIGHMEM fallbacks).
    Arch("i386", "i386", "arch/x86/boot/bzImage", ("highmem",)),
]}

# The architecture of the guests (virtme-ng), which run the scenarios and
# the bench; the lab's default wherever an architecture is asked for.
GUEST_ARCH = "x86_64"


def get(name: str) -> Arch:
    if name not in ARCHES:
        raise LabError(f"unknown arch {name!r} (supported: {', '.join(ARCHES)})")
    return ARCHES[name]


def guest() -> Arch:
    return ARCHES[GUEST_ARCH]


def image_path(arch: str, variant: str, config: str) -> Path:
    """Where a build of (arch, variant, config) leaves its kernel image."""
    return paths.out_dir(arch, variant, config) / get(arch).image
