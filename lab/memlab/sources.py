"""The kernel base's Debian packages, fetched from Debian's archive and
unpacked under build/debian (never installed): the source tree's tarball
and Debian's kernel configurations, at the base's pinned version."""
from __future__ import annotations

from pathlib import Path

from . import deps, kernel_base
from .archive import Archive
from .runner import LabError


def archive() -> Archive:
    """Debian's archive, as far as the current base's suites go."""
    return Archive(kernel_base.current().suites)


def kernel_source() -> tuple[str, Path]:
    """The base's pinned source package, unpacked under build/debian (not
    installed): its version and the tree's tarball."""
    base = kernel_base.current()
    deps.ensure("source")
    tarball = base.tarball(archive().unpacked(base.package, base.version))
    if not tarball.exists():
        raise LabError(f"{base.package} {base.version} holds no {tarball.name}")
    return base.version, tarball


def debian_config(flavour: str) -> Path:
    """Debian's kernel configuration of @flavour, from linux-config at the
    base's pinned version."""
    base = kernel_base.current()
    path = base.debian_config(archive().unpacked(base.config_package, base.version), flavour)
    if not path.exists():
        raise LabError(f"{base.config_package} {base.version} has no {path.name}")
    return path
