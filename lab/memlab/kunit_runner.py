"""Our KUnit suites, run by the kernel's own tools/testing/kunit/kunit.py.

kunit.py builds a kernel from the kunitconfig (out of tree, in
build/out/kunit-ARCH-CONFIG), boots it under QEMU and parses KTAP; we ask
it for JSON and summarize the counts.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import deps, kconfig, kernel_tree, paths
from .build import ccache_env
from .runner import LabError, run_logged, say


# kunit.py architectures other than the host's, and their toolchains.
CROSS_COMPILE = {"arm64": "aarch64-linux-gnu-"}


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


def run(config: str = "kunit", arch: str = "x86_64") -> KunitResult:
    """config: kunitconfig fragments of configs/, joined with '+'
    (e.g. kunit+kunit-kasan); kunit.py merges them."""
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
    if rc != 0 and res.failed == 0:
        raise LabError(f"kunit.py exited {rc} without a failed test; see {log}")
    say(res.summary())
    return res
