"""The compile matrix (`memlab matrix`; a step of `memlab test --full`):
the series' objects built with W=1 on every architecture Debian 12 has a
cross compiler for, and x86-64 configs with memory hotplug and ZONE_DEVICE
on and off, like the kernel test robot's builds: the x86-64 and arm64 ones
also checked by sparse, and built with clang. Each target builds the
directories the series touches (mm/, and an architecture's own files where
the series touches them) twice, on the pristine tree and with the series
(branch `product`, no lab patches); it passes when the series' build has no
error and no warning the pristine build lacks. Warnings are compared by
file and message, not line, since the series moves lines."""
from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from . import build, deps, hostinfo, kconfig, kernel_tree, paths, provenance
from .runner import LabError, run_logged, say
from .runrecord import head_commit

# The last run over every target: what the documents' matrix table says.
MATRIX_RESULTS = paths.RESULTS / "matrix.json"
# The last build of every prefix of the series: what the proof table says.
PREFIX_RESULTS = paths.RESULTS / "prefixes.json"

VARIANTS = {"base": paths.TAG_BASE, "series": paths.PRODUCT_BRANCH}
# The series' KUnit suites, where their dependencies allow (series only:
# the pristine tree has no such symbols).
KUNIT = {"CONFIG_KUNIT": "y", "CONFIG_KUNIT_ALL_TESTS": "n"}
SERIES_KUNIT = {"CONFIG_MEMMAP_INIT_KUNIT_TEST": "y", "CONFIG_CLEAR_PAGES_KUNIT_TEST": "y"}
CLEAR_KUNIT = {"CONFIG_CLEAR_PAGES_KUNIT_TEST": "y"}
HOTPLUG = {"CONFIG_MEMORY_HOTPLUG": "y", "CONFIG_MEMORY_HOTREMOVE": "y"}
DEVICE = {"CONFIG_ZONE_DEVICE": "y", "CONFIG_DEVICE_PRIVATE": "y"}


# The robot's other two tools. Debian 12's newest clang: 7.2 asks for
# LLVM 17.0.1 or later (scripts/min-tool-version.sh).
CLANG_VERSION = "19"
CLANG_PACKAGES = (f"clang-{CLANG_VERSION}", f"lld-{CLANG_VERSION}", f"llvm-{CLANG_VERSION}")
SPARSE_PACKAGES = ("sparse",)


@dataclass(frozen=True)
class Target:
    name: str
    make_arch: str
    defconfig: str                        # the make target the config starts from
    covers: str                           # why it is in the matrix
    cross_compile: str = ""               # "" for the host's gcc
    packages: tuple[str, ...] = ()
    options: dict[str, str] = field(default_factory=dict)          # both variants
    series_options: dict[str, str] = field(default_factory=dict)   # the series only
    dirs: tuple[str, ...] = ("mm/",)
    clang: bool = False                   # LLVM=1 (its own cross compiler), else gcc
    sparse: bool = False                  # sparse over every file compiled (C=1)

    def make_args(self, out: Path) -> list[str]:
        if self.clang:
            # LLVM=-N: clang-N, ld.lld-N and llvm-*-N, whatever the ARCH.
            tools = [f"LLVM=-{CLANG_VERSION}", f"CC=ccache clang-{CLANG_VERSION}",
                     f"HOSTCC=ccache clang-{CLANG_VERSION}"]
        else:
            cross = [f"CROSS_COMPILE={self.cross_compile}"] if self.cross_compile else []
            tools = [*cross, f"CC=ccache {self.cross_compile}gcc", "HOSTCC=ccache gcc"]
        return [f"O={out}", f"ARCH={self.make_arch}", *tools,
                *(["C=1"] if self.sparse else []), "-j2"]

    @property
    def src_arch(self) -> str:
        """The arch/ directory of its ARCH (kbuild's SRCARCH)."""
        return {"i386": "x86", "x86_64": "x86", "parisc64": "parisc"}.get(self.make_arch,
                                                                          self.make_arch)

    def checks(self) -> str:
        """What judges its build, as its record names it."""
        return ("clang" if self.clang else "gcc") + " W=1" + (", sparse" if self.sparse else "")

    def needs(self) -> list[str]:
        """The Debian packages its build needs beyond the build group."""
        return [*self.packages, *(CLANG_PACKAGES if self.clang else ()),
                *(SPARSE_PACKAGES if self.sparse else ())]


def built_with_clang(t: Target) -> Target:
    """@t's config built with clang instead of gcc (and without sparse,
    which its gcc build runs)."""
    return replace(t, name=f"{t.name}-clang", covers=f"{t.name}'s config built with clang",
                   cross_compile="", packages=(), clang=True, sparse=False)


_GCC_TARGETS = [
    Target("alpha", "alpha", "defconfig", "64-bit FLATMEM",
           "alpha-linux-gnu-", ("gcc-alpha-linux-gnu",), KUNIT, CLEAR_KUNIT),
    Target("riscv64", "riscv", "defconfig", "SPARSEMEM_VMEMMAP, memory hotplug, generic helpers",
           "riscv64-linux-gnu-", ("gcc-riscv64-linux-gnu",), KUNIT | HOTPLUG, SERIES_KUNIT),
    Target("riscv64-nommu", "riscv", "nommu_virt_defconfig", "64-bit FLATMEM without an MMU",
           "riscv64-linux-gnu-", ("gcc-riscv64-linux-gnu",)),
    Target("sparc64", "sparc", "sparc64_defconfig",
           "WANT_PAGE_VIRTUAL on 64-bit SPARSEMEM (page->virtual per pfn)",
           "sparc64-linux-gnu-", ("gcc-sparc64-linux-gnu",), KUNIT, CLEAR_KUNIT),
    # Its pageblock order is chosen at boot: the memmap suite, laid out in
    # pageblocks, is not offered there.
    Target("powerpc64le", "powerpc", "ppc64le_defconfig",
           "64K pages, a pageblock order chosen at boot, ZONE_DEVICE, hotplug",
           "powerpc64le-linux-gnu-", ("gcc-powerpc64le-linux-gnu",), KUNIT, CLEAR_KUNIT),
    Target("s390x", "s390", "defconfig", "big-endian 64-bit, memory hotplug",
           "s390x-linux-gnu-", ("gcc-s390x-linux-gnu",), KUNIT, SERIES_KUNIT),
    Target("mips64el", "mips", "64r2el_defconfig", "64-bit MIPS",
           "mips64el-linux-gnuabi64-", ("gcc-mips64el-linux-gnuabi64",), KUNIT, CLEAR_KUNIT),
    # ARCH=parisc64 makes the kernel 64-bit: 7.2's defconfig no longer says so.
    Target("parisc64", "parisc64", "generic-64bit_defconfig", "64-bit PA-RISC",
           "hppa64-linux-gnu-", ("gcc-hppa64-linux-gnu", "gcc-hppa-linux-gnu"),
           KUNIT, CLEAR_KUNIT),
    Target("m68k", "m68k", "virt_defconfig", "32-bit, no SPARSEMEM",
           "m68k-linux-gnu-", ("gcc-m68k-linux-gnu",), KUNIT, CLEAR_KUNIT),
    Target("arm", "arm", "multi_v7_defconfig", "32-bit with HIGHMEM",
           "arm-linux-gnueabihf-", ("gcc-arm-linux-gnueabihf",),
           KUNIT | {"CONFIG_HIGHMEM": "y"}, CLEAR_KUNIT),
    Target("i386", "i386", "allnoconfig", "32-bit x86, nothing optional"),
    Target("x86_64-allno", "x86_64", "allnoconfig", "x86-64, nothing optional",
           dirs=("mm/", "arch/x86/lib/")),
    Target("x86_64-zone-device", "x86_64", "defconfig",
           "x86-64 with MEMORY_HOTPLUG, ZONE_DEVICE and DEVICE_PRIVATE (the "
           "ZONE_DEVICE suite's mapping), the suites built in",
           options=KUNIT | HOTPLUG | DEVICE,
           series_options=SERIES_KUNIT, dirs=("mm/", "arch/x86/lib/"), sparse=True),
    Target("x86_64-hotplug-no-device", "x86_64", "defconfig",
           "x86-64 with MEMORY_HOTPLUG and without ZONE_DEVICE",
           options=KUNIT | HOTPLUG | {"CONFIG_ZONE_DEVICE": "n"},
           series_options=SERIES_KUNIT, dirs=("mm/", "arch/x86/lib/"), sparse=True),
    Target("arm64", "arm64", "defconfig", "the lab's KUnit architecture: generic store helpers",
           "aarch64-linux-gnu-", ("gcc-aarch64-linux-gnu",), KUNIT | HOTPLUG | DEVICE,
           SERIES_KUNIT, sparse=True),
]
# The targets sparse checks are the ones the robot also builds with clang.
TARGETS: dict[str, Target] = {t.name: t for t in
                              _GCC_TARGETS + [built_with_clang(t) for t in _GCC_TARGETS
                                              if t.sparse]}

# Every prefix of the series is built for these (`memlab matrix --prefixes`):
# the lab's two architectures, and memory hotplug without ZONE_DEVICE, where
# a helper shared by both can lose its only caller.
PREFIX_TARGETS = ("x86_64-zone-device", "x86_64-hotplug-no-device", "arm64")

_DIAGNOSTIC = re.compile(r"^(?P<file>[^\s:]+):\d+(:\d+)?: (?P<kind>warning|error): "
                         r"(?P<message>.*)$")


def diagnostics(log_text: str) -> set[str]:
    """The build's warnings and errors as "file: kind: message", without
    line numbers (the series moves lines) or the O= prefix."""
    found = set()
    for line in log_text.splitlines():
        m = _DIAGNOSTIC.match(line.strip())
        if m:
            name = re.sub(r"^.*?/(?=(mm|arch|include|lib|kernel)/)", "", m.group("file"))
            found.add(f"{name}: {m.group('kind')}: {m.group('message')}")
    return found


@dataclass
class TargetResult:
    target: str
    ok: bool
    new: list[str]            # the series' errors and the warnings the base lacks
    note: str = ""
    seconds: float = 0.0
    checks: str = "gcc W=1"   # Target.checks(); records older than sparse and clang lack it


def defined_in(tree: Path, option: str) -> bool:
    """Whether the tree's Kconfig defines the option (a prefix of the series
    may not have its symbols yet)."""
    name = option.removeprefix("CONFIG_")
    return bool(kernel_tree.git("grep", "-l", "-E", f"^(menu)?config {name}$", "--",
                                "*Kconfig*", cwd=tree, check=False))


def config_inputs(t: Target, tree: Path, opts: dict[str, str]) -> str:
    """What the target's .config in @tree is made from: its defconfig, the
    options asked for, and the tree's Kconfig and defconfig files."""
    files = kernel_tree.git("ls-files", "-s", "--", "*Kconfig*",
                            f"arch/{t.src_arch}/configs/", cwd=tree)
    asked = "\n".join(f"{k}={v}" for k, v in sorted(opts.items()))
    return hashlib.sha256(f"{t.defconfig}\n{asked}\n{files}".encode()).hexdigest()


def configure(t: Target, variant: str, make: list[str], out: Path, opts: dict[str, str],
              log: Path, env: dict[str, str]) -> None:
    """The target's defconfig with @opts on top, checked."""
    run_logged(make + [t.defconfig], log, f"matrix {t.name} {variant}: {t.defconfig}", env=env)
    if not opts:
        return
    dotconfig = out / ".config"
    dotconfig.write_text(kconfig.merge(dotconfig.read_text(), opts))
    run_logged(make + ["olddefconfig"], log, f"matrix {t.name} {variant}: options", env=env)
    bad = kconfig.verify(opts, dotconfig.read_text())
    if bad:
        raise LabError(f"matrix {t.name} ({variant}): options did not survive "
                       "olddefconfig: " + ", ".join(map(str, bad)))


def build_variant(t: Target, variant: str, tree: Path,
                  touched: list[str] | None = None) -> tuple[int, str]:
    """Configure and build the target's directories, or only the objects
    of the @touched sources (series_objects()); (exit code, log text).
    Every variant but "base" takes those of the series' options that its
    tree defines."""
    out = paths.OUT / f"matrix-{t.name}-{variant}"
    log = paths.LOGS / f"matrix-{t.name}-{variant}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    make = ["make", "-C", str(tree), *t.make_args(out)]
    env = build.build_env()
    out.mkdir(parents=True, exist_ok=True)
    opts = dict(t.options)
    # The series' suites its tree defines: a prefix may not have them yet,
    # and a base's series may have no clearing suite (7.2's leaves batch
    # clearing to mainline).
    if variant != "base":
        opts |= {k: v for k, v in t.series_options.items() if defined_in(tree, k)}
    # Consecutive prefixes mostly share their Kconfig files: the .config
    # made from the same inputs is made again only when one changed.
    stamp_file, stamp = out / ".memlab-matrix-config", config_inputs(t, tree, opts)
    if not ((out / ".config").exists() and stamp_file.exists()
            and stamp_file.read_text() == stamp):
        stamp_file.unlink(missing_ok=True)
        configure(t, variant, make, out, opts, log, env)
        stamp_file.write_text(stamp)
    # Always recompile what is built: a warning is only printed when a file
    # compiles, and ccache replays it.
    if touched is None:
        goals = list(t.dirs)
        for d in t.dirs:
            for obj in (out / d).rglob("*.o"):
                obj.unlink()
    else:
        goals = series_objects(t, tree, touched,
                               kconfig.parse((out / ".config").read_text()))
        for goal in goals:
            (out / goal).unlink(missing_ok=True)
    rc = 0
    for group in goal_groups(goals):
        # -k: every error and warning, not only the first file's.
        rc |= run_logged(make + ["-k", "W=1", *group], log, f"matrix {t.name} {variant}: "
                         "W=1 " + " ".join(group), env=env, check=False)
    return rc, log.read_text(errors="replace")


def goal_groups(goals: list[str]) -> list[list[str]]:
    """The make arguments for @goals: the generic objects together, the
    architecture's in one job, since a single-target build can reach an
    arch/ directory twice (x86 builds arch/x86/lib/ as a library and as
    objects) and race with itself under -j."""
    generic = [g for g in goals if not g.startswith("arch/")]
    arch = [g for g in goals if g.startswith("arch/")]
    return ([generic] if generic else []) + ([["-j1", *arch]] if arch else [])


def check_target(t: Target) -> TargetResult:
    t0 = time.monotonic()
    deps.apt_install(t.needs())
    logs: dict[str, tuple[int, str]] = {}
    for variant, rev in VARIANTS.items():
        logs[variant] = build_variant(t, variant, kernel_tree.checkout(f"matrix-{variant}", rev))
    base_rc, base_log = logs["base"]
    rc, series_log = logs["series"]
    seconds = time.monotonic() - t0
    if base_rc != 0:
        return TargetResult(t.name, False, sorted(e for e in diagnostics(base_log)
                                                  if ": error: " in e),
                            "the pristine tree does not build this target", seconds,
                            t.checks())
    new = sorted(diagnostics(series_log) - diagnostics(base_log))
    note = "" if rc == 0 else f"the series' build failed (log build/logs/matrix-{t.name}-series.log)"
    return TargetResult(t.name, rc == 0 and not new, new, note, seconds, t.checks())


# The PrefixResult.patch of the clearing patches built alone (run_prefixes()).
TAIL = "tail"


@dataclass
class PrefixResult:
    patch: str                # "N": the series' first N patches; TAIL: see run_prefixes()
    subject: str
    new: dict[str, list[str]]     # target -> its new diagnostics, where any
    failed: list[str]             # targets whose build failed

    @property
    def ok(self) -> bool:
        return not self.new and not self.failed


def series_sources() -> list[str]:
    """The files the series touches."""
    return kernel_tree.git("diff", "--name-only",
                           f"{paths.TAG_BASE}..{paths.PRODUCT_BRANCH}").split()


_ASSIGNMENT = re.compile(r"^\s*[\w-]+-(?:y|\$\((CONFIG_\w+)\))\s*[:+]?=(.*)$")


def kbuild_lists(makefile: Path, entry: str, config: kconfig.Options) -> bool | None:
    """Whether @makefile builds @entry (an object or "dir/") with the
    options of @config: None when no assignment names it, else whether one
    does so unconditionally or under a set option."""
    if not makefile.exists():
        return None
    named = None
    for line in makefile.read_text().replace("\\\n", " ").splitlines():
        m = _ASSIGNMENT.match(line)
        if not m or entry not in m.group(2).split():
            continue
        option = m.group(1)
        named = bool(named) or option is None or config.get(option) in ("y", "m")
    return named


def series_objects(t: Target, tree: Path, touched: list[str],
                   config: kconfig.Options) -> list[str]:
    """The objects built from the C and assembly files of @touched that
    @tree has, within @t's directories, that Kbuild builds with @config's
    options: their Makefile lists them (a file #included by another is
    compiled within it) and no parent Makefile leaves their directory out
    (mm/kmsan/ without KMSAN, memremap.o without ZONE_DEVICE)."""
    objects = []
    for name in touched:
        source = tree / name
        if source.suffix not in (".c", ".S") or not source.exists():
            continue
        if not name.startswith(t.dirs):
            continue
        obj = Path(name).with_suffix(".o")
        if not kbuild_lists(source.parent / "Makefile", obj.name, config):
            continue
        directory = source.parent
        while directory != tree and kbuild_lists(directory.parent / "Makefile",
                                                 directory.name + "/", config) is not False:
            directory = directory.parent
        if directory == tree:
            objects.append(str(obj))
    return objects


def clearing_tail(commits: list[str]) -> list[str]:
    """The series' separable tail: of its @commits, those after the last one
    that touches mm/mm_init.c (the clearing patches), which must apply to
    and build on the pristine tree without the memmap patches before them.
    Empty for a series with no clearing patches (one still being written
    for a base)."""
    memmap = set(kernel_tree.git("rev-list", f"{paths.TAG_BASE}..{paths.PRODUCT_BRANCH}",
                                 "--", "mm/mm_init.c").split())
    last = max((i for i, c in enumerate(commits) if c in memmap), default=-1)
    return commits[last + 1:]


def tail_tree(tail: list[str]) -> Path:
    """build/trees/matrix-tail: the pristine tree with only @tail applied."""
    tree = kernel_tree.checkout("matrix-tail", paths.TAG_BASE)
    try:
        kernel_tree.git("cherry-pick", *tail, cwd=tree)
    except LabError as e:
        kernel_tree.git("cherry-pick", "--abort", cwd=tree, check=False)
        raise LabError("the clearing patches do not apply to the pristine tree on "
                       f"their own: {e}") from e
    return tree


def _check_tree(label: str, subject: str, variant: str, tree: Path, targets: list[Target],
                touched: list[str], base: dict[str, set[str]]) -> PrefixResult:
    res = PrefixResult(label, subject, {}, [])
    for t in targets:
        rc, log = build_variant(t, variant, tree, touched)
        new = sorted(diagnostics(log) - base[t.name])
        if new:
            res.new[t.name] = new
        if rc != 0:
            res.failed.append(t.name)
    say(f"prefix {label} ({subject}): "
        + ("ok" if res.ok else f"FAILED {', '.join(sorted(set(res.new) | set(res.failed)))}"))
    for name, lines in res.new.items():
        for line in lines[:5]:
            print(f"    {name}: {line}", flush=True)
    return res


def run_prefixes() -> list[PrefixResult]:
    """Each prefix of the series built for the PREFIX_TARGETS, then the
    clearing tail alone on the pristine tree, against the pristine tree's
    diagnostics: a series that bisects builds at every patch without a new
    warning. Only the series' objects are built (W=1), which compile
    everything the series changes, headers included."""
    deps.ensure("build")
    if not kernel_tree.has_tree():
        kernel_tree.source()
    targets = [TARGETS[n] for n in PREFIX_TARGETS]
    for t in targets:
        deps.apt_install(t.needs())
    touched = series_sources()
    base_tree = kernel_tree.checkout("matrix-base", paths.TAG_BASE)
    base = {t.name: diagnostics(build_variant(t, "base", base_tree, touched)[1])
            for t in targets}
    commits = kernel_tree.git("rev-list", "--reverse",
                              f"{paths.TAG_BASE}..{paths.PRODUCT_BRANCH}").split()
    results = []
    for i, commit in enumerate(commits, 1):
        subject = kernel_tree.git("log", "-1", "--format=%s", commit)
        tree = kernel_tree.checkout("matrix-prefix", commit)
        results.append(_check_tree(str(i), subject, "prefix", tree, targets, touched, base))
    tail = clearing_tail(commits)
    if tail:
        results.append(_check_tree(TAIL, f"the last {len(tail)} patches alone on "
                                   f"{paths.TAG_BASE}", "tail", tail_tree(tail), targets,
                                   touched, base))
    else:
        say("no patches after the last one to mm/mm_init.c: no clearing tail to build alone")
    PREFIX_RESULTS.write_text(json.dumps(
        {**_run_facts(), "targets": [t.name for t in targets],
         "prefixes": [asdict(r) for r in results]}, indent=1) + "\n")
    return results


def _run_facts() -> dict:
    """When, where and on what code a matrix run ran."""
    return {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "host_cpu": hostinfo.cpu_model(),
            "commit": head_commit(),
            "series": kernel_tree.git("rev-parse", "--short=12", paths.PRODUCT_BRANCH),
            "provenance": provenance.now().to_json()}


def write_results(results: list[TargetResult]) -> None:
    MATRIX_RESULTS.write_text(json.dumps(
        {**_run_facts(), "targets": [asdict(r) for r in results]}, indent=1) + "\n")


def amend_results(results: list[TargetResult]) -> bool:
    """Put @results (a run of some targets) in place of the recorded run's
    entries for them, when that run built the same series code; the record
    lists each amendment with its own date and commit. False: nothing
    recorded, or recorded for other code (run the whole matrix)."""
    if not MATRIX_RESULTS.exists():
        return False
    data, facts = load_results(), _run_facts()
    recorded = (data.get("provenance") or {}).get("series", {})
    if recorded.get("product") != facts["provenance"]["series"]["product"]:
        return False
    fresh = {r.target: asdict(r) for r in results}
    data["targets"] = [fresh.pop(t["target"], t) for t in data["targets"]] + list(fresh.values())
    data.setdefault("amended", []).append(
        {k: facts[k] for k in ("date", "host_cpu", "commit")}
        | {"targets": [r.target for r in results]})
    MATRIX_RESULTS.write_text(json.dumps(data, indent=1) + "\n")
    return True


def built_tail(prefixes: list[PrefixResult]) -> bool:
    """Whether a prefixes run built the clearing patches alone: a series
    without them (mainline clears runs itself) has no tail."""
    return any(p.patch == TAIL for p in prefixes)


def load_prefixes(source: Path | None = None) -> tuple[dict, list[PrefixResult]] | None:
    """The last build of every prefix (of the base in use, or @source:
    another base's results/BASE/prefixes.json): its run's facts and each
    prefix's result; None if none is recorded."""
    source = source or PREFIX_RESULTS
    if not source.exists():
        return None
    try:
        data = json.loads(source.read_text())
        return data, [PrefixResult(**p) for p in data["prefixes"]]
    except (ValueError, KeyError, TypeError) as e:
        raise LabError(f"{source.relative_to(paths.REPO)}: not a prefixes result "
                       f"({type(e).__name__}: {e})") from None


def load_results(source: Path | None = None) -> dict:
    """The last run over every target: of the base in use, or @source
    (another base's results/BASE/matrix.json)."""
    source = source or MATRIX_RESULTS
    try:
        data = json.loads(source.read_text())
        for t in data["targets"]:
            TargetResult(**t)
        return data
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise LabError(f"{source.relative_to(paths.REPO)}: not a matrix result "
                       f"({type(e).__name__}: {e})") from None


def run(only: list[str] | None = None) -> list[TargetResult]:
    deps.ensure("build")
    if not kernel_tree.has_tree():
        kernel_tree.source()
    names = only or list(TARGETS)
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        raise LabError(f"unknown matrix target(s) {', '.join(unknown)} "
                       f"(known: {', '.join(TARGETS)})")
    results = []
    for name in names:
        say(f"matrix {name}: {TARGETS[name].covers}")
        res = check_target(TARGETS[name])
        say(f"matrix {name}: {'ok' if res.ok else 'FAILED'} ({res.seconds:.0f}s)"
            + (f": {res.note}" if res.note else ""))
        for line in res.new[:20]:
            print(f"    {line}", flush=True)
        results.append(res)
    if not only:
        write_results(results)
    elif amend_results(results):
        say(f"{MATRIX_RESULTS.relative_to(paths.REPO)}: these targets' entries replaced")
    return results
