"""The kernel's own selftests that guest scenarios run: built on the host
from the tree of the kernel they test, into its build directory, so that
base and patched each run the test program of their own tree."""
from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from . import arches, deps, paths, provenance
from .console import Console
from .runner import LabError, run_logged

# tools/testing/selftests/mm/hmm-tests.c against lib/test_hmm.ko: HMM
# mirroring, migration to and from DEVICE_PRIVATE and DEVICE_COHERENT
# memory, GUP of device pages.
HMM_TESTS = "hmm-tests"
HMM_TESTS_SOURCE = Path("tools/testing/selftests/mm/hmm-tests.c")


def build_hmm_tests(tree: Path, out: Path, log: Path) -> Path:
    """hmm-tests as the selftests' Makefile builds it: the harness from
    tools/testing/selftests, the private uapi headers (lib/test_hmm_uapi.h,
    mm/gup_test.h) from the tree's root, the others exported from the tree
    (the host's may be older than what the harness uses: struct
    procmap_query)."""
    binary = out / HMM_TESTS
    run_logged(["make", "-C", str(tree), f"O={out}", "headers"], log, "export uapi headers")
    sources = [tree / HMM_TESTS_SOURCE] + helper_sources(tree / HMM_TESTS_SOURCE.parent)
    run_logged(["gcc", "-O2", "-Wall", "-Werror",
                "-I", str(tree / "tools/testing/selftests"), "-I", str(tree),
                "-isystem", str(out / "usr" / "include"),
                "-o", str(binary), *map(str, sources), "-lpthread"],
               log, f"build {HMM_TESTS}")
    return binary


_HELPERS = re.compile(r"^\$\(TEST_GEN_FILES\):(.*)$", re.MULTILINE)


def helper_sources(suite: Path) -> list[Path]:
    """The helpers the mm selftests' Makefile links into its programs
    (vm_util.c and the like, which differ from release to release)."""
    makefile = suite / "Makefile"
    try:
        text = makefile.read_text().replace("\\\n", " ")   # continued lines
    except OSError as e:
        raise LabError(f"{makefile}: {e.strerror}") from None
    found = _HELPERS.search(text)
    names = found.group(1).split() if found else []
    if any("$" in name for name in names):
        raise LabError(f"{makefile}: the helpers of $(TEST_GEN_FILES) name a variable "
                       f"({' '.join(names)}), which this build does not expand")
    return [suite / name for name in names]


# The kernel's own selftests that the guests of these configs run (scenario
# mm-selftests), installed by `memlab build` into KSELFTEST_DIR of the build
# directory: the mm suite (run_vmtests.sh and its programs) and the
# memory-hotplug one (mem-on-off-test.sh).
KSELFTEST_CONFIGS = (arches.DEBIAN_CONFIG,)
KSELFTEST_DIR = "kselftest"
KSELFTEST_SUITES = ("mm", "memory-hotplug")
# 6.12.117's khugepaged.c returns KSFT_SKIP without including kselftest.h,
# which defines it: that program is built with the header forced in
# (harmless where the source includes it itself).
FORCED_HEADER = {"khugepaged": Path("tools/testing/selftests/kselftest.h")}


def build_kselftests(tree: Path, out: Path, log: Path) -> Path:
    """The suites built against the tree's own uapi headers (exported into
    the build directory) and installed as the kselftest Makefiles install
    them: programs and scripts side by side."""
    deps.ensure("selftests")
    run_logged(["make", "-C", str(tree), f"O={out}", "headers"], log, "export uapi headers")
    installed = out / KSELFTEST_DIR
    for suite in KSELFTEST_SUITES:
        source = tree / "tools/testing/selftests" / suite
        built = out / "selftests" / suite
        built.mkdir(parents=True, exist_ok=True)
        make = ["make", "-C", str(source), f"-j{os.cpu_count() or 2}", f"OUTPUT={built}",
                f"KHDR_INCLUDES=-isystem {out / 'usr/include'}"]
        for program, header in FORCED_HEADER.items():
            if (source / f"{program}.c").exists():
                run_logged([*make, f"EXTRA_CFLAGS=-include {tree / header}",
                            str(built / program)],
                           log, f"build selftest {suite}/{program}")
        run_logged([*make, f"INSTALL_PATH={installed / suite}", "install"],
                   log, f"build selftests {suite}")
    return installed


# What a selftest ended as: run_vmtests.sh's TAP and a script's exit code
# (kselftest's 4 is a skip) as the guest reports them, with the runs it
# took (the guest runs a known flaky test again when it fails).
OUTCOMES = ("pass", "fail", "skip")


def _reports(con: Console) -> dict[str, dict[str, str]]:
    """Each selftest the guest reported ("SUITE:NAME"), with its report; a
    name reported again is kept apart by a "#2" (then "#3", ...)."""
    seen: dict[str, dict[str, str]] = {}
    for r in con.results:
        if "selftest" not in r:
            continue
        name = r["selftest"]
        if name in seen:
            name += f"#{sum(1 for n in seen if n.split('#')[0] == name) + 1}"
        seen[name] = r
    return seen


def outcomes(con: Console) -> dict[str, str]:
    """Each selftest the guest reported, with its outcome."""
    return {name: r.get("outcome", "") for name, r in _reports(con).items()}


def _runs(report: dict[str, str]) -> int:
    """The runs a test took, 0 when the report has no count."""
    runs = report.get("runs", "")
    return int(runs) if runs.isdigit() else 0


def run_again(con: Console) -> dict[str, int]:
    """The selftests that took more than one run, with their runs."""
    return {name: _runs(r) for name, r in _reports(con).items() if _runs(r) > 1}


def check_run(con: Console) -> list[str]:
    """One run of the suites: run_vmtests.sh ran to its end (its plan line
    counts every test it ran), every mm test it counted was reported, the
    hotplug test too, with its memory notifier error half, each with a
    known outcome. (A test that fails is not
    a problem of the run: compare() weighs it.)"""
    got = outcomes(con)
    problems = [f"selftest {name}: outcome {outcome!r}" for name, outcome in got.items()
                if outcome not in OUTCOMES]
    problems += [f"selftest {name}: runs {r.get('runs')!r}"
                 for name, r in _reports(con).items() if _runs(r) < 1]
    counted = con.result("selftests_mm_tests")
    mm = [name for name in got if name.startswith("mm:")]
    if not counted or int(counted) == 0:
        problems.append("run_vmtests.sh ran no test")
    elif int(counted) != len(mm):
        problems.append(f"run_vmtests.sh ran {counted} tests, {len(mm)} reported")
    if con.result("selftests_mm_plan") != counted:
        problems.append(f"run_vmtests.sh's plan line counts "
                        f"{con.result('selftests_mm_plan') or 'no'} tests, it ran {counted}: "
                        "it did not run to its end")
    if not any(name.startswith("memory-hotplug:") for name in got):
        problems.append("the memory-hotplug selftest did not report")
    elif con.result("selftests_hotplug_notifier") != "ran":
        problems.append("the memory-hotplug selftest skipped its memory notifier error "
                        "half (memory-notifier-error-inject missing)")
    return problems


def compare(base: dict[str, str], patched: dict[str, str]) -> tuple[list[str], list[str]]:
    """What the series changed in the selftests' results: the regressions
    (a test the base kernel passes that the patched one fails, skips or
    does not run), then every other difference (a test failing on base
    alone, as a flaky one may, or run by one kernel only)."""
    regressions: list[str] = []
    others: list[str] = []
    for name in dict.fromkeys([*base, *patched]):
        was, now = base.get(name, "not run"), patched.get(name, "not run")
        if was != now:
            (regressions if was == "pass" else others).append(
                f"{name}: base {was}, patched {now}")
    return regressions, others


# Why a selftest does not pass on either kernel of the debian guest: the
# guest or Debian's config lacks what it needs, on base and patched alike.
NOT_PASSING_WHY = {
    "mm:test_vmalloc.sh_smoke": "needs lib/test_vmalloc.ko: Debian leaves TEST_VMALLOC out",
    "mm:test_hmm.sh_smoke": "needs lib/test_hmm.ko: Debian leaves TEST_HMM (and "
                            "DEVICE_PRIVATE's test driver) out; the lab's own "
                            "`hmm-tests` scenario runs it on the other configs",
    "mm:virtual_address_range": "the guest's CPU (QEMU's `max`) has 5-level paging, and "
                                "the test's validate_addr() rejects any address above "
                                "128 TB, even those its own high hints ask for "
                                "(\"Bail out! Bad address\")",
}


def _results(config: str) -> Path:
    """Where config's comparison is recorded."""
    return paths.RESULTS / "selftests" / f"{config}.json"


def _recorded_tests(config: str) -> list[dict[str, str | int]] | None:
    """The tests of config's last recorded comparison, None if there is none."""
    path = _results(config)
    return json.loads(path.read_text())["tests"] if path.exists() else None


def not_passing(config: str) -> list[dict[str, str | int]]:
    """The recorded tests of config that did not pass on both kernels."""
    return [t for t in _recorded_tests(config) or []
            if t["base"] != "pass" or t["patched"] != "pass"]


def recorded(config: str) -> str:
    """The last comparison recorded for config, in a few words: how many
    tests, how each ended on both kernels, how many ended otherwise."""
    tests = _recorded_tests(config)
    if tests is None:
        return "not recorded (`memlab test --full`)"
    alike = [t["base"] for t in tests if t["base"] == t["patched"]]
    ends = ", ".join(f"{alike.count(o)} {o}" for o in OUTCOMES if o in alike)
    return f"{len(tests)} tests: {ends} on both, {len(tests) - len(alike)} ending otherwise"


def record(config: str, base: Console, patched: Console) -> Path:
    """Both kernels' outcomes, test by test, in
    results/selftests/CONFIG.json, with the runs a test took where it
    took more than one."""
    outcome = {"base": outcomes(base), "patched": outcomes(patched)}
    runs = {"base": run_again(base), "patched": run_again(patched)}
    tests: list[dict[str, str | int]] = []
    for name in dict.fromkeys([*outcome["base"], *outcome["patched"]]):
        test: dict[str, str | int] = {"test": name}
        for kernel in ("base", "patched"):
            test[kernel] = outcome[kernel].get(name, "not run")
            if name in runs[kernel]:
                test[f"{kernel}_runs"] = runs[kernel][name]
        tests.append(test)
    out = _results(config)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                               "config": config,
                               "provenance": provenance.now(
                                   provenance.guest_kernels([config])).to_json(),
                               "tests": tests}, indent=1) + "\n")
    return out
