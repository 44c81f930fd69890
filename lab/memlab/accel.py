"""Whether KVM really runs a guest on this host, decided by a probe boot
and cached, and the accelerator a guest gets by default."""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from . import deps, guest, paths
from .runner import LabError, Timeout, run_logged, say

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
