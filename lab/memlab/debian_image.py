"""`memlab image`: the packages on a real Debian system. A root file system
of the base's Debian release is made from Debian's packages (mmdebstrap),
with Debian's own kernel of the flavour from the archive and the patched
package installed beside it with dpkg -i (its postinst runs, and
initramfs-tools makes its initramfs); the image then boots under QEMU on
each kernel in turn, with its own systemd and udev, and a unit of the image
runs scenarios/debian-image.sh and powers the machine off. Debian's kernel
is the base: the same test must pass on both, but for the HVO reproducer
at its end, which must show stock 6.12's corruption on Debian's kernel
and none on the package, which ships the stable fix."""
from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import arches, console, deps, kernel_base, package, paths, provenance, sources
from .archive import RELEASES, mirror
from .runner import LabError, run_logged, say, tail

IMAGE_DIR = paths.BUILD / "debian-image"
ROOT = IMAGE_DIR / "root"
IMAGE = IMAGE_DIR / "debian.img"
IMAGE_SIZE = "4G"
RECORD = paths.RESULTS / "debian-image.json"
# Inside the image: the guest scripts and the unit that runs them at boot.
GUEST_DIR = "/usr/local/lib/memlab"
SCRIPT = "debian-image"
UNIT = "memlab-test.service"
# What the test needs from Debian beyond a minimal system.
PACKAGES = ("systemd-sysv", "dbus", "udev", "kmod", "initramfs-tools", "ndctl", "daxctl",
            "linux-base")
APT_PACKAGES = ["mmdebstrap", "e2fsprogs", *arches.guest().qemu_packages]
# The machine: RAM, and a legacy pmem region carved out of it at 4 GB.
MEMORY_GB = 4
PMEM_GB = 2
CPUS = 2
BOOT_TIMEOUT = 1800
HVO_PHASE = "MEMLAB phase=hvo"


def unit_file() -> str:
    return "\n".join([
        "[Unit]",
        "Description=memlab's test of this kernel package",
        "After=local-fs.target systemd-udev-settle.service",
        "Wants=systemd-udev-settle.service",
        "[Service]",
        "Type=oneshot",
        f"ExecStart=/bin/sh {GUEST_DIR}/{SCRIPT}.sh",
        "ExecStopPost=/bin/systemctl poweroff --no-block",
        "StandardOutput=tty",
        "StandardError=tty",
        "TTYPath=/dev/ttyS0",
        "[Install]",
        "WantedBy=multi-user.target",
    ]) + "\n"


def stock_package(flavour: str) -> str:
    """Debian's own kernel package of @flavour at the pinned version (what
    its meta-package linux-image-FLAVOUR depends on)."""
    base = kernel_base.current()
    return sources.archive().depends(f"linux-image-{flavour}", base.version)[0]


def _stamp(debs: list[Path], stock: str, hooks: list[str]) -> str:
    """What the image is made of: the packages, the stock kernel, how it is
    set up, the test."""
    h = hashlib.sha256("\n".join([stock, *hooks]).encode())
    for deb in debs:
        h.update(deb.name.encode())
        h.update(hashlib.sha256(deb.read_bytes()).digest())
    for script in (paths.SCENARIOS / f"{SCRIPT}.sh", paths.SCENARIOS / "lib.sh"):
        h.update(script.read_bytes())
    h.update(unit_file().encode())
    return h.hexdigest()


def _hooks(staged: list[Path]) -> list[str]:
    """mmdebstrap's customize hooks: the packages installed with dpkg -i,
    the test and its unit, the machine's few files."""
    return [
        f'copy-in {" ".join(str(d) for d in staged)} /tmp',
        'chroot "$1" sh -c "dpkg -i /tmp/*.deb && rm /tmp/*.deb"',
        f'mkdir -p "$1{GUEST_DIR}"',
        f'copy-in {paths.SCENARIOS / (SCRIPT + ".sh")} {paths.SCENARIOS / "lib.sh"} '
        f'{GUEST_DIR}',
        f'copy-in {IMAGE_DIR / UNIT} /etc/systemd/system',
        f'chroot "$1" systemctl enable {UNIT}',
        # A getty on the serial console would hang up the test writing there.
        'chroot "$1" systemctl mask serial-getty@ttyS0.service',
        'echo "/dev/vda / ext4 rw 0 1" > "$1/etc/fstab"',
        'echo memlab > "$1/etc/hostname"',
    ]


def make_image(built: package.Packages) -> None:
    """The root file system with both kernels, and its ext4 image; made
    again when the packages, the stock kernel or the test changed."""
    base = kernel_base.current()
    stock = stock_package(built.flavour)
    staged_dir = IMAGE_DIR / "debs"
    staged = [staged_dir / deb.name for deb in built.debs]
    hooks = _hooks(staged)
    stamp_file = IMAGE_DIR / ".memlab-image"
    stamp = _stamp(built.debs, stock, hooks)
    if IMAGE.exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
        return
    deps.apt_install(APT_PACKAGES)
    shutil.rmtree(IMAGE_DIR, ignore_errors=True)
    staged_dir.mkdir(parents=True)
    log = paths.LOGS / "debian-image.log"
    log.write_text("")
    sources = [f"deb {mirror(s)} {s} main" for s in base.release_suites]
    for deb in built.debs:
        shutil.copy2(deb, staged_dir / deb.name)
    (IMAGE_DIR / UNIT).write_text(unit_file())
    cmd = ["mmdebstrap", "--variant=minbase", "--mode=root",
           f"--include={','.join([*PACKAGES, f'{stock}={base.version}'])}",
           *(f"--customize-hook={h}" for h in hooks), base.release, str(ROOT), *sources]
    run_logged(cmd, log, f"mmdebstrap {base.release} with {stock} and {built.image.name}",
               timeout=3600)
    run_logged(["mkfs.ext4", "-q", "-F", "-d", str(ROOT), "-L", "memlab", str(IMAGE),
                IMAGE_SIZE], log, "mkfs.ext4 of the image")
    stamp_file.write_text(stamp)


@dataclass
class Boot:
    """One boot of the image on one kernel, and what came of it."""
    release: str
    expect_hvo_corruption: bool
    seconds: float = 0.0
    log: str = ""
    problems: list[str] = field(default_factory=list)
    memmap_inits_ms: list[list[int]] = field(default_factory=list)   # [pages, ms]
    paths: list[str] = field(default_factory=list)
    hvo_bad_page_reports: int | None = None
    results: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.problems


def qemu_command(release: str, append: list[str]) -> list[str]:
    boot = ROOT / "boot"
    kernel, initrd = boot / f"vmlinuz-{release}", boot / f"initrd.img-{release}"
    if not kernel.exists() or not initrd.exists():
        raise LabError(f"the image has no kernel or initramfs of {release} in {boot}")
    cmdline = ["root=/dev/vda", "rw", "console=ttyS0", "panic=-1", "loglevel=8",
               f"memmap={PMEM_GB}G!4G", *append]
    return ["qemu-system-x86_64", "-machine", "q35", "-accel", "tcg",
            "-cpu", arches.INTEL_TCG_CPU, "-smp", str(CPUS),
            "-m", f"{MEMORY_GB + PMEM_GB}G", "-nographic", "-no-reboot",
            "-kernel", str(kernel), "-initrd", str(initrd), "-append", " ".join(cmdline),
            # snapshot: every boot starts from the image as made.
            "-drive", f"file={IMAGE},format=raw,if=virtio,snapshot=on"]


def verdict(boot: Boot, text: str, newest: str) -> None:
    """The test's checks on a boot's console: clean up to the HVO
    reproducer, every step's result, the package's kernel (@newest) sorted
    last, and the reproducer's outcome."""
    con = console.parse(text)
    lines = text.splitlines()
    hvo_line = next((n for n, line in enumerate(lines, 1) if HVO_PHASE in line), None)
    before = [f for f in con.failures if hvo_line is None or f.line_no < hvo_line]
    after = [f for f in con.failures if hvo_line is not None and f.line_no > hvo_line]
    boot.results = {k: v for r in con.results for k, v in r.items()}
    boot.memmap_inits_ms = [[pages, ms] for pages, ms in con.device_inits_ms]
    boot.paths = sorted({s.path for s in con.memmap_shares})
    p = boot.problems
    p += [str(f) for f in before[:5]]
    if con.result("done") != "1":
        p.append("the test did not report done=1"
                 + (f" (error: {con.result('error')})" if con.result("error") else ""))
    if con.result("kernel") != boot.release:
        p.append(f"booted {con.result('kernel')}, not {boot.release}")
    if con.result("newest_kernel") != newest:
        p.append(f"linux-version sorts {con.result('newest_kernel')} last, not the "
                 f"package's {newest}: GRUB would not boot it by default")
    before_sum, after_sum = con.result("checksum_before"), con.result("checksum_after")
    if not before_sum or before_sum != after_sum:
        p.append(f"pmem data {before_sum} before the rebind, {after_sum} after")
    if len(con.device_inits_ms) < 3:
        p.append(f"{len(con.device_inits_ms)} memmap inits reported by the kernel's debug "
                 "line, expected 3 (fsdax bind, rebind, devdax bind)")
    blocks = int(con.result("kmem_blocks") or 0)
    total_before = int(con.result("mem_total_before_kb") or 0)
    total_after = int(con.result("mem_total_after_kb") or 0)
    if not blocks or total_after <= total_before:
        p.append(f"dax kmem onlined {blocks} blocks, MemTotal {total_before} -> "
                 f"{total_after} kB")
    if con.result("bad_files") != "0":
        p.append(f"{con.result('bad_files')} files of the fill read back wrong")
    reports = con.result("hvo_bad_page_reports")
    boot.hvo_bad_page_reports = int(reports) if reports and reports.isdigit() else None
    if boot.hvo_bad_page_reports is None:
        p.append("the HVO reproducer did not report")
    elif boot.expect_hvo_corruption:
        if not boot.hvo_bad_page_reports:
            p.append("the HVO reproducer found no corruption on a kernel without the fix")
        p += [f"after the reproducer: {f}" for f in after if f.kind != "BUG"][:3]
    else:
        if boot.hvo_bad_page_reports or after:
            p.append(f"the HVO reproducer: {boot.hvo_bad_page_reports} Bad page state "
                     f"reports, {len(after)} console failures, on a kernel with the fix")
        if con.result("hvo_left") != "0":
            p.append(f"{con.result('hvo_left')} hugetlb pages left after the pool shrank")


def boot(release: str, newest: str, expect_hvo_corruption: bool,
         append: list[str] | None = None) -> Boot:
    result = Boot(release, expect_hvo_corruption)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    log = paths.LOGS / "guest" / f"{stamp}-{SCRIPT}-{release}.log"
    start = time.monotonic()
    run_logged(qemu_command(release, append or []), log, f"boot the Debian image on {release}",
               timeout=BOOT_TIMEOUT, check=False)
    result.seconds = round(time.monotonic() - start, 1)
    result.log = str(log.relative_to(paths.REPO))
    verdict(result, log.read_text(errors="replace"), newest)
    if not result.ok:
        say(f"{release}: " + "; ".join(result.problems[:5])
            + f"\n--- last 40 console lines ({log}) ---\n{tail(log, 40)}---")
    return result


def run(flavour: str = package.DEFAULT_FLAVOUR) -> list[Boot]:
    """The image with Debian's kernel of @flavour and the last built
    package of it; a boot of each; recorded in results/debian-image.json
    when both pass (a failed run leaves the last passing record)."""
    built = package.built(flavour)
    make_image(built)
    stock = stock_package(flavour).removeprefix("linux-image-")
    boots = [boot(stock, built.release, expect_hvo_corruption=True),
             boot(built.release, built.release, expect_hvo_corruption=False)]
    record = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "flavour": flavour,
        "release": RELEASES.get(kernel_base.current().release, kernel_base.current().release),
        "packages": {"base": f"{stock_package(flavour)} {kernel_base.current().version}",
                     "patched": f"{built.image.name.split('_')[0]} {built.version}"},
        "provenance": provenance.now().to_json(),
        "machine": {"memory_gb": MEMORY_GB, "pmem_gb": PMEM_GB, "cpus": CPUS,
                    "accel": "tcg (wall clock, emulated)"},
        "boots": [asdict(b) for b in boots],
    }
    if all(b.ok for b in boots):
        RECORD.parent.mkdir(parents=True, exist_ok=True)
        RECORD.write_text(json.dumps(record, indent=1) + "\n")
        say(f"recorded in {RECORD.relative_to(paths.REPO)}")
    return boots
