"""`memlab test`: the project's whole test suite, in the order a failure is
cheapest to find: pytest and mypy (lab code), the README's apply command on
the pristine tree, checkpatch (series), then for each kernel of the
architecture table: its build, KUnit (built into it, one bare boot) and,
on the guests' architecture, guest scenarios (QEMU); then the patch's
clearing variants on this host's CPU and the prefixes of the series. The
default plan is a subset for CI's time (DEFAULT_PLAN_MINUTES); --full
adds the steps of FULL_ONLY, and every scenario on every config and base
kernel."""
from __future__ import annotations

import functools
import importlib.util
import os
import platform
import re
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

from . import (accel, arches, bench, build, checkpatch, debian_image, deps, guest, hostinfo,
               kernel_base, kernel_tree, kunit_runner, matrix, native, package, paths,
               provenance, uploads)
from .catalog import DEFER_CONFIG, SCENARIOS
from .scenario import Scenario
from .console import Console
from .runner import LabError, run_logged, run_quiet, say, tail
from .runrecord import CI_RESULTS, RunRecord, StepRecord, test_record, totals
from .series import (CHECKOUT_PLACEHOLDER, COVER_LETTER, apply_command,
                     parse_am_run_failure, parts, patch_subject)


@dataclass
class Step:
    name: str
    passed: int = 0
    failed: int = 0
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    skipped: int = 0
    passed_cases: list[str] = field(default_factory=list)

    def line(self) -> str:
        text = f"{self.name:<12} {self.passed:4d} passed, {self.failed:3d} failed  ({self.seconds:.0f}s)"
        return text + "".join(f"\n{'':14}{n}" for n in self.notes)


_PYTEST_COUNTS = re.compile(r"(\d+) (passed|failed|error|errors)")


def parse_pytest_counts(output: str) -> tuple[int, int]:
    """Passed and failed (+errors) from pytest's closing line."""
    passed = failed = 0
    lines = [ln for ln in output.splitlines() if ln.strip()]
    closing = lines[-1] if lines else ""
    for n, kind in _PYTEST_COUNTS.findall(closing):
        if kind == "passed":
            passed = int(n)
        else:
            failed += int(n)
    return passed, failed


def run_pytest() -> Step:
    step = Step("pytest")
    if importlib.util.find_spec("pytest") is None:
        deps.apt_install(["python3-pytest"])
    deps.ensure_virtme_ng()   # the venv (plots, spdxcheck) some tests use
    # The lab's tests are of the lab, whatever base a run works on: they
    # read the default base's results.
    env = {k: v for k, v in os.environ.items() if k != "MEMLAB_BASE"}
    res = run_quiet([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                     str(paths.REPO / "lab" / "tests")], cwd=paths.REPO, env=env,
                    check=False)
    print(res.stdout + res.stderr, end="", flush=True)
    step.passed, step.failed = parse_pytest_counts(res.stdout)
    if res.returncode != 0 and step.failed == 0:
        step.failed = 1
        step.notes.append(f"pytest exited {res.returncode}")
    return step


def run_mypy() -> Step:
    """A static type check of the lab, by the venv's mypy."""
    step = Step("mypy")
    deps.ensure_virtme_ng()
    res = run_quiet([str(paths.VENV / "bin" / "python3"), "-m", "mypy",
                     "--config-file", "mypy.ini", "memlab"], cwd=paths.REPO / "lab", check=False)
    errors = [ln for ln in res.stdout.splitlines() if ": error:" in ln]
    if res.returncode == 0:
        step.passed = 1
        step.notes.append(res.stdout.strip().splitlines()[-1] if res.stdout.strip() else "ok")
    else:
        step.failed = max(1, len(errors))
        step.notes += errors[:10] or (res.stdout + res.stderr).strip().splitlines()[-5:]
    return step


def run_apply() -> Step:
    """The README's apply command, as is, on a fresh checkout of the
    pristine tree: every patch of the series must apply, in order."""
    step = Step("apply")
    tree = kernel_tree.pristine_tree()
    patches = kernel_tree.product_series().patches()
    listing = kernel_tree.product_series().series_file.relative_to(paths.REPO)
    shown = apply_command(kernel_tree.product_series().directory, paths.REPO)
    command = shown.replace(CHECKOUT_PLACEHOLDER, shlex.quote(str(paths.REPO)))
    res = run_quiet(["sh", "-c", command], cwd=tree, env=kernel_tree.git_env(), check=False)
    if res.returncode != 0:
        failure = parse_am_run_failure(patches, res.stdout + res.stderr)
        kernel_tree.git("am", "--abort", cwd=tree, check=False)
        step.failed = 1
        step.notes.append(f"`{shown}` on tag {paths.TAG_BASE} stops at "
                          f"{failure.describe()}")
        return step
    applied = kernel_tree.git("log", "--reverse", "--format=%s",
                              f"{paths.TAG_BASE}..HEAD", cwd=tree).splitlines()
    listed = [patch_subject(p) for p in patches]
    if applied != listed:
        step.failed = 1
        step.notes.append(f"applied {len(applied)} patches, {listing} lists "
                          f"{len(listed)}: the 0*.patch files and {listing} disagree")
        return step
    step.passed = 1
    step.notes.append(f"`{shown}` applied all {len(listed)} patches of "
                      f"{listing} to tag {paths.TAG_BASE}")
    return step


def run_uploads() -> Step:
    """The newest upload of the base Debian serves, and whether the series
    applies to it (uploads.check()): reported, not failed, when it does
    not, so that Debian's move is seen the day it happens and the pin moves
    with a green run."""
    step = Step("uploads", passed=1)
    step.notes.append(uploads.check().summary())
    return step


def run_checkpatch() -> Step:
    step = Step("checkpatch")
    for report in checkpatch.check_series():
        if report.clean:
            step.passed += 1
        else:
            step.failed += 1
            step.notes.append(report.describe())
    return step


def ensure_tree() -> None:
    """A tree matching patches/: made when missing, else must match."""
    if not kernel_tree.has_tree() or kernel_tree.is_unpatched():
        kernel_tree.source()
        return
    diffs = kernel_tree.check_export()
    if diffs:
        raise LabError("build/linux differs from patches/ (export or "
                       "`memlab source --force` first):\n  " + "\n  ".join(diffs))
    kernel_tree.sync_variant_tree("base")


# The configs whose base kernels also run the scenarios meant for them
# (--full): lab's and debian's (what users run, and the selftests'
# comparison).
BASE_CONFIGS = ("lab", arches.DEBIAN_CONFIG)
# What a cold default run may take on a slow machine, in minutes: CI's
# limit is twice that, and a second kernel base is to fit beside it.
DEFAULT_PLAN_MINUTES = 45
# Left to `memlab test --full`, to keep a cold default run within
# DEFAULT_PLAN_MINUTES (docs/lab.md says what each step catches per
# minute): the lab kernel (measured by the bench; defer is the same kernel
# with deferred struct page init, and only defer boots the switches'
# guests and deferred init), so that the default builds one x86-64 kernel;
# the kernels that check rather than measure, vm (the fast paths under
# DEBUG_VM and lockdep) and debug (KASAN); debian (Debian's own config:
# the largest build); i386 (a compile test of the HIGHMEM fallbacks, which
# the matrix's arm HIGHMEM target builds too); the prefixes of the series
# and the compile matrix (builds of mm/ for each patch and each target);
# kunit.py's own run of the series' kunitconfig files (another x86-64 kernel
# build, of kunit.py's config, for suites defer's KUnit run runs too); the
# packages and the Debian image; the quick bench. The default plan
# also runs each guest scenario once only, and no base kernel's guests
# (patched_scenarios()).
FULL_ONLY = {"lab", "vm", "debug", arches.DEBIAN_CONFIG, "i386", "kunit.py", "prefixes",
             "matrix", "package", "image", "bench"}
# The kinds of step, in the order they run.
STEP_KINDS = ("pytest", "mypy", "uploads", "apply", "checkpatch", "build", "kunit", "guest",
              "kunit.py", "native", "prefixes", "matrix", "bench", "package", "image")
# A base other than the default (kernel_base.py) is tested by its own
# `memlab test` (run_base()), a step of the default base's run named after
# it. Its plan leaves out what the default base's plan already covers for
# every base (the lab's own pytest and mypy) and what is the default base's
# alone: Debian's uploads of the kernel users run, its packages and image,
# and the streaming clear's native check (the other bases' series leave
# the streaming clear out, their cover letters say why).
OTHER_BASE_NEVER = {"pytest", "mypy", "uploads", "native", "package", "image"}
# What its default plan runs, to fit beside the default base's within
# DEFAULT_PLAN_MINUTES: the README's apply command on the pristine tree,
# checkpatch, and kunit.py's run of the series' suites (one small kernel).
OTHER_BASE_DEFAULT = {"apply", "checkpatch", "kunit.py"}


def other_bases() -> list[str]:
    """The bases the default base's `memlab test` also tests, in order."""
    return [name for name in kernel_base.BASES if name != kernel_base.DEFAULT]


def kernels() -> list[tuple[str, arches.Arch]]:
    """Every (config, arch) `memlab test` builds, in order: the guests'
    architecture first (it finds most problems soonest), then the others."""
    return [(config, a) for a in arches.ARCHES.values() for config in a.test_configs]


def kernel_skip_name(config: str, arch: str) -> str:
    """How --skip names a kernel: by its config on the guests' architecture,
    by its architecture elsewhere."""
    return config if arch == arches.GUEST_ARCH else arch


def skip_choices() -> list[str]:
    names = list(STEP_KINDS) + other_bases()
    for config, a in kernels():
        name = kernel_skip_name(config, a.name)
        if name not in names:
            names.append(name)
    return names


def _suffix(config: str, arch: str) -> str:
    return "" if arch == arches.GUEST_ARCH else f" {arch}"


def run_build(config: str, arch: str = arches.GUEST_ARCH, variant: str = "patched") -> Step:
    step = Step(f"build {config}{_suffix(config, arch)}"
                + ("" if variant == "patched" else f" {variant}"))
    built = guest.build_kernel(variant, config, arch)
    step.passed = 1
    step.notes.append(str(built.image.relative_to(paths.REPO)))
    return step


def run_kunit(config: str, arch: str = arches.GUEST_ARCH) -> Step:
    return _kunit_step(f"kunit {config}{_suffix(config, arch)}",
                       kunit_runner.run(config, arch))


def run_kunit_tool(arch: str = arches.GUEST_ARCH) -> Step:
    """The series' kunitconfig files run by kunit.py itself, as the commit
    messages say to run them."""
    return _kunit_step(f"kunit.py {arch}", kunit_runner.run_kunit_tool(arch))


def run_kunit_tool_parts(arch: str = arches.GUEST_ARCH) -> Step:
    """kunit.py run at the last patch of each part of the series that the
    cover letter names, but the last part (run_kunit_tool() runs the whole
    series): each part must pass its tests without the parts after it."""
    step = Step("kunit.py parts")
    series = kernel_tree.product_series()
    count = len(series.patches())
    named = parts((series.directory / COVER_LETTER).read_text(), count)
    commits = kernel_tree.git("rev-list", "--reverse",
                              f"{paths.TAG_BASE}..{paths.PRODUCT_BRANCH}").split()
    for part in named[:-1]:
        tree = kernel_tree.checkout("kunit-parts", commits[part.last - 1])
        res = kunit_runner.run_kunit_tool(arch, tree, "kunit.py-parts")
        line = (f"part {part.number} alone (patches 1-{part.last}): {res.passed} passed, "
                f"{res.failed} failed, {res.skipped} skipped")
        if res.ok:
            step.passed += 1
        else:
            step.failed += 1
            line += "".join(f"\n  {f}" for f in res.failures)
        step.notes.append(line)
    if not named:
        step.notes.append("the cover letter names no parts")
    return step


def _kunit_step(name: str, res: kunit_runner.KunitResult) -> Step:
    step = Step(name)
    step.passed, step.failed, step.skipped = res.passed, res.failed, res.skipped
    step.notes += res.failures
    if res.skipped:
        step.notes.append(f"{res.skipped} skipped (see {res.log})")
    if res.total == 0:
        step.failed += 1
        step.notes.append("no KUnit test ran")
    return step


R = TypeVar("R")


def _tally(name: str, results: Iterable[R], problems: Callable[[R], list[str]]) -> Step:
    """A step of one check per result: passed when the result has no
    problem, else failed with its problems as notes."""
    step = Step(name)
    for res in results:
        found = problems(res)
        if found:
            step.failed += 1
            step.notes += found
        else:
            step.passed += 1
    return step


def run_native_check(config: str) -> Step:
    """The patch's clearing variants natively (native.check()), built
    against @config's kernel, which the plan builds anyway: what KUnit
    under TCG cannot run (CLZERO) runs on this host's CPU."""
    step = Step("native")
    if platform.machine() != "x86_64":
        step.skipped = 1
        step.notes.append(f"a {platform.machine()} host: the x86-64 variants need one")
        return step
    checked = native.check(config)
    step.passed = len(checked)
    step.notes.append("clear_pages() variants cleared exactly their runs: " + ", ".join(checked))
    return step


def run_prefixes() -> Step:
    """Every prefix of the series, and its clearing tail alone, built with
    W=1 (matrix.run_prefixes()) for x86-64 with and without ZONE_DEVICE
    and for arm64: no new error or warning at any patch."""
    def problems(res: matrix.PrefixResult) -> list[str]:
        if res.ok:
            return []
        return ([f"prefix {res.patch} ({res.subject}): "
                 + ", ".join(sorted(set(res.new) | set(res.failed)))]
                + [f"  {t}: {line}" for t, lines in res.new.items() for line in lines[:3]])
    return _tally("prefixes", matrix.run_prefixes(), problems)


def run_bench_quick() -> Step:
    """The bench at its quick sizes (bench.py): a smoke test of the bench,
    which also fails when two -icount boots of a kernel disagree."""
    step = Step("bench --quick")
    rc = bench.run(quick=True)
    step.passed, step.failed = (1, 0) if rc == 0 else (0, 1)
    return step


def run_matrix() -> Step:
    """The compile matrix (matrix.py): a target passes when the series adds
    no error and no W=1 warning to its build."""
    def problems(res: matrix.TargetResult) -> list[str]:
        if res.ok:
            return []
        return ([f"{res.target}: " + (res.note or f"{len(res.new)} new diagnostics")]
                + [f"  {line}" for line in res.new[:5]])
    return _tally("matrix", matrix.run(), problems)


def base_scenarios(config: str) -> list[Scenario]:
    """The scenarios this config's base kernel runs too (--full)."""
    if config not in BASE_CONFIGS:
        return []
    return [sc for sc in SCENARIOS.values() if sc.on_base and config in sc.runs_on()]


def default_configs() -> tuple[str, ...]:
    """The guests' architecture's configs the default plan builds."""
    return tuple(c for c in arches.guest().test_configs if c not in FULL_ONLY)


def patched_scenarios(config: str, full: bool) -> list[Scenario]:
    """The scenarios this config's patched kernel runs: with --full, every
    one meant for it; in the default plan, each scenario once, on the first
    of its configs that the default plan builds (defer); those of the
    other configs only (the lab kernel's layouts, its non-deferred boot)
    wait for --full."""
    if full:
        return [sc for sc in SCENARIOS.values() if config in sc.runs_on()]
    built = default_configs()
    return [sc for sc in SCENARIOS.values()
            if next((c for c in sc.runs_on() if c in built), None) == config]


def run_package() -> Step:
    """The Debian packages of the patched kernel (package.py), of the
    flavour the image test boots."""
    step = Step("package", passed=1)
    built = package.build_packages(package.DEFAULT_FLAVOUR)
    step.notes += [str(d.relative_to(paths.REPO)) for d in built.debs]
    return step


def run_image() -> Step:
    """The Debian image booted on Debian's kernel and on the package
    (debian_image.py): a check per boot."""
    return _tally("image", debian_image.run(package.DEFAULT_FLAVOUR),
                  lambda b: [f"{b.release}: {p}" for p in b.problems])


def run_guest(config: str, full: bool) -> Step:
    """The scenarios of this config's patched kernel (patched_scenarios()),
    then, with --full, those that must also pass before the series on the
    base kernel; then, for a scenario that weighs both kernels' runs, that
    comparison."""
    step = Step(f"guest {config}")
    runs = [(sc, "patched") for sc in patched_scenarios(config, full)]
    runs += [(sc, "base") for sc in base_scenarios(config)] if full else []
    # KVM where it works (the probe's verdict is cached), else TCG.
    how = accel.default_accel(arches.image_path(arches.GUEST_ARCH, "patched", config))
    consoles: dict[tuple[str, str], Console] = {}
    for sc, variant in runs:
        result = guest.boot_and_run(sc.spec(variant, config, how),
                                    failure_expected=bool(sc.expect_failure))
        consoles[sc.name, variant] = result.console
        problems = sc.verdict(result)
        inits = result.console.memmap_inits
        case = sc.name + ("" if variant == "patched" else f" ({variant})")
        detail = case + (f": {len(inits)} memmap inits of {inits[0].pages} pages"
                         if inits else "")
        if problems:
            step.failed += 1
            step.notes.append(f"{detail}: FAILED: " + "; ".join(problems)
                              + f" (log {result.log})")
        else:
            step.passed += 1
            step.passed_cases.append(case)
            step.notes.append(f"{detail}: ok ({result.accel}, {result.seconds:.0f}s)")
    for sc, variant in runs:
        if variant != "base" or sc.compare is None:
            continue
        problems = sc.compare(config, consoles[sc.name, "base"], consoles[sc.name, "patched"])
        if problems:
            step.failed += 1
            step.notes.append(f"{sc.name}, base against patched: FAILED: " + "; ".join(problems))
        else:
            step.passed += 1
            step.notes.append(f"{sc.name}, base against patched: ok")
    return step


def _stamp(path: Path) -> int | None:
    """@path's modification time, to tell whether a run rewrote it."""
    return path.stat().st_mtime_ns if path.exists() else None


def run_base(name: str, quick: bool, full: bool, skip: set[str]) -> Step:
    """`memlab test` on base @name, in a process of its own (a base's paths
    are fixed at import, paths.py), with the options the user gave: its
    checks are this step's (from the record it wrote: a whole run's, or the
    steps that a --full run with --skip added to it; a run with --quick, or
    the default plan with --skip, writes none: then one check, passed or
    failed)."""
    step = Step(name)
    log = paths.of_base(paths.BUILD, name) / "logs" / "test.log"
    record = test_record(full, name)
    left_out = sorted(skip - set(other_bases()))
    cmd = ([str(paths.REPO / "memlab"), "test"] + (["--quick"] if quick else [])
           + (["--full"] if full else []) + [f"--skip={k}" for k in left_out])
    # MEMLAB_SOURCE_VERSION pins an upload of the default base, not of this one.
    env = {k: v for k, v in os.environ.items() if k != "MEMLAB_SOURCE_VERSION"}
    env["MEMLAB_BASE"] = name
    log.unlink(missing_ok=True)
    before = _stamp(record)
    rc = run_logged(cmd, log, f"memlab test on {name}", env=env, check=False)
    summary = tail(log, 200).partition("==== memlab test summary ====")[2].strip()
    if record.exists() and _stamp(record) != before:
        written = RunRecord.load(record)
        if not left_out:
            ours = written.steps
        else:   # a part's steps carry its date, the newest in the record
            parts = written.rerun_steps()
            ours = parts[max(parts)] if parts else []
        for s in ours:
            step.passed += s.passed
            step.failed += s.failed
            step.notes.append(f"{s.name}: {s.passed} passed, {s.failed} failed")
    if rc != 0:
        step.failed = max(step.failed, 1)
        step.notes += [f"MEMLAB_BASE={name} memlab test failed (exit {rc}), its summary:"]
        step.notes += summary.splitlines() or [f"none: see {log}"]
    elif not step.passed:
        step.passed = 1
        step.notes += [f"MEMLAB_BASE={name} memlab test passed, its summary:"]
        step.notes += summary.splitlines()
    step.notes.append(f"log: {log.relative_to(paths.REPO)}")
    return step


@dataclass
class TestRun:
    """What a `memlab test` run did: its steps in order, and its time."""
    steps: list[Step]
    seconds: float

    @property
    def ok(self) -> bool:
        passed, failed = totals(self.steps)
        return failed == 0 and passed > 0

    def records(self) -> list[StepRecord]:
        return [StepRecord(s.name, s.passed, s.failed, round(s.seconds, 1), s.skipped,
                           s.passed_cases) for s in self.steps]

    def print_summary(self) -> None:
        print("\n==== memlab test summary ====")
        for s in self.steps:
            print(s.line())
        print(f"total time {self.seconds:.0f}s")
        passed, failed = totals(self.steps)
        print(f"memlab: {passed} passed, {failed} failed", flush=True)


@dataclass(frozen=True)
class PlannedStep:
    """A step of `memlab test`'s plan, before it runs."""
    kind: str                       # one of STEP_KINDS: what --skip names
    name: str                       # as the summary and the records name it
    work: Callable[[], Step]
    needs: tuple[str, ...] = ()     # earlier steps that must have passed
    # A preparation: its own step in the summary, passed when it raised nothing.
    preparation: bool = False


def _prepared(name: str, what: Callable[[], object]) -> Callable[[], Step]:
    def work() -> Step:
        what()
        return Step(name, passed=1)
    return work


def plan(quick: bool = False, full: bool = False,
         skip: set[str] | None = None) -> list[PlannedStep]:
    """Every step the options select, in the order they run: the cheapest
    to fail first, the operator's view (the series on the pristine tree)
    before the lab's own work tree, each kernel's build, KUnit and guests
    together."""
    asked = set(skip or ())     # what the other bases' runs leave out too
    skip = set(asked)
    default_base = not paths.BASE
    if not default_base:
        skip |= OTHER_BASE_NEVER | set(other_bases())
        if not full:    # no kernel of its own: kunit.py builds one
            skip |= set(STEP_KINDS) - OTHER_BASE_DEFAULT - {"build"}
            skip |= {kernel_skip_name(c, a.name) for c, a in kernels()}
    if quick:
        skip |= {"build", "kunit", "guest", "native", "prefixes"}
    if not full and default_base:
        skip |= FULL_ONLY
    steps = [t for t in (PlannedStep("pytest", "pytest", run_pytest),
                         PlannedStep("mypy", "mypy", run_mypy),
                         PlannedStep("uploads", "uploads", run_uploads))
             if t.kind not in skip]
    tree_steps: list[PlannedStep] = [
        PlannedStep("apply", "apply", run_apply, ("source",)),
        PlannedStep("checkpatch", "checkpatch", run_checkpatch, ("work tree",))]
    for config, a in kernels():
        if kernel_skip_name(config, a.name) in skip:
            continue
        suffix = _suffix(config, a.name)
        build = f"build {config}{suffix}"
        tree_steps.append(PlannedStep("build", build,
                                      functools.partial(run_build, config, a.name),
                                      ("work tree",)))
        if not a.bootable:
            continue    # a compile test
        tree_steps.append(PlannedStep("kunit", f"kunit {config}{suffix}",
                                      functools.partial(run_kunit, config, a.name), (build,)))
        if a.name != arches.GUEST_ARCH:
            continue
        needs: tuple[str, ...] = (build,)
        if not patched_scenarios(config, full) or "guest" in skip:
            continue
        if full and base_scenarios(config):
            tree_steps.append(PlannedStep("build", f"{build} base",
                                          functools.partial(run_build, config, a.name, "base"),
                                          ("work tree",)))
            needs = (build, f"{build} base")
        tree_steps.append(PlannedStep("guest", f"guest {config}",
                                      functools.partial(run_guest, config, full), needs))
    if "build" not in skip:     # kunit.py builds its kernel itself
        tree_steps.append(PlannedStep("kunit.py", f"kunit.py {arches.GUEST_ARCH}",
                                      run_kunit_tool, ("work tree",)))
        if full:
            tree_steps.append(PlannedStep("kunit.py", "kunit.py parts", run_kunit_tool_parts,
                                          ("work tree",)))
    native_config = DEFER_CONFIG    # built by the default plan and --full alike
    tree_steps += [PlannedStep("native", "native",
                               functools.partial(run_native_check, native_config),
                               (f"build {native_config}",)),
                   PlannedStep("prefixes", "prefixes",
                               run_prefixes, ("work tree",)),
                   PlannedStep("matrix", "matrix", run_matrix, ("work tree",)),
                   PlannedStep("bench", "bench --quick", run_bench_quick, ("work tree",)),
                   PlannedStep("package", "package", run_package, ("work tree",)),
                   PlannedStep("image", "image", run_image, ("package",))]
    selected = [t for t in tree_steps if t.kind not in skip]
    if selected:
        steps.append(PlannedStep("source", "source",
                                 _prepared("source", kernel_tree.ensure_pristine),
                                 preparation=True))
        steps += [t for t in selected if t.kind == "apply"]
        steps.append(PlannedStep("work tree", "work tree", _prepared("work tree", ensure_tree),
                                 ("source",), preparation=True))
        steps += [t for t in selected if t.kind != "apply"]
    if default_base:
        steps += [PlannedStep(name, name, functools.partial(run_base, name, quick, full, asked))
                  for name in other_bases() if name not in skip]
    # A step whose needs were left out cannot run: leave it out too.
    kept: list[PlannedStep] = []
    for t in steps:
        if all(n in {k.name for k in kept} for n in t.needs):
            kept.append(t)
    return kept


def _last_seconds() -> dict[str, dict[str, float]]:
    """Each step's time in the last recorded runs: warm and cold CI, and
    the whole plans of `memlab test`."""
    out: dict[str, dict[str, float]] = {}
    for label, path in (("cold CI", CI_RESULTS / "cold.json"), ("warm CI", CI_RESULTS / "warm.json"),
                        ("full", test_record(full=True))):
        if path.exists():
            for s in RunRecord.load(path).steps:
                out.setdefault(s.name, {})[label] = s.seconds
    return out


def print_plan(quick: bool = False, full: bool = False, skip: set[str] | None = None) -> None:
    """The steps the options select, what each needs, and how long each
    took in the last recorded runs."""
    last = _last_seconds()
    steps = plan(quick, full, skip)
    width = max(len(t.name) for t in steps)
    print(f"{'step':<{width}}  {'needs':<28} last recorded")
    for t in steps:
        took = ", ".join(f"{label} {sec / 60:.1f} min" for label, sec in last.get(t.name, {}).items())
        print(f"{t.name:<{width}}  {', '.join(t.needs) or '-':<28} {took or 'not recorded'}")
    print(f"{len(steps)} steps")


def execute(quick: bool = False, full: bool = False, skip: set[str] | None = None) -> TestRun:
    """Every step of the plan, in order; a step's failure does not stop
    the others, but those that need it (a kernel whose build failed: its
    KUnit run and guests) do not run."""
    chosen = plan(quick, full, skip)
    hostinfo.require_build_disk("memlab test", builds=any(t.kind == "build" for t in chosen))
    start = time.monotonic()
    steps: list[Step] = []
    passed: set[str] = set()
    for t in chosen:
        if any(n not in passed for n in t.needs):
            continue
        t0 = time.monotonic()
        say(f"=== {t.name} ===")
        try:
            step = t.work()
        except LabError as e:
            step = Step(t.name, failed=1, notes=[str(e).splitlines()[0]])
            print(f"[memlab] {t.name}: {e}", file=sys.stderr, flush=True)
        step.seconds = time.monotonic() - t0
        steps.append(step)
        if not step.failed:
            passed.add(t.name)
    return TestRun(steps, time.monotonic() - start)


def run(quick: bool = False, full: bool = False, skip: set[str] | None = None) -> int:
    test = execute(quick, full, skip)
    test.print_summary()
    if not quick and test.ok:
        if not skip:
            record(test, full)
        elif full:
            record_part(test)
    return 0 if test.ok else 1


def provenance_of_plan() -> dict[str, Any]:
    """What code a run of the plan ran: every kernel it builds."""
    built = [(a.name, variant, config) for config, a in kernels()
             for variant in ("base", "patched")]
    return provenance.now(built).to_json()


def record(test: TestRun, full: bool) -> None:
    """Keep a whole plan's passing run: its record is what the documents'
    proof table says (a failed run leaves the last passing one)."""
    rec = RunRecord.now(0, test.seconds, test.records(), provenance_of_plan())
    say(f"recorded in {rec.write(test_record(full))}")


def record_part(test: TestRun) -> None:
    """Add a passing --full run that left steps out to the plan's record
    (or start one): a plan longer than a working session is proven a part
    at a time, each re-run step naming its own date and code."""
    path = test_record(full=True)
    part = RunRecord.now(0, test.seconds, test.records(), provenance_of_plan())
    rec = RunRecord.load(path).with_steps_of(part) if path.exists() else RunRecord.from_part(part)
    names = ", ".join(s.name for s in part.steps)
    say(f"{names}: recorded in {rec.write(path)}")
