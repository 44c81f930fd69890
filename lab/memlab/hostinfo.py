"""Facts about the host the lab runs on: its CPU, the memory it can give
a guest, the disk it has (whether KVM really runs a guest is accel.py's)."""
from __future__ import annotations

import platform
import shutil
from pathlib import Path

from . import paths
from .runner import LabError


def cpuinfo() -> dict[str, str]:
    """The first CPU's fields in /proc/cpuinfo ({} where there is none)."""
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return fields


def cpu_model() -> str:
    return cpuinfo().get("model name") or platform.processor() or "?"


def cpu_detail() -> str:
    """The CPU's name with its family, model and last-level cache, which a
    virtual machine's bare model name ("AMD EPYC") leaves out."""
    fields = cpuinfo()
    if not fields:
        return cpu_model()
    caches = sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"))
    llc = caches[-1].read_text().strip() if caches else "?"
    return (f"{fields.get('model name') or cpu_model()} (family "
            f"{fields.get('cpu family', '?')}, model {fields.get('model', '?')}, "
            f"last-level cache {llc})")


def cpu_slug() -> str:
    """The CPU as a file name: vendor, family and model ("amd-family25-model1"),
    one per kind of CPU the lab has measured on."""
    fields = cpuinfo()
    vendor = {"AuthenticAMD": "amd", "GenuineIntel": "intel"}.get(
        fields.get("vendor_id", ""), fields.get("vendor_id", "") or platform.machine())
    return (f"{vendor.lower()}-family{fields.get('cpu family', 'unknown')}"
            f"-model{fields.get('model', 'unknown')}")


def available_gb() -> float:
    """Memory the host can give a guest now (MemAvailable)."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / (1024 * 1024)
    return 0.0


# Disk under build/ that the default `.ci/run` fills on a fresh clone
# (kernel trees, build directories, venv: 12 GB measured, and a margin),
# and what a run on a warm build/, or one without kernel builds, still
# writes (logs, objects of changed files, a tree's checkout).
COLD_BUILD_DISK_GB = 14
WARM_BUILD_DISK_GB = 2


def free_disk_gb(path: Path) -> float:
    """Free space of the file system that holds path (or its nearest parent)."""
    while not path.exists():
        path = path.parent
    return shutil.disk_usage(path).free / 2**30


def require_build_disk(what: str, builds: bool) -> None:
    """Fail before any work when build/ cannot hold what `what` writes
    (with kernel builds or without): a full disk otherwise breaks a run
    midway, in whatever step is writing."""
    cold = builds and not paths.PRISTINE_TREE.exists()
    need = COLD_BUILD_DISK_GB if cold else WARM_BUILD_DISK_GB
    free = free_disk_gb(paths.BUILD)
    if free < need:
        raise LabError(f"{what} needs about {need} GB free for {paths.BUILD}, its file "
                       f"system has {free:.1f} GB: free some space first")
