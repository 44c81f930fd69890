"""What code a record in results/ measured: the project's commit, a hash of
the code of each series it ran (the product series, the stable fixes, the
lab patches), the kernel base and its Debian version, a hash of each
kernel's resolved .config, the host's CPU. Every record carries one; the
documents' captions compare it with today's series and say when a number
measured code that has changed since (docs/lab.md)."""
from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from . import arches, hostinfo, kernel_base, paths
from .runrecord import head_commit
from .series import Series

_DIFF = re.compile(r"^diff --git ", re.M)
_SIGNATURE = "\n-- \n"


def code_hash(series: Series) -> str:
    """The code of @series: every patch's diff, in order, without its
    message or dates, so that a reworded commit keeps the hash."""
    h = hashlib.sha256()
    for patch in series.patches():
        text = patch.read_text(errors="replace")
        start = _DIFF.search(text)
        if start:
            h.update(text[start.start():].split(_SIGNATURE)[0].encode())
    return h.hexdigest()[:12]


def series_hashes(base: kernel_base.KernelBase | None = None) -> dict[str, str]:
    """The code hashes of @base's series (None: the base in use)."""
    base = base or kernel_base.current()
    return {"product": code_hash(Series(base.series)),
            "stable": code_hash(Series(base.stable_series)),
            "lab": code_hash(Series(base.lab_series))}


def config_hash(arch: str, variant: str, config: str) -> str:
    """The resolved .config of a built kernel, without its comments (the
    date and compiler line kconfig writes); "" when none was built."""
    dotconfig = paths.out_dir(arch, variant, config) / ".config"
    if not dotconfig.exists():
        return ""
    lines = [ln for ln in dotconfig.read_text().splitlines() if ln.startswith("CONFIG_")]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:12]


@dataclass
class Provenance:
    commit: str
    series: dict[str, str]
    base: str                   # the kernel base and its Debian version
    host_cpu: str
    configs: dict[str, str] = field(default_factory=dict)   # "ARCH-VARIANT-CONFIG": hash

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: dict[str, Any] | None) -> Provenance | None:
        if not data:
            return None
        return Provenance(data["commit"], dict(data["series"]), data["base"],
                          data["host_cpu"], dict(data.get("configs", {})))


def now(kernels: Iterable[tuple[str, str, str]] = ()) -> Provenance:
    """Today's provenance, with the .config of each (arch, variant, config)
    in @kernels that was built."""
    base = kernel_base.current()
    configs = {f"{a}-{v}-{c}": h for a, v, c in kernels if (h := config_hash(a, v, c))}
    return Provenance(head_commit(), series_hashes(), f"{base.name} {base.version}",
                      hostinfo.cpu_detail(), configs)


def guest_kernels(configs: Iterable[str]) -> list[tuple[str, str, str]]:
    """The base and patched kernels of @configs on the guests' architecture."""
    return [(arches.GUEST_ARCH, v, c) for c in sorted(set(configs)) for v in ("base", "patched")]


def state(recorded: dict[str, Any] | None) -> str:
    """How the code a record measured compares with today's: the series
    hashes and "current", or "STALE" and what changed since (the product
    series or the lab patches), or "provenance not recorded" for a record
    older than provenance."""
    prov = Provenance.from_json(recorded)
    if prov is None:
        return "provenance not recorded"
    # A record names its base first ("7.2 7.2.13-1"): compare with that one's series.
    recorded_base = kernel_base.BASES.get(prov.base.split()[0]) if prov.base else None
    today = series_hashes(recorded_base)
    changed = [f"{layer} series {prov.series.get(layer, '?')} -> {today[layer]}"
               for layer in ("product", "lab") if prov.series.get(layer) != today[layer]]
    if changed:
        return "STALE: the code changed since (" + ", ".join(changed) + ")"
    return f"series {prov.series['product']}, lab {prov.series['lab']}: current"
