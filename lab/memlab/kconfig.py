"""Kconfig fragments: parse, merge into a .config, verify what survived.

A fragment is a .config excerpt: `CONFIG_FOO=y`, `CONFIG_BAR="x"`, or
`# CONFIG_BAZ is not set`. A line `#include other` pulls in another fragment
of configs/ first, so `debug` can build on `lab`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from . import arches, paths
from .runner import LabError

_SET = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_UNSET = re.compile(r"^# (CONFIG_[A-Za-z0-9_]+) is not set$")

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
    exist in the patched tree only).
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
    for qualifier in (arch, variant):
        specific = paths.CONFIGS / f"{name}.{qualifier}.config"
        if specific.exists():
            opts.update(parse(specific.read_text()))
    return opts


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
