"""Host dependencies: Debian packages and the virtme-ng venv.

Every verb asks for the groups it needs; what is already present is not
touched and nothing is printed for it, so the calls are cheap and idempotent.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from . import paths
from .runner import LabError, run_logged, run_quiet, say

# Debian package groups, by what needs them.
APT_GROUPS: dict[str, list[str]] = {
    "source": ["git", "xz-utils", "patch", "debian-archive-keyring"],
    # zstd and openssl: the debian config's zstd image and module signing key.
    "build": ["gcc", "make", "flex", "bison", "bc", "libelf-dev", "libssl-dev",
              "ccache", "cpio", "kmod", "perl", "zstd", "openssl"],
    "guest": ["ndctl", "daxctl", "udev", "e2fsprogs", "python3-venv"],
    # The kernel's mm selftests: libnuma and libcap for some programs (the
    # guest runs them on the host's libraries), rsync for their install,
    # sudo for run_vmtests.sh's test as an unprivileged user.
    "selftests": ["libnuma-dev", "libcap-dev", "rsync", "sudo"],
}
# (Toolchains and emulators, the guests' QEMU among them: arches.py; the
# kernel's Debian source: sources.py.)
VIRTME_NG = "virtme-ng==1.42"
# checkpatch.pl runs scripts/spdxcheck.py, which imports ply and GitPython;
# the bench plots use matplotlib; `memlab test` type-checks the lab with mypy.
VENV_MODULES = ["ply", "GitPython", "matplotlib", "mypy==2.4.1"]

_apt_updated = False


def _missing(pkgs: list[str]) -> list[str]:
    missing = []
    for pkg in pkgs:
        res = run_quiet(["dpkg-query", "-W", "-f=${Status}", pkg], check=False)
        if "install ok installed" not in res.stdout:
            missing.append(pkg)
    return missing


def _root_prefix() -> list[str]:
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo"):
        return ["sudo"]
    raise LabError("installing packages needs root (or sudo)")


APT_ENV = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
APT_LOG = paths.LOGS / "apt.log"


def apt_update_once() -> None:
    global _apt_updated
    if not _apt_updated:
        run_logged(_root_prefix() + ["apt-get", "update", "-q"], APT_LOG,
                   "apt-get update", env=APT_ENV)
        _apt_updated = True


def apt_install(pkgs: list[str]) -> None:
    missing = _missing(pkgs)
    if not missing:
        return
    say(f"installing Debian packages: {' '.join(missing)}")
    apt_update_once()
    run_logged(_root_prefix() + ["apt-get", "install", "-y", "-q",
                                 "--no-install-recommends", *missing],
               APT_LOG, "apt-get install", env=APT_ENV)


def ensure(*groups: str, also: tuple[str, ...] = ()) -> None:
    """The Debian packages of @groups (and @also); the venv with the
    guest group."""
    pkgs: list[str] = list(also)
    for group in groups:
        pkgs += APT_GROUPS[group]
    apt_install(pkgs)
    if "guest" in groups:
        ensure_virtme_ng()


def vng_path() -> str:
    return str(paths.VENV / "bin" / "vng")


def ensure_virtme_ng() -> None:
    """virtme-ng and the other PyPI tools in the lab's own venv (Debian's
    pip is PEP 668)."""
    py = paths.VENV / "bin" / "python3"
    stamp = paths.VENV / ".memlab-packages"
    wanted = " ".join([VIRTME_NG, *VENV_MODULES])
    if stamp.exists() and stamp.read_text() == wanted:
        return
    log = paths.LOGS / "pip.log"
    say(f"installing {wanted} into {paths.VENV}")
    # pyenv or Debian's python3: the interpreter running memlab (Debian's
    # needs python3-venv for this).
    if not py.exists():
        if sys.executable.startswith("/usr/bin/"):
            apt_install(["python3-venv"])
        run_logged([sys.executable, "-m", "venv", str(paths.VENV)], log, "venv")
    run_logged([str(py), "-m", "pip", "install", "-q", VIRTME_NG, *VENV_MODULES],
               log, "pip install")
    stamp.write_text(wanted)


def venv_env() -> dict[str, str]:
    """The environment with the lab's venv first on PATH."""
    ensure_virtme_ng()
    return dict(os.environ, PATH=f"{paths.VENV / 'bin'}:{os.environ.get('PATH', '')}")
