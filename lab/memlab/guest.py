"""Booting a built kernel under QEMU (via virtme-ng) and running a guest script.

virtme-ng boots the kernel with the host's root filesystem shared read-only
over 9p, so the guest runs the host's ndctl/daxctl without an image to build.
"""
from __future__ import annotations

import shlex
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import arches, build, console, deps, hostinfo, monitor, paths, selftests
from .runner import LabError, run_logged, say, tail

PMEM_START_GB = 4    # legacy pmem region starts above the 32-bit PCI hole


@dataclass(frozen=True)
class Accel:
    """How a guest runs, and what its times are."""
    name: str       # as GuestSpec.accel names it
    mode: str       # as `memlab bench --mode` names timing under it
    label: str      # how results describe its times
    plot_unit: str  # the plots' axis label


# The caller chooses (accel.default_accel() for "KVM where it works");
# the guest layer obeys.
ACCELS: dict[str, Accel] = {a.name: a for a in [
    # TCG with -icount shift=0: one vCPU, guest time = instructions executed.
    Accel("tcg-icount", "icount", "emulated: QEMU TCG -icount shift=0, guest time = "
          "instructions", "microseconds (emulated, -icount)"),
    Accel("tcg", "wall", "emulated: QEMU TCG wall clock", "microseconds (emulated, TCG wall)"),
    Accel("kvm", "kvm", "KVM, real time", "microseconds"),
]}
MODES: dict[str, Accel] = {a.mode: a for a in ACCELS.values()}


@dataclass(frozen=True)
class NumaNode:
    """A NUMA node of the guest: its share of the guest's memory (-m), in the
    order QEMU lays nodes out, and its CPUs ("0-1"); none: memory only."""
    memory_gb: int
    cpus: str = ""


@dataclass
class GuestSpec:
    variant: str = "patched"
    config: str = "lab"
    script: str = "smoke"
    memory_gb: int = 2          # usable RAM besides the pmem region
    pmem_gb: int = 0            # memmap=<pmem>G!4G when > 0
    pmem_regions: int = 1       # the pmem split into this many regions
    accel: str = "tcg"          # one of ACCELS
    cpus: int = 2
    timeout: int = 900
    append: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)   # for the guest script
    arch: str = arches.GUEST_ARCH
    cpu: str = ""               # QEMU's -cpu, when not virtme-ng's own
    numa: tuple[NumaNode, ...] = ()     # empty: one node
    virtio_mem_gb: int = 0      # a virtio-mem device this large, none plugged at boot


@dataclass
class GuestResult:
    spec: GuestSpec
    exit_code: int
    log: Path
    console: console.Console
    accel: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.console.failures

    def problems(self) -> list[str]:
        out = [str(f) for f in self.console.failures]
        if self.exit_code != 0:
            out.append(f"guest script exited {self.exit_code}")
        return out

    def summary(self) -> str:
        state = "ok" if self.ok else "FAILED: " + "; ".join(self.problems())
        return (f"guest {self.spec.script} on {self.spec.arch}-{self.spec.variant}-"
                f"{self.spec.config} ({self.accel}): {state} "
                f"[{self.seconds:.0f}s, log {self.log}]")


def script_path(script: str) -> Path:
    """A scenario name (scenarios/NAME.sh) or a path to a shell script."""
    p = Path(script)
    if p.suffix == ".sh" and p.exists():
        return p.resolve()
    named = paths.SCENARIOS / f"{script}.sh"
    if named.exists():
        return named
    known = sorted(q.stem for q in paths.SCENARIOS.glob("*.sh"))
    raise LabError(f"unknown scenario {script!r} (known: {', '.join(known)})")


# RAM between two pmem regions, so that the kernel keeps them apart (it
# merges adjacent ranges of one type into one region).
PMEM_GAP_GB = 1


def memory_layout(spec: GuestSpec) -> tuple[int, list[str]]:
    """Guest -m size in GB and the memmap= options for the pmem regions.

    q35 keeps 2 GB below the PCI hole; the pmem regions are carved out of
    RAM starting at 4 GB, each PMEM_GAP_GB of RAM after the one before, so
    -m = usable RAM (gaps included) + pmem.
    """
    if spec.pmem_gb < 0 or spec.memory_gb < 1:
        raise LabError("guest needs at least 1 GB of RAM and a non-negative pmem size")
    if spec.pmem_gb and spec.memory_gb < 2:
        raise LabError("with a pmem region the guest needs --memory >= 2 "
                       "(the RAM below 4 GB)")
    regions = spec.pmem_regions
    if regions < 1 or spec.pmem_gb % regions:
        raise LabError(f"{spec.pmem_gb} GB of pmem does not split into "
                       f"{regions} regions of whole GB")
    if spec.pmem_gb and spec.memory_gb < 2 + (regions - 1) * PMEM_GAP_GB:
        raise LabError(f"{regions} pmem regions need --memory >= "
                       f"{2 + (regions - 1) * PMEM_GAP_GB} (the RAM below 4 GB and "
                       "between the regions)")
    total = spec.memory_gb + spec.pmem_gb
    need = total + spec.virtio_mem_gb + 1   # QEMU itself
    have = hostinfo.available_gb()
    if need > have:
        raise LabError(f"the guest needs {need - 1} GB (RAM {spec.memory_gb} + pmem "
                       f"{spec.pmem_gb} + virtio-mem {spec.virtio_mem_gb}) and the host "
                       f"has {have:.1f} GB available: choose a smaller --pmem/--memory")
    size = spec.pmem_gb // regions
    append = [f"memmap={size}G!{PMEM_START_GB + i * (size + PMEM_GAP_GB)}G"
              for i in range(regions)] if spec.pmem_gb else []
    return total, append


def vng_base_command(image: Path) -> list[str]:
    """virtme-ng from the lab's venv on the kernel image. Its helpers
    (virtme-run, virtme-ng-init) must come from the same venv, so every
    caller runs it with deps.venv_env()."""
    return [deps.vng_path(), "--run", str(image), "--force-9p"]


def build_kernel(variant: str, config: str, arch: str = arches.GUEST_ARCH) -> build.Built:
    """A kernel build, and on the guests' architecture what its guests run
    besides it, built from the same tree: hmm-tests, and the kernel's own
    selftests where the config runs them."""
    built = build.build(variant, config, arch)
    if arch == arches.GUEST_ARCH:
        selftests.build_hmm_tests(built.tree, built.out, built.log)
        if config in selftests.KSELFTEST_CONFIGS:
            selftests.build_kselftests(built.tree, built.out, built.log)
    return built


def require_guest_tools() -> None:
    """The venv's virtme-ng commands and QEMU, or a clear error."""
    deps.ensure("guest", also=arches.guest().qemu_packages)
    missing = [tool for tool in ("vng", "virtme-run")
               if not (paths.VENV / "bin" / tool).exists()]
    if missing:
        raise LabError(f"{', '.join(missing)} missing from {paths.VENV / 'bin'}: "
                       f"remove {paths.VENV} and run again to reinstall virtme-ng")
    a = arches.guest()
    if not shutil.which(a.qemu_binary):
        raise LabError(f"{a.qemu_binary} is not installed (Debian package "
                       f"{', '.join(a.qemu_packages)})")


def vcpus(spec: GuestSpec) -> int:
    """The guest's vCPUs: one under -icount, whose instruction clock all
    vCPUs would share (a second one only adds its instructions)."""
    return 1 if spec.accel == "tcg-icount" else spec.cpus


def check_accel(spec: GuestSpec) -> None:
    if spec.accel not in ACCELS:
        raise LabError(f"unknown accelerator {spec.accel!r} (known: {', '.join(ACCELS)})")


def numa_args(spec: GuestSpec, mem_gb: int) -> list[str]:
    """virtme-ng's options for the guest's NUMA nodes, which must share all
    of its memory and name only CPUs it has."""
    if not spec.numa:
        return []
    if sum(n.memory_gb for n in spec.numa) != mem_gb:
        raise LabError(f"the NUMA nodes hold {sum(n.memory_gb for n in spec.numa)} GB, "
                       f"the guest has {mem_gb} GB")
    named = [int(c) for n in spec.numa if n.cpus
             for c in n.cpus.replace("-", " ").split()]
    if named and max(named) >= vcpus(spec):
        raise LabError(f"the NUMA nodes name CPU {max(named)}, the guest has "
                       f"{vcpus(spec)} vCPUs")
    args = []
    for n in spec.numa:
        args += ["--numa", f"{n.memory_gb}G" + (f",cpus={n.cpus}" if n.cpus else "")]
    # A socket per node with CPUs: QEMU's one socket would have CPUs of
    # different nodes share a cache, which the kernel warns about.
    sockets = sum(1 for n in spec.numa if n.cpus)
    if sockets > 1:
        if vcpus(spec) % sockets:
            raise LabError(f"{vcpus(spec)} vCPUs do not split into {sockets} sockets")
        args += ["--qemu-opt=-smp", f"--qemu-opt={vcpus(spec)},sockets={sockets},"
                 f"cores={vcpus(spec) // sockets},threads=1"]
    return args


def virtio_mem_args(spec: GuestSpec, mem_gb: int, qmp: Path | None) -> list[str]:
    """QEMU's options for the virtio-mem device (room for it above the
    boot memory, none of it plugged) and the monitor that resizes it."""
    if not spec.virtio_mem_gb:
        return []
    if qmp is None:
        raise LabError("a virtio-mem guest needs a monitor socket")
    qemu = ["-m", f"{mem_gb}G,maxmem={mem_gb + spec.virtio_mem_gb}G",
            "-object", f"memory-backend-ram,id={monitor.VIRTIO_MEM_DEVICE}-ram,"
                       f"size={spec.virtio_mem_gb}G",
            "-device", f"virtio-mem-pci,id={monitor.VIRTIO_MEM_DEVICE},"
                       f"memdev={monitor.VIRTIO_MEM_DEVICE}-ram,requested-size=0",
            "-qmp", f"unix:{qmp},server=on,wait=off"]
    return [f"--qemu-opt={opt}" for opt in qemu]


def vng_command(spec: GuestSpec, image: Path, qmp: Path | None = None) -> list[str]:
    check_accel(spec)
    if spec.arch != arches.GUEST_ARCH:
        raise LabError(f"guests run {arches.GUEST_ARCH} kernels; {spec.arch} kernels boot "
                       "bare (memlab kunit) or not at all")
    mem_gb, append = memory_layout(spec)
    script = script_path(spec.script)
    icount = spec.accel == "tcg-icount"
    cmd = [*vng_base_command(image), "--verbose",
           "--memory", f"{mem_gb}G", "--cpus", str(vcpus(spec)),
           "--cwd", str(paths.REPO)]
    if spec.accel != "kvm":
        cmd += ["--disable-kvm", "--disable-microvm"]
    # loglevel=8: pr_debug lines, once enabled by the script, reach the console.
    # oops=panic: an oops that leaves the guest wedged (a recursive fault
    # in the dying task) ends the run at once instead of at the timeout.
    for arg in append + ["loglevel=8", "oops=panic"] + spec.append:
        cmd += ["--append", arg]
    cmd += numa_args(spec, mem_gb)
    cmd += virtio_mem_args(spec, mem_gb, qmp)
    if spec.cpu:    # after virtme-ng's own -cpu: QEMU takes the last
        cmd += ["--qemu-opt=-cpu", f"--qemu-opt={spec.cpu}"]
    if icount:
        cmd += ["--qemu-opts", "-icount shift=0,sleep=off"]
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(spec.env.items()))
    cmd += ["--exec", f"{env} sh {shlex.quote(str(script))}".strip()]
    return cmd


def built_image(spec: GuestSpec) -> Path:
    image = arches.image_path(spec.arch, spec.variant, spec.config)
    if not image.exists():
        raise LabError(f"no kernel at {image}: run `memlab build --variant "
                       f"{spec.variant} --config {spec.config} --arch {spec.arch}` first")
    return image


def boot_and_run(spec: GuestSpec, failure_expected: bool = False) -> GuestResult:
    require_guest_tools()
    image = built_image(spec)
    accel = spec.accel
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = Path(spec.script).stem
    log = paths.LOGS / "guest" / f"{stamp}-{name}-{spec.variant}-{spec.config}.log"
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="memlab-qmp-") as sockets:
        qmp = Path(sockets) / "qmp.sock" if spec.virtio_mem_gb else None
        on_line = monitor.Monitor(qmp).on_line if qmp else None
        try:
            rc = run_logged(vng_command(spec, image, qmp), log,
                            f"guest {name} ({spec.variant}, {accel})",
                            timeout=spec.timeout, env=deps.venv_env(), check=False,
                            on_line=on_line)
        except LabError as e:
            raise LabError(f"{e}\n(console log: {log})") from None
    seconds = time.monotonic() - start
    text = log.read_text(errors="replace")
    result = GuestResult(spec, rc, log, console.parse(text), accel, seconds)
    if not result.ok and failure_expected:
        say(f"guest {name} failed as expected: {brief(result.problems())}")
    elif not result.ok:
        say(f"guest {name} failed: {brief(result.problems())}\n"
            f"--- last 40 console lines ({log}) ---\n{tail(log, 40)}---")
    return result


def brief(problems: list[str], shown: int = 5) -> str:
    """The first problems of a run, and how many more (the log has all)."""
    more = len(problems) - shown
    return "; ".join(problems[:shown]) + (f"; and {more} more" if more > 0 else "")


# A bare boot's memory: what kunit.py gives its guests.
BARE_MEMORY_MB = 1024


def bare_command(spec: GuestSpec, image: Path) -> list[str]:
    """QEMU on the kernel alone: no root filesystem, no userspace. The
    kernel must end the run itself (e.g. kunit_shutdown=reboot): with
    -no-reboot, QEMU exits when the guest resets, and panic=-1 makes a
    panic (no root to mount, say) end it too instead of hanging."""
    a = arches.get(spec.arch)
    if not a.bootable:
        raise LabError(f"{spec.arch} kernels are built, not booted, by the lab")
    append = [f"console={a.console}", "panic=-1", *spec.append]
    cpus = min(spec.cpus, a.max_cpus) if a.max_cpus else spec.cpus
    return [*a.qemu, "-nodefaults", "-nographic", "-no-reboot", "-serial", "stdio",
            "-m", str(BARE_MEMORY_MB), "-smp", str(cpus), "-kernel", str(image),
            "-append", " ".join(append)]


def boot_bare(spec: GuestSpec) -> GuestResult:
    """Boot spec's kernel under QEMU (TCG) with no userspace; the console
    log is the result (spec.script names the log only)."""
    a = arches.get(spec.arch)
    deps.apt_install(list(a.qemu_packages))
    image = built_image(spec)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    log = (paths.LOGS / "guest" /
           f"{stamp}-{spec.script}-{spec.arch}-{spec.variant}-{spec.config}.log")
    start = time.monotonic()
    try:
        rc = run_logged(bare_command(spec, image), log,
                        f"bare boot {spec.arch}-{spec.variant}-{spec.config}",
                        timeout=spec.timeout, check=False)
    except LabError as e:
        raise LabError(f"{e}\n(console log: {log})") from None
    result = GuestResult(spec, rc, log, console.parse(log.read_text(errors="replace"),
                                                      bare=True),
                         "tcg", time.monotonic() - start)
    if not result.ok:
        say(f"bare boot failed: {brief(result.problems())}\n"
            f"--- last 40 console lines ({log}) ---\n{tail(log, 40)}---")
    return result
