"""`memlab package`: Debian packages of the patched kernel, built as the
Debian Kernel Handbook builds a custom kernel: Debian's source (the pinned
linux-source) with the series and the stable fixes applied (no lab
patches), Debian's own configuration of one flavour (linux-config) with
its whole module set, `make bindeb-pkg`.

The packages install beside Debian's kernel and never replace it: the
kernel release carries "-memlab" (linux-image-6.12.118-memlab-cloud-amd64),
so Debian's kernel stays in the boot menu as the way back, and the package
version is Debian's with "+memlab<N>" appended, which sorts after it."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from . import build, deps, kconfig, kernel_base, kernel_tree, paths, provenance
from .runner import LabError, run_logged, say

# Debian's kernel flavours of amd64 the verb builds, by the name Debian's
# packages use: their configurations in linux-config.
FLAVOURS = {
    "cloud-amd64": "amd64_none_cloud-amd64",    # virtual machines
    "amd64": "amd64_none_amd64",                # every PC
}
DEFAULT_FLAVOUR = "cloud-amd64"
PACKAGES = paths.BUILD / "package"
# What the packaging needs beyond a kernel build: dpkg-buildpackage and
# debhelper (the package's debian/rules), rsync (its headers).
APT_PACKAGES = ["dpkg-dev", "debhelper", "rsync"]


@dataclass(frozen=True)
class Packages:
    flavour: str
    release: str            # the kernel release (uname -r)
    version: str            # the package version
    image: Path             # linux-image-RELEASE_VERSION_amd64.deb
    headers: Path

    @property
    def debs(self) -> list[Path]:
        return [self.image, self.headers]


def local_version(flavour: str) -> str:
    return f"-memlab-{flavour}"


def release(flavour: str) -> str:
    """The kernel release of the package: the base's upstream version (its
    Debian version without the revision), "-memlab", the flavour."""
    upstream = kernel_base.current().version.rsplit("-", 1)[0]
    return f"{upstream}{local_version(flavour)}"


def package_version(count: str | None = None) -> str:
    """Debian's version of the base with "+memlab<N>", N the project's
    commit count: after Debian's own package of that version, and after
    the packages of earlier commits."""
    if count is None:
        res = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=paths.REPO,
                             capture_output=True, text=True, check=False)
        count = res.stdout.strip() if res.returncode == 0 else "0"
    return f"{kernel_base.current().version}+memlab{count}"


def handbook_options(flavour: str) -> kconfig.Options:
    """What the build changes in Debian's configuration of @flavour, as the
    handbook does for a local build: a release name of its own, no debug
    info (no -dbg package; a shorter build), and the modules signed with a
    key made for the build, so that the kernel loads them without tainting
    itself (Debian's signing key stays Debian's)."""
    return {
        "CONFIG_LOCALVERSION": f'"{local_version(flavour)}"',
        "CONFIG_DEBUG_INFO_NONE": "y",
        "CONFIG_DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT": "n",
        "CONFIG_DEBUG_INFO_DWARF4": "n",
        "CONFIG_DEBUG_INFO_DWARF5": "n",
        "CONFIG_MODULE_SIG_ALL": "y",
        "CONFIG_MODULE_SIG_KEY": '"certs/signing_key.pem"',
        "CONFIG_SYSTEM_TRUSTED_KEYS": '""',
    }


def handbook_config(debian: str, flavour: str) -> str:
    return kconfig.merge(debian, handbook_options(flavour))


def make_variables(version: str) -> list[str]:
    """bindeb-pkg's variables: the package version, and -d for dpkg: the
    build dependencies name gcc-x86-64-linux-gnu, the cross compiler of
    other architectures' Debian, for the headers' programs; on amd64 the
    native gcc builds them, which dpkg cannot tell. LOCALVERSION is set,
    even empty, so that a git tree adds no "+" to the release."""
    return ["LOCALVERSION=", f"KDEB_PKGVERSION={version}", "DPKG_FLAGS=-d"]


def _scripts_config(name: str, value: str) -> str:
    """One option in the words of the kernel's scripts/config."""
    name = name.removeprefix("CONFIG_")
    if value.startswith('"'):
        return f"--set-str {name} {shlex.quote(value[1:-1])}"
    return f"--{'enable' if value == 'y' else 'disable'} {name}"


def by_hand(flavour: str) -> list[str]:
    """The shell commands that build the packages of @flavour without the
    lab, on a Debian machine, as root, from a checkout of the project."""
    base = kernel_base.current()
    tools = deps.APT_GROUPS["build"] + APT_PACKAGES + ["git"]
    config = " ".join(_scripts_config(name, value)
                      for name, value in handbook_options(flavour).items())
    return [
        # The pinned upload, not apt's candidate: the series is tried on it.
        f"apt-get install {base.package}={base.version} {base.config_package}={base.version} "
        + " ".join(t for t in tools if t != "ccache"),
        "memlab=$PWD; mkdir ../linux && cd ../linux",
        f"tar xaf /usr/src/{base.package}.tar.xz --strip-components=1",
        # -f: Debian's .gitignore ignores every top-level entry.
        "git init -q && git config user.name local && git config user.email root@localhost",
        "git add -A -f . && git commit -qm pristine",
        'git am --empty=drop "$memlab"/patches/0*.patch "$memlab"/patches/stable/0*.patch',
        f"xzcat /usr/src/{base.config_package}/config.{FLAVOURS[flavour]}.xz > .config",
        f"scripts/config {config}",
        "make olddefconfig",
        'n=$(git -C "$memlab" rev-list --count HEAD)',
        f'make -j"$(nproc)" {" ".join(make_variables(package_version("$n")))} bindeb-pkg',
    ]


def _debs(directory: Path, kind: str, rel: str, version: str) -> Path:
    deb = directory / f"linux-{kind}-{rel}_{version}_amd64.deb"
    if not deb.exists():
        raise LabError(f"make bindeb-pkg left no {deb.name} in {directory}")
    return deb


def build_packages(flavour: str = DEFAULT_FLAVOUR) -> Packages:
    """linux-image and linux-headers of the patched kernel for @flavour,
    in build/package/FLAVOUR/."""
    if flavour not in FLAVOURS:
        raise LabError(f"unknown flavour {flavour!r} (known: {', '.join(FLAVOURS)})")
    deps.ensure("build")
    deps.apt_install(APT_PACKAGES)
    if not kernel_tree.has_tree():
        kernel_tree.source()
    kernel_tree.check_layout()
    tree = kernel_tree.checkout("package", paths.STABLE_BRANCH)
    directory = PACKAGES / flavour
    out = directory / "obj"
    out.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.deb"):
        old.unlink()
    log = paths.LOGS / f"package-{flavour}.log"
    log.write_text("")
    start, before = time.monotonic(), build.ccache_stats()
    debian = build.debian_dotconfig(FLAVOURS[flavour], "x86_64")
    (out / ".config").write_text(handbook_config(debian, flavour))
    make = ["make", "-C", str(tree), *build.make_args("x86_64", out)]
    env = build.build_env()
    run_logged(make + ["olddefconfig"], log, f"configure: Debian's {flavour} config",
               env=env)
    dotconfig = kconfig.parse((out / ".config").read_text())
    if dotconfig.get("CONFIG_LOCALVERSION") != f'"{local_version(flavour)}"':
        raise LabError(f"the {flavour} config lost its release name (see {log})")
    version = package_version()
    rel = release(flavour)
    run_logged(make + make_variables(version) + ["bindeb-pkg"], log,
               f"make bindeb-pkg ({flavour}, {rel} {version})", env=env,
               expected_lines=build.expected_lines(out))
    built = Packages(flavour, rel, version, _debs(directory, "image", rel, version),
                     _debs(directory, "headers", rel, version))
    after = build.ccache_stats()
    record(built, time.monotonic() - start,
           {k: after.get(k, 0) - before.get(k, 0) for k in CCACHE_COUNTERS})
    # linux-libc-dev and the like: not the kernel's; left out of what ships.
    for extra in directory.glob("*.deb"):
        if extra not in built.debs:
            extra.unlink()
    say("packages: " + ", ".join(str(d.relative_to(paths.REPO)) for d in built.debs))
    return built


# The compiler cache's counters a build's record keeps: how cold it was.
CCACHE_COUNTERS = ("direct_cache_hit", "preprocessed_cache_hit", "cache_miss")
RECORDS = paths.RESULTS / "packages"


def record(built: Packages, seconds: float, ccache: dict[str, int]) -> Path:
    """The build's time and how much of it the compiler cache served, in
    results/packages/FLAVOUR.json."""
    hits = ccache["direct_cache_hit"] + ccache["preprocessed_cache_hit"]
    path = RECORDS / f"{built.flavour}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "flavour": built.flavour,
        "release": built.release, "version": built.version, "seconds": round(seconds),
        "compiler_cache": {"hits": hits, "misses": ccache["cache_miss"]},
        "cpus": os.cpu_count(),
        "provenance": provenance.now().to_json()}, indent=1) + "\n")
    return path


def built(flavour: str = DEFAULT_FLAVOUR) -> Packages:
    """The packages of @flavour the last `memlab package` made."""
    directory = PACKAGES / flavour
    rel = release(flavour)
    images = sorted(directory.glob(f"linux-image-{rel}_*_amd64.deb"))
    if not images:
        raise LabError(f"no package of {flavour} in {directory}: run "
                       f"`memlab package --flavour {flavour}`")
    version = images[-1].name.split("_")[1]
    return Packages(flavour, rel, version, images[-1],
                    _debs(directory, "headers", rel, version))
