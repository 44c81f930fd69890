"""Facts about the host the lab runs on: its CPU, the memory it can give
a guest, and whether KVM really runs one (decided by a probe boot)."""
from __future__ import annotations

import json
import os
import platform
import re
import shutil
import time
from pathlib import Path

from . import deps, paths
from .runner import LabError, Timeout, run_logged, say


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def cpu_detail() -> str:
    """The CPU's name with its family, model and last-level cache, which a
    virtual machine's bare model name ("AMD EPYC") leaves out."""
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
    except OSError:
        return cpu_model()
    caches = sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"))
    llc = caches[-1].read_text().strip() if caches else "?"
    return (f"{fields.get('model name') or cpu_model()} (family "
            f"{fields.get('cpu family', '?')}, model {fields.get('model', '?')}, "
            f"last-level cache {llc})")


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


KVM_PROBE_CACHE = paths.BUILD / "kvm-probe.json"
# Bumped when what makes a verdict changes: older caches are not trusted.
KVM_PROBE_FORMAT = 3
KVM_PROBE_TIMEOUT = 90   # seconds; a TCG boot of the lab kernel takes ~10


def kvm_usable(image: Path) -> bool:
    """Whether KVM really runs a guest: decided by a probe boot, cached.

    /dev/kvm can exist and still not run a normal guest (e.g. a PVM module
    that hangs after the BIOS), so its presence proves nothing. Only a
    verdict about KVM is cached; a probe that could not even start its tools
    is an error (LabError), so that it cannot pass for "no KVM".
    """
    override = os.environ.get("MEMLAB_ACCEL")
    if override in ("kvm", "tcg"):
        return override == "kvm"
    cached = _cached_kvm_verdict()
    if cached is not None:
        return cached
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        ok, evidence = False, "no usable /dev/kvm"
    else:
        ok, evidence = _probe_kvm(image)
    KVM_PROBE_CACHE.parent.mkdir(parents=True, exist_ok=True)
    KVM_PROBE_CACHE.write_text(json.dumps({"format": KVM_PROBE_FORMAT, "kvm": ok,
                                           "evidence": evidence, "date": time.ctime()}))
    say(f"KVM probe: {'KVM works' if ok else 'KVM unusable, using TCG'} ({evidence})")
    return ok


def default_accel(image: Path) -> str:
    """KVM where the probe boot (of this kernel image) proves it works, else
    TCG on the wall clock."""
    return "kvm" if kvm_usable(image) else "tcg"


def _cached_kvm_verdict() -> bool | None:
    try:
        data = json.loads(KVM_PROBE_CACHE.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != KVM_PROBE_FORMAT:
        return None
    return bool(data.get("kvm"))


# QEMU's own messages: QEMU ran. Failing under KVM is then a verdict about
# KVM (a QEMU problem unrelated to KVM shows again in the TCG boots).
_QEMU_SAID = re.compile(r"^qemu-system-\S+: .*$", re.M)
# The probe guest's script prints this, computed in the guest.
KVM_PROBE_SCRIPT = "kvm-probe"
KVM_PROBE_ANSWER = "MEMLAB kvm_probe=42"


def classify_kvm_probe(log_text: str, exit_code: int | None) -> tuple[bool, str]:
    """The probe's verdict from its console log and exit code (None: it hung
    and was killed). Raises LabError when the log shows no KVM guest was
    even attempted (the tools did not start): that is not a verdict."""
    if KVM_PROBE_ANSWER in log_text:
        return True, "probe guest ran under KVM"
    if "Linux version" in log_text:
        return False, "guest kernel started under KVM but did not finish"
    if exit_code is None:
        return False, f"guest hung under KVM for {KVM_PROBE_TIMEOUT}s before its kernel"
    said = _QEMU_SAID.search(log_text)
    if said:
        return False, f"QEMU failed under KVM: {said.group(0)}"
    raise LabError(f"the KVM probe boot did not start a guest (exit {exit_code}); "
                   "this is a tool problem, not a verdict about KVM. Last lines:\n"
                   + "\n".join(log_text.splitlines()[-15:]))


def _probe_kvm(image: Path) -> tuple[bool, str]:
    """Boot the lab's kernel under KVM as the guests boot, on a script that
    only answers."""
    from . import guest    # the guests ask this module for the host's memory
    guest.require_guest_tools()
    spec = guest.GuestSpec(script=KVM_PROBE_SCRIPT, memory_gb=1, cpus=1, accel="kvm")
    cmd = guest.vng_command(spec, image)
    log = paths.LOGS / "kvm-probe.log"
    log.unlink(missing_ok=True)
    try:
        rc: int | None = run_logged(cmd, log, "KVM probe boot", timeout=KVM_PROBE_TIMEOUT,
                                    env=deps.venv_env(), check=False)
    except Timeout:
        rc = None
    return classify_kvm_probe(log.read_text(errors="replace"), rc)
