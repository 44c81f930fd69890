"""Kconfig fragments: parse, merge into a .config, verify what survived.

A fragment is a .config excerpt: `CONFIG_FOO=y`, `CONFIG_BAR="x"`, or
`# CONFIG_BAZ is not set`. A line `#include other` pulls in another fragment
of configs/ first, so `debug` can build on `lab`.

A fragment starts from tinyconfig, unless it has a line `#start
debian:FLAVOUR`: then from Debian's own configuration of that kernel
flavour, with every module the fragment does not ask for left out, and
every option the series' work depends on (DEBIAN_KEPT) as Debian has it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from . import arches, paths
from .runner import LabError

_SET = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_UNSET = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set$")
_START = re.compile(r"^#start debian:(?P<flavour>[A-Za-z0-9_-]+)$")
_KCONFIG_SYMBOL = re.compile(r"^\s*(?:menu)?config\s+([A-Za-z0-9_]+)\s*(?:#.*)?$")
_KCONFIG_PROMPT = re.compile(r"^\s*(?:(?:bool|tristate|int|hex|string)\s+|prompt\s+)[\"']")
# What ends the attributes of an option (its help text comes last).
_KCONFIG_BLOCK_END = re.compile(r"^\s*(?:(?:menu)?config|choice|endchoice|menu|endmenu|if|endif|"
                                r"source|comment|help)\b")

# What a config starting from Debian's must keep as Debian has it: every
# option with a prompt in these Kconfig files of the tree (those without
# one follow the drivers that select them), and these options from
# elsewhere, which decide what the series' code paths meet.
DEBIAN_KEPT_KCONFIGS = ("mm/Kconfig", "mm/Kconfig.debug")
DEBIAN_KEPT = ("CONFIG_NUMA", "CONFIG_MEMCG", "CONFIG_MHP_MEMMAP_ON_MEMORY",
               "CONFIG_INIT_ON_ALLOC_DEFAULT_ON", "CONFIG_INIT_ON_FREE_DEFAULT_ON",
               "CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP",
               "CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP_DEFAULT_ON", "CONFIG_CXL_BUS",
               "CONFIG_KASAN", "CONFIG_KMSAN", "CONFIG_PREEMPT", "CONFIG_PREEMPT_VOLUNTARY",
               "CONFIG_PREEMPT_DYNAMIC")

Options = dict[str, str]   # name -> value; "n" means "is not set"


def parse(text: str) -> Options:
    opts: Options = {}
    for raw in text.splitlines():
        line = raw.strip()
        m = _SET.match(line)
        if m:
            opts[m.group(1)] = m.group(2)
            continue
        m = _UNSET.match(line)
        if m:
            opts[m.group(1)] = "n"
    return opts


def configs() -> list[str]:
    """Every config of configs/: NAME.config; NAME.ARCH.config and
    NAME.VARIANT.config qualify one."""
    return sorted(p.stem for p in paths.CONFIGS.glob("*.config") if "." not in p.stem)


def fragment_path(name: str) -> Path:
    path = paths.CONFIGS / f"{name}.config"
    if not path.exists():
        known = sorted(p.stem for p in paths.CONFIGS.glob("*.config"))
        raise LabError(f"unknown config {name!r}: no {path} (known: {', '.join(known)})")
    return path


def load_fragment(name: str, arch: str = arches.GUEST_ARCH, variant: str = "patched",
                  _seen: tuple[str, ...] = ()) -> Options:
    """A fragment with its #includes resolved (included first, then own lines).

    `configs/NAME.ARCH.config` and `configs/NAME.VARIANT.config`, when
    present, are applied after NAME: options for one architecture, and
    options whose symbols only one variant has (the series' KUnit suites
    exist in the patched tree only). A base other than the default may
    qualify each of them in its own directory, `configs/BASE/`, applied
    last, and qualify every config of one variant there
    (`configs/BASE/VARIANT.config`): what its series has not (yet) got, say.
    """
    if name in _seen:
        raise LabError(f"config include loop: {' -> '.join(_seen + (name,))}")
    opts: Options = {}
    text = fragment_path(name).read_text()
    for raw in text.splitlines():
        if raw.startswith("#include "):
            opts.update(load_fragment(raw.split(None, 1)[1].strip(), arch, variant,
                                      _seen + (name,)))
    opts.update(parse(text))
    specifics = [paths.CONFIGS / f"{name}.{q}.config" for q in (arch, variant)]
    if paths.BASE:
        specifics += [paths.of_base(paths.CONFIGS) / f"{q}.config"
                      for q in (variant, name, f"{name}.{arch}", f"{name}.{variant}")]
    for specific in specifics:
        if specific.exists():
            opts.update(parse(specific.read_text()))
    return opts


def configs_with(configs: tuple[str, ...], option: str) -> tuple[str, ...]:
    """Of @configs, those whose fragment builds @option in (=y)."""
    return tuple(c for c in configs if load_fragment(c).get(option) == "y")


def debian_flavour(name: str) -> str | None:
    """The Debian kernel flavour fragment @name starts from (its own
    `#start` line); None: it starts from tinyconfig."""
    for raw in fragment_path(name).read_text().splitlines():
        m = _START.match(raw.strip())
        if m:
            return m.group("flavour")
    return None


def modules_left_out(debian: str, opts: Options) -> str:
    """Debian's .config with each module @opts does not ask for left out:
    Debian builds thousands, and a guest loads none of them."""
    lines = []
    for raw in debian.splitlines():
        m = _SET.match(raw)
        if m and m.group(2) == "m" and m.group(1) not in opts:
            lines.append(f"# {m.group(1)} is not set")
        else:
            lines.append(raw)
    return "\n".join(lines) + "\n"


def prompted_symbols(kconfig_text: str) -> set[str]:
    """The options a Kconfig file defines with a prompt: those a config
    sets, rather than a driver's `select`."""
    found: set[str] = set()
    symbol = None
    for line in kconfig_text.splitlines():
        m = _KCONFIG_SYMBOL.match(line)
        if m:
            symbol = m.group(1)
        elif _KCONFIG_BLOCK_END.match(line):
            symbol = None
        elif symbol and _KCONFIG_PROMPT.match(line):
            found.add("CONFIG_" + symbol)
    return found


def kept_symbols(tree: Path) -> set[str]:
    """DEBIAN_KEPT and every option with a prompt of DEBIAN_KEPT_KCONFIGS
    in @tree."""
    kept = set(DEBIAN_KEPT)
    for rel in DEBIAN_KEPT_KCONFIGS:
        kept |= prompted_symbols((tree / rel).read_text())
    return kept


def debian_changes(debian: str, final_dotconfig: str, kept: set[str]) -> list[Mismatch]:
    """Of @kept, the options the final .config has otherwise than Debian's.
    A module of Debian's may be left out or built in; nothing else changes.
    An option Debian's config does not list (one the series adds) is not
    Debian's to keep."""
    want, got = parse(debian), parse(final_dotconfig)
    bad = []
    for name in sorted(kept & want.keys()):
        w, g = want[name], got.get(name, "n")
        if g != w and w != "m":
            bad.append(Mismatch(name, w, g))
    return bad


def render(opts: Options) -> str:
    lines = []
    for name, value in opts.items():
        lines.append(f"# {name} is not set" if value == "n" else f"{name}={value}")
    return "\n".join(lines) + "\n"


def merge(dotconfig: str, opts: Options) -> str:
    """dotconfig with every requested symbol replaced by its requested value."""
    kept = [line for line in dotconfig.splitlines()
            if not (( m := _SET.match(line) or _UNSET.match(line)) and m.group(1) in opts)]
    return "\n".join(kept) + "\n" + render(opts)


@dataclass(frozen=True)
class Mismatch:
    name: str
    wanted: str
    got: str

    def __str__(self) -> str:
        got = "not set" if self.got == "n" else self.got
        return f"{self.name}: wanted {self.wanted}, got {got}"


def verify(requested: Options, final_dotconfig: str) -> list[Mismatch]:
    """Options that olddefconfig dropped or changed (missing deps, typos)."""
    final = parse(final_dotconfig)
    bad = []
    for name, wanted in requested.items():
        got = final.get(name, "n")
        if got != wanted:
            bad.append(Mismatch(name, wanted, got))
    return bad
