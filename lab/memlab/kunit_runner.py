"""Our KUnit suites: where they run and how their results are counted.

The suites are built into a patched kernel and run by one bare boot of it
(QEMU on the kernel alone, kunit.enable=1, kunit_shutdown=reboot): no
userspace, no kunit.py build. On x86-64 that kernel is a lab kernel itself
(configs lab.patched and, through it, vm and debug), whose ordinary boots
skip the suites (KUnit's default is off there): the lab kernel runs them
with the template path on, the vm kernel the same under DEBUG_VM and
lockdep, the debug kernel under KASAN. Other architectures build a
kernel for the suites alone (configs/kunit.config). The KTAP on the console
is parsed by the kernel's own tools/testing/kunit/kunit.py parse, and a
KASAN report, WARN or oops on that console fails the run.

The series' kunitconfig files are run too as a maintainer runs them, by
`kunit.py run` itself (run_kunit_tool()), on a kernel kunit.py configures.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection

from . import arches, build, console, guest, kconfig, kernel_tree, paths
from .runner import LabError, run_logged, say


# Every suite the series adds (in its files *_kunit.c), with the options a
# kernel needs for it: a run that lacks one its kernel
# has tested less than it claims.
MEMMAP_KUNIT = "CONFIG_MEMMAP_INIT_KUNIT_TEST"
SUITES = {"memmap_init": (MEMMAP_KUNIT,),
          "memmap_init_zone_device": (MEMMAP_KUNIT, "CONFIG_DEVICE_PRIVATE"),
          "memmap_init_hotplug": (MEMMAP_KUNIT, "CONFIG_64BIT"),
          "memmap_init_boot": (MEMMAP_KUNIT, "CONFIG_64BIT"),
          "memmap_init_to_buddy": (MEMMAP_KUNIT, "CONFIG_64BIT"),
          "clear_pages": ("CONFIG_CLEAR_PAGES_KUNIT_TEST",)}

def run_suites_at_boot(arch: str) -> list[str]:
    """What a boot needs to run the built-in suites and then end by itself."""
    return ["kunit.enable=1", f"kunit_shutdown={arches.get(arch).kunit_shutdown}",
            *arches.get(arch).kunit_append]

# What a kernel built with CONFIG_DEFERRED_STRUCT_PAGE_INIT prints once its
# deferred init threads are done: without it the boot deferred nothing and
# that init path went untested.
DEFERRED_DONE = re.compile(r"node \d+ deferred pages initialised")

# A run that has not ended by then hangs (the debug kernel's, the
# slowest, takes about a minute under TCG).
TIMEOUT_S = 600


def default_config(arch: str) -> str:
    """The kernel whose suites run: the architecture's first test config
    (the lab kernel, or arm64's KUnit kernel)."""
    return arches.get(arch).test_configs[0]


@dataclass
class KunitResult:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)
    suites: list[str] = field(default_factory=list)
    log: Path | None = None

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.skipped

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.passed > 0

    def require_suites(self, suites: list[str]) -> None:
        """Count each expected suite that did not run as a failure."""
        for name in suites:
            if name not in self.suites:
                self.failed += 1
                self.failures.append(f"{name} (suite did not run)")

    def summary(self) -> str:
        line = (f"KUnit: {self.passed} passed, {self.failed} failed, "
                f"{self.skipped} skipped (suites: {', '.join(self.suites) or 'none'})")
        if self.failures:
            line += "\n  failed: " + "\n  failed: ".join(self.failures)
        if self.total == 0:
            line += "\n  no test ran"
        return line


def count(report: dict[str, Any], prefix: str = "") -> KunitResult:
    """Count test cases in kunit.py's JSON (KernelCI format), recursively."""
    res = KunitResult()

    def walk(group: dict[str, Any], path: str) -> None:
        for case in group.get("test_cases", []):
            status = case.get("status", "")
            name = f"{path}.{case.get('name', '?')}".lstrip(".")
            if status == "PASS":
                res.passed += 1
            elif status == "SKIP":
                res.skipped += 1
            else:
                res.failed += 1
                res.failures.append(f"{name} ({status})")
        for sub in group.get("sub_groups", []):
            sub_name = sub.get("name", "?")
            if not path:
                res.suites.append(sub_name)
            walk(sub, f"{path}.{sub_name}".lstrip("."))

    walk(report, prefix)
    return res


def parse_console(log: Path, report: Path) -> dict[str, Any]:
    """kunit.py's JSON for the KTAP in a console log."""
    report.unlink(missing_ok=True)
    parse_log = report.with_suffix(".parse.log")
    parse_log.write_text("")
    # kunit.py parse exits non-zero when a test failed: read its JSON anyway.
    rc = run_logged(["python3", "tools/testing/kunit/kunit.py", "parse",
                     f"--json={report}", str(log)], parse_log,
                    "kunit.py parse", cwd=paths.KERNEL_TREE, check=False)
    if not report.exists():
        raise LabError(f"kunit.py parse (exit {rc}) wrote no results for {log}; "
                       f"see {parse_log}")
    return json.loads(report.read_text())


def expected_suites(dotconfig: str, defined: Collection[str]) -> list[str]:
    """The suites a kernel of this .config must run: of those its source
    @defines (series_suites()), those whose options the config sets."""
    opts = kconfig.parse(dotconfig)
    return [name for name, needs in SUITES.items()
            if name in defined and all(opts.get(option) == "y" for option in needs)]


# How a suite of SUITES is named where it is defined.
_SUITE_NAME = re.compile(r'^\s*\.name\s*=\s*"(\w+)",', re.M)


def series_files(tree: Path, suffix: str) -> list[str]:
    """The files ending in @suffix that the series adds and @tree has (a
    prefix of the series has those of its patches)."""
    added = kernel_tree.git("diff", "--name-only", "--diff-filter=A",
                            f"{paths.TAG_BASE}..{paths.PRODUCT_BRANCH}").split()
    return [f for f in added if f.endswith(suffix) and (tree / f).exists()]


def defined_suites(tree: Path, test_files: list[str]) -> set[str]:
    """The suites of SUITES that @tree's @test_files define."""
    found: set[str] = set()
    for test_file in test_files:
        found |= set(_SUITE_NAME.findall((tree / test_file).read_text())) & set(SUITES)
    return found


def series_suites(tree: Path) -> set[str]:
    """The suites of SUITES that the series as far as @tree has it defines:
    every one for a whole series, those of its patches for a prefix, those
    ported so far for a base the series is being written for."""
    return defined_suites(tree, series_files(tree, "_kunit.c"))


def deferred_init_untested(dotconfig: str, console: str) -> str | None:
    """A kernel built to defer struct page init whose boot deferred none."""
    if kconfig.parse(dotconfig).get("CONFIG_DEFERRED_STRUCT_PAGE_INIT") != "y":
        return None
    if DEFERRED_DONE.search(console):
        return None
    return ("a kernel with CONFIG_DEFERRED_STRUCT_PAGE_INIT deferred no struct pages "
            "at boot: its deferred init went untested")


def run(config: str = "lab", arch: str = arches.GUEST_ARCH) -> KunitResult:
    """The suites built into the patched kernel of `config` on `arch`
    (built beforehand), run by one bare boot; console reports (KASAN, WARN,
    oops) fail the run like a failed case."""
    spec = guest.GuestSpec(variant="patched", config=config, script="kunit", arch=arch,
                           append=run_suites_at_boot(arch), timeout=TIMEOUT_S)
    result = guest.boot_bare(spec)
    report = paths.LOGS / f"kunit-{arch}-{config}.json"
    res = count(parse_console(result.log, report))
    res.log = result.log
    dotconfig = paths.out_dir(arch, "patched", config) / ".config"
    res.require_suites(expected_suites(dotconfig.read_text(),
                                       series_suites(paths.KERNEL_TREE)))
    problems = result.problems()
    untested = deferred_init_untested(dotconfig.read_text(),
                                      result.log.read_text(errors="replace"))
    if untested:
        problems.append(untested)
    for problem in problems:
        res.failed += 1
        res.failures.append(f"console: {problem}")
    say(res.summary())
    return res


def series_kunitconfigs(tree: Path) -> list[str]:
    """What `kunit.py run --kunitconfig=` takes for each kunitconfig file
    of the series in @tree: a directory for its .kunitconfig, else the
    file."""
    return [str(Path(f).parent) if Path(f).name == ".kunitconfig" else f
            for f in series_files(tree, "kunitconfig")]


# kunit.py asks QEMU for `-accel kvm -accel hvf -accel tcg` since 6.x: QEMU
# then takes a /dev/kvm that cannot run a stock kernel (PVM) and the boot
# hangs. kunit.py reaches QEMU through this PATH entry instead, which drops
# every accelerator but TCG, as the lab's own KUnit boots have.
TCG_ONLY = paths.BUILD / "tcg-only"
_TCG_ONLY_QEMU = """#!{python}
# Written by memlab (kunit_runner.py): {qemu} with TCG only.
import os
import sys

args, rest = [], iter(sys.argv[1:])
for arg in rest:
    if arg == "-accel":
        accel = next(rest, "")
        if accel.split(",")[0] != "tcg":
            continue
        args += [arg, accel]
    else:
        args.append(arg)
os.execv({qemu!r}, [{qemu!r}] + args)
"""


def tcg_only_env(arch: str, env: dict[str, str]) -> dict[str, str]:
    """@env with @arch's QEMU on PATH through a wrapper that keeps TCG only."""
    name = arches.get(arch).qemu_binary
    real = shutil.which(name, path=env.get("PATH"))
    if not real:
        raise LabError(f"{name} not found on PATH (memlab installs it with the guest tools)")
    TCG_ONLY.mkdir(parents=True, exist_ok=True)
    wrapper = TCG_ONLY / name
    wrapper.write_text(_TCG_ONLY_QEMU.format(python=sys.executable, qemu=real))
    wrapper.chmod(0o755)
    return dict(env, PATH=f"{TCG_ONLY}{os.pathsep}{env.get('PATH', os.defpath)}")


def run_kunit_tool(arch: str = arches.GUEST_ARCH, tree: Path = paths.KERNEL_TREE,
                   name: str = "kunit.py") -> KunitResult:
    """The suites as a maintainer runs them from the patched @tree:
    `tools/testing/kunit/kunit.py run --arch=ARCH --kunitconfig=...` with
    the series' kunitconfig files, which configures, builds and boots a
    kernel of its own under QEMU. The lab adds only where it builds (the
    out directory @name, ccache, -jN) and where the results go. Every suite
    the resulting .config allows must run, and its console must be free of
    WARN, BUG, oops and KASAN reports."""
    guest.require_guest_tools()
    configs = series_kunitconfigs(tree)
    if not configs:
        raise LabError(f"{tree} has no kunitconfig file of the series for kunit.py")
    out = paths.out_dir(arch, "patched", name)
    log = paths.LOGS / f"{name}-{arch}.log"
    report = paths.LOGS / f"{name}-{arch}.json"
    report.unlink(missing_ok=True)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")      # run_logged() appends: one run per log
    out.parent.mkdir(parents=True, exist_ok=True)   # kunit.py makes only the last one
    cmd = ["python3", "tools/testing/kunit/kunit.py", "run", f"--arch={arch}",
           *[f"--kunitconfig={c}" for c in configs], f"--build_dir={out}",
           f"--jobs={build.jobs()}",
           *[f"--make_options={a}" for a in build.compiler_args(arch)], f"--json={report}"]
    say(f"$ {' '.join(cmd)}  (in {tree})")
    # kunit.py prints nothing while it builds: the progress lines say it runs.
    rc = run_logged(cmd, log, f"kunit.py run --arch={arch}", cwd=tree,
                    env=tcg_only_env(arch, build.build_env()), check=False)
    if not report.exists():
        raise LabError(f"kunit.py run (exit {rc}) wrote no results; see {log}")
    res = count(json.loads(report.read_text()))
    res.log = log
    res.require_suites(expected_suites((out / ".config").read_text(), series_suites(tree)))
    raw = out / "test.log"      # the kernel's console, as kunit.py keeps it
    if raw.exists():
        for failure in console.parse(raw.read_text(errors="replace"), bare=True).failures:
            res.failed += 1
            res.failures.append(f"console: {failure}")
    if rc != 0 and not res.failed:
        res.failed += 1
        res.failures.append(f"kunit.py exited {rc} (see {log})")
    say(res.summary())
    return res
