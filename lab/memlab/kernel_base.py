"""The kernel sources the series is written for, one record each: the
Debian package that carries the source (served by the machine's own apt
sources) and the version pinned for it. The same Debian source package
builds linux-config-NAME, Debian's own kernel configurations, which the
`debian` config starts from: one version pins both. The lab works on one
base at a time."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path



@dataclass(frozen=True)
class KernelBase:
    name: str                 # the kernel version as people say it
    version: str              # the Debian package version pinned for it

    @property
    def package(self) -> str:
        return f"linux-source-{self.name}"

    @property
    def tarball(self) -> Path:
        return Path(f"/usr/src/{self.package}.tar.xz")

    @property
    def config_package(self) -> str:
        return f"linux-config-{self.name}"

    def debian_config(self, flavour: str) -> Path:
        """Debian's configuration of one kernel flavour (amd64_none_amd64)."""
        return Path(f"/usr/src/{self.config_package}/config.{flavour}.xz")


BASES: dict[str, KernelBase] = {b.name: b for b in [
    # Debian 13's kernel, served to Debian 12 by its backports.
    KernelBase("6.12", "6.12.117-1~deb12u1"),
]}

# The base this checkout's patches/ are written for.
DEFAULT = "6.12"


def current() -> KernelBase:
    """The base in use; MEMLAB_SOURCE_VERSION pins another Debian version
    of its package (a newer upload, say)."""
    base = BASES[DEFAULT]
    version = os.environ.get("MEMLAB_SOURCE_VERSION")
    return KernelBase(base.name, version) if version else base

