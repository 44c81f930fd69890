"""The kernel sources the series is written for, one row each: the Debian
source package's version pinned for it, and the Debian suites searched
for newer uploads. The same Debian source package builds linux-source-NAME
(the tree) and linux-config-NAME (Debian's own kernel configurations,
which the `debian` config starts from): one version pins both. Moving a
base to a newer upload is its row's version. The lab works on one base at
a time: MEMLAB_BASE names it when it is not the default (paths.py)."""
from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from . import paths
from .runner import LabError


@dataclass(frozen=True)
class KernelBase:
    name: str                 # the kernel version as people say it
    version: str              # the Debian package version pinned for it
    suites: tuple[str, ...]   # Debian suites that serve it (newer uploads too)
    release: str              # the Debian release whose kernel it is
    # Where its series lives, under patches/ ("": patches/ itself), with
    # its stable fixes in stable/ and the lab's patches in lab/ beside it.
    series_dir: str
    # What the base lacks that its series adds, in a few words each.
    lacks: tuple[str, ...] = ()

    @property
    def package(self) -> str:
        return f"linux-source-{self.name}"

    @property
    def config_package(self) -> str:
        return f"linux-config-{self.name}"

    def tarball(self, root: Path) -> Path:
        """The tree's tarball in the linux-source package unpacked at @root."""
        return root / "usr" / "src" / f"{self.package}.tar.xz"

    def debian_config(self, root: Path, flavour: str) -> Path:
        """Debian's configuration of one kernel flavour (amd64_none_amd64)
        in the unpacked linux-config package at @root."""
        return root / "usr" / "src" / self.config_package / f"config.{flavour}.xz"

    @property
    def release_suites(self) -> tuple[str, ...]:
        """The suites of its Debian release: what a system of that release
        installs from."""
        return tuple(s for s in self.suites if s.split("-")[0] == self.release)

    @property
    def series(self) -> Path:
        """The directory of its product series."""
        return paths.PATCHES / self.series_dir

    @property
    def stable_series(self) -> Path:
        return self.series / "stable"

    @property
    def lab_series(self) -> Path:
        return self.series / "lab"


BASES: dict[str, KernelBase] = {b.name: b for b in [
    # Debian 13's kernel: trixie's point releases and its security suite,
    # and the uploads backported to Debian 12 (~deb12u1).
    KernelBase("6.12", "6.12.118-1",
               ("trixie", "trixie-updates", "trixie-security", "bookworm-security"),
               "trixie", "",
               ("the template init of memmaps (ZONE_DEVICE, hot-added, boot, deferred)",
                "clear_pages() and run-wise zeroing of huge folios (mainline since 7.0)",
                "batch clearing of init_on_alloc blocks (mainline since 7.2)",
                "a fix of freeing HVO-optimized hugetlb folios (since 6.12.114)")),
    # Mainline as Debian unstable packages it: the base of the reference
    # series' numbers and of what maintainers merge.
    KernelBase("7.2", "7.2.13-1", ("sid",), "sid", "7.2",
               ("the template init of memmaps (ZONE_DEVICE, hot-added, boot, deferred)",)),
]}

# The base this checkout's patches/ are written for.
DEFAULT = "6.12"
# The base that is mainline: what maintainers merge.
MAINLINE = "7.2"


def current() -> KernelBase:
    """The base in use (MEMLAB_BASE, or the default); MEMLAB_SOURCE_VERSION
    pins another Debian version of its package (a newer upload, say)."""
    if paths.BASE == DEFAULT:
        raise LabError(f"MEMLAB_BASE={DEFAULT} is the default base: leave MEMLAB_BASE unset")
    if paths.BASE and paths.BASE not in BASES:
        raise LabError(f"MEMLAB_BASE={paths.BASE}: no such kernel base "
                       f"(known: {', '.join(BASES)})")
    base = BASES[paths.BASE or DEFAULT]
    version = os.environ.get("MEMLAB_SOURCE_VERSION")
    return replace(base, version=version) if version else base
