"""Our KUnit suites: where they run and how their results are counted.

On x86-64 they are built into the patched lab kernels themselves (configs
lab.patched and, through it, debug), not run at boot (KUnit's default is
off there) but by one boot with kunit.enable=1: the lab kernel runs them
with the template path on, the debug kernel under KASAN. So `memlab test`
builds no kernel of its own for KUnit on x86-64. The KTAP they print on the
console is parsed by the kernel's own tools/testing/kunit/kunit.py parse.

On arm64 kunit.py does everything: it builds a kernel from the kunitconfig
(out of tree, in build/out/kunit-ARCH-CONFIG), boots it under QEMU and
parses KTAP. Either way we ask kunit.py for JSON and count it.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import deps, guest, kconfig, kernel_tree, paths
from .build import ccache_env
from .runner import LabError, run_logged, say


# kunit.py architectures other than the host's, and their toolchains.
CROSS_COMPILE = {"arm64": "aarch64-linux-gnu-"}

# Every suite the series adds (mm/mm_init_kunit.c, mm/clear_pages_kunit.c):
# a run that lacks one of them tested less than it claims.
SUITES = ("memmap_init", "memmap_init_zone_device", "clear_pages")

# What a lab kernel's boot needs to run its built-in suites.
RUN_SUITES_AT_BOOT = "kunit.enable=1"

# The architecture whose lab kernels carry the suites; others use kunit.py.
BUILT_IN_ARCH = "x86_64"


def default_config(arch: str) -> str:
    """The lab kernel to boot (built-in suites) or the kunitconfig (kunit.py)."""
    return "lab" if arch == BUILT_IN_ARCH else "kunit"


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

    def require_suites(self, suites: tuple[str, ...] = SUITES) -> None:
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


def run_built_in(config: str = "lab") -> KunitResult:
    """The suites built into the patched kernel of `config` (lab or debug,
    built beforehand), run by one boot; console reports (KASAN, WARN, oops)
    fail the run like a failed case."""
    spec = guest.GuestSpec(variant="patched", config=config, script="hello",
                           append=[RUN_SUITES_AT_BOOT])
    result = guest.boot_and_run(spec)
    report = paths.LOGS / f"kunit-{BUILT_IN_ARCH}-{config}.json"
    res = count(parse_console(result.log, report))
    res.log = result.log
    res.require_suites()
    for problem in result.problems():
        res.failed += 1
        res.failures.append(f"console: {problem}")
    say(res.summary())
    return res


def run(config: str = "lab", arch: str = BUILT_IN_ARCH) -> KunitResult:
    """Our suites on `arch`: built into the lab kernels on x86-64 (config:
    lab or debug), by kunit.py elsewhere (config: kunitconfig fragments of
    configs/, joined with '+')."""
    if arch == BUILT_IN_ARCH:
        return run_built_in(config)
    return run_kunit_py(config, arch)


def run_kunit_py(config: str = "kunit", arch: str = "arm64") -> KunitResult:
    """config: kunitconfig fragments of configs/, joined with '+';
    kunit.py merges them."""
    deps.ensure("build", "guest")
    if not kernel_tree.has_tree():
        raise LabError("no kernel work tree: run `memlab source` first")
    kunitconfigs = [kconfig.fragment_path(name) for name in config.split("+")]
    out = paths.OUT / f"kunit-{arch}-{config}"
    log = paths.LOGS / f"kunit-{arch}-{config}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    # kunit.py makes only the last level of --build_dir.
    out.parent.mkdir(parents=True, exist_ok=True)
    report = paths.LOGS / f"kunit-{arch}-{config}.json"
    report.unlink(missing_ok=True)
    cross = CROSS_COMPILE.get(arch, "")
    if cross:
        deps.apt_install(deps.APT_GROUPS[f"cross-{arch}"])
    cmd = ["python3", "tools/testing/kunit/kunit.py", "run",
           f"--arch={arch}", f"--build_dir={out}",
           *(f"--kunitconfig={k}" for k in kunitconfigs),
           *([f"--cross_compile={cross}"] if cross else []),
           f"--jobs={os.cpu_count() or 2}", f"--make_options=CC=ccache {cross}gcc",
           "--timeout=900", f"--json={report}"]
    # kunit.py exits non-zero when a test fails: read its JSON either way.
    rc = run_logged(cmd, log, f"kunit.py ({config}, {arch})", cwd=paths.KERNEL_TREE,
                    check=False, env=ccache_env())
    if not report.exists():
        raise LabError(f"kunit.py (exit {rc}) wrote no results; see {log}")
    res = count(json.loads(report.read_text()))
    res.log = log
    res.require_suites()
    if rc != 0 and res.failed == 0:
        raise LabError(f"kunit.py exited {rc} without a failed test; see {log}")
    say(res.summary())
    return res
