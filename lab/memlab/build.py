"""Out-of-tree kernel builds: tinyconfig (or Debian's own config) +
fragments, ccache, -j<cores>."""
from __future__ import annotations

import hashlib
import json
import lzma
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import arches, deps, kconfig, kernel_tree, paths, sources
from .runner import LabError, run_logged, say


@dataclass(frozen=True)
class Built:
    arch: str
    variant: str
    config: str
    out: Path
    image: Path
    tree: Path          # the source tree it was built from
    log: Path


def compiler_args(arch: str) -> list[str]:
    """make's compiler variables for @arch: its cross prefix, and gcc
    through ccache (also for kunit.py's --make_options)."""
    a = arches.get(arch)
    cross = [f"CROSS_COMPILE={a.cross_compile}"] if a.cross_compile else []
    return [*cross, f"CC=ccache {a.cross_compile}gcc", "HOSTCC=ccache gcc"]


def jobs() -> int:
    """Parallel jobs of a kernel build: every core."""
    return os.cpu_count() or 2


def make_args(arch: str, out: Path) -> list[str]:
    return [f"O={out}", f"ARCH={arches.get(arch).make_arch}", *compiler_args(arch),
            f"-j{jobs()}"]


# Kernel builds see the system's tools only, as CI's scrubbed environment
# does: a rustc on a user's PATH sets CONFIG_RUSTC_VERSION, a compiler there
# would build another kernel, and either changes the compiler cache's keys.
# The locale is left out too: ccache hashes it, and it only translates the
# compiler's messages.
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
LOCALE_VARS = ("LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES")


# The lab's kernels, Debian's configuration and a package of Debian's
# modules together outgrow ccache's default 5 GB, which would evict the
# lab kernels' objects with every package build.
CCACHE_MAX_SIZE = "25G"


def build_env() -> dict[str, str]:
    """The environment of kernel builds: the system's tools, ccache keyed on
    paths relative to the checkout, so that another clone of the project
    and another shell (CI's) reuse this one's cache."""
    env = {k: v for k, v in os.environ.items() if k not in LOCALE_VARS}
    return dict(env, PATH=SYSTEM_PATH, CCACHE_BASEDIR=str(paths.REPO), CCACHE_NOHASHDIR="1",
                CCACHE_MAXSIZE=CCACHE_MAX_SIZE)


def _stamp(opts: kconfig.Options, tree: Path, start: str) -> str:
    h = hashlib.sha256(kconfig.render(opts).encode())
    h.update(str(tree).encode())
    h.update(start.encode())
    return h.hexdigest()


# The Debian kernel flavours a config may start from, by architecture.
DEBIAN_FLAVOUR_ARCH = {"amd64": "x86_64"}


def debian_dotconfig(flavour: str, arch: str) -> str:
    """Debian's own .config of @flavour, from the pinned linux-config package."""
    if DEBIAN_FLAVOUR_ARCH.get(flavour.split("_")[0]) != arch:
        raise LabError(f"Debian's {flavour} config is not for {arch}")
    path = sources.debian_config(flavour)
    try:
        with lzma.open(path, "rt") as f:
            return f.read()
    except (lzma.LZMAError, EOFError) as e:
        raise LabError(f"cannot read Debian's config {path}: {e}") from None


@dataclass(frozen=True)
class _Wanted:
    """What a config's .config must hold: the fragment's options, and for a
    config starting from Debian's, Debian's values of the kept options."""
    config: str
    opts: kconfig.Options
    flavour: str | None
    debian: str
    tree: Path

    def problems(self, dotconfig: str) -> str:
        """Empty when @dotconfig holds what is wanted; else the message."""
        bad = kconfig.verify(self.opts, dotconfig)
        if bad:
            return (f"config {self.config!r}: {len(bad)} requested option(s) did not "
                    "survive olddefconfig (missing dependency or unknown symbol):\n  "
                    + "\n  ".join(str(b) for b in bad))
        changed = kconfig.debian_changes(self.debian, dotconfig,
                                         kconfig.kept_symbols(self.tree)) \
            if self.flavour else []
        if changed:
            return (f"config {self.config!r}: {len(changed)} option(s) the series depends "
                    f"on differ from Debian's {self.flavour} config (Debian's value "
                    "wanted):\n  " + "\n  ".join(str(b) for b in changed))
        return ""


def ccache_stats() -> dict[str, int]:
    """The compiler cache's counters (ccache --print-stats); empty when
    ccache is not installed yet (nothing cached)."""
    try:
        res = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True,
                             env=build_env(), check=False)
    except OSError:
        return {}
    stats = {}
    for line in res.stdout.splitlines():
        key, _, value = line.partition("\t")
        if value.strip().isdigit():
            stats[key] = int(value)
    return stats


def configure(tree: Path, out: Path, arch: str, variant: str, config: str,
              log: Path) -> "_Wanted":
    """tinyconfig (or Debian's config, its modules left out), then the
    fragment, then olddefconfig; verify the result. What the .config must
    hold, for a check after the build."""
    opts = kconfig.load_fragment(config, arch, variant)
    flavour = kconfig.debian_flavour(config)
    wanted = _Wanted(config, opts, flavour,
                     debian_dotconfig(flavour, arch) if flavour else "", tree)
    stamp_file = out / ".memlab-config"
    stamp = _stamp(opts, tree, wanted.debian)
    dotconfig = out / ".config"
    # The stamp alone is not enough: a make run by hand in O= on another
    # commit (syncconfig) can drop options that commit's Kconfig lacks.
    if dotconfig.exists() and stamp_file.exists() and stamp_file.read_text() == stamp \
            and not wanted.problems(dotconfig.read_text()):
        return wanted
    out.mkdir(parents=True, exist_ok=True)
    stamp_file.unlink(missing_ok=True)
    make = ["make", "-C", str(tree), *make_args(arch, out)]
    if flavour:
        start = kconfig.modules_left_out(wanted.debian, opts)
    else:
        run_logged(make + ["tinyconfig"], log, "configure: tinyconfig", env=build_env())
        start = dotconfig.read_text()
    dotconfig.write_text(kconfig.merge(start, opts))
    run_logged(make + ["olddefconfig"], log, f"configure: {config} fragment",
               env=build_env())
    problems = wanted.problems(dotconfig.read_text())
    if problems:
        raise LabError(problems)
    stamp_file.write_text(stamp)
    return wanted


def build(variant: str, config: str = "lab", arch: str = arches.GUEST_ARCH) -> Built:
    a = arches.get(arch)
    deps.ensure("build")
    deps.apt_install(list(a.toolchain_packages))
    if not kernel_tree.has_tree():
        raise LabError("no kernel work tree: run `memlab source` first")
    tree = kernel_tree.sync_variant_tree(variant)
    out = paths.out_dir(arch, variant, config)
    log = paths.LOGS / f"build-{arch}-{variant}-{config}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    wanted = configure(tree, out, arch, variant, config, log)
    stats = out / STATS
    expected = expected_lines(out)
    counter = _LineCounter()
    run_logged(["make", "-C", str(tree), *make_args(arch, out), "all"],
               log, f"build {arch}-{variant}-{config}", expected_lines=expected,
               on_line=counter, env=build_env())
    # make's own syncconfig may have changed the .config since.
    problems = wanted.problems((out / ".config").read_text())
    if problems:
        (out / ".memlab-config").unlink(missing_ok=True)
        raise LabError(f"after the build: {problems}")
    # Remember the size of a full build, to show a percentage next time.
    if not stats.exists() or counter.lines > expected_lines(out, own_only=True):
        stats.write_text(json.dumps({"lines": counter.lines}))
    image = arches.image_path(arch, variant, config)
    if not image.exists():
        raise LabError(f"build finished but {image} is missing (see {log})")
    say(f"kernel image: {image}")
    return Built(arch, variant, config, out, image, tree, log)


# A full build's line count, kept in its O= directory.
STATS = ".memlab-build.json"


def expected_lines(out: Path, own_only: bool = False) -> int:
    """The output lines a full build in `out` printed, for a percentage:
    its own last full build's, else the largest of any other build of the
    same architecture (a first build then still shows how far it is);
    0 when none is known."""
    own = out / STATS
    candidates = [own] if own.exists() or own_only else \
        sorted(out.parent.glob(f"{out.name.split('-')[0]}-*/{STATS}"))
    lines = [json.loads(p.read_text()).get("lines", 0) for p in candidates if p.exists()]
    return max(lines, default=0)


class _LineCounter:
    def __init__(self) -> None:
        self.lines = 0

    def __call__(self, line: str) -> None:
        self.lines += 1
