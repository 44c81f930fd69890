"""Debian's uploads of the kernel base: the newest one its suites serve,
and whether the series (with the stable fixes) applies to that upload's
pristine tree, so that a move of Debian's is seen the day it happens. The
check unpacks only the files the patches touch and applies them in order
(`git apply`, outside any repository); the pin moves in kernel_base.py,
with a green run. Its last outcome is kept in results/uploads.json for the
documents."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from . import deps, kernel_base, kernel_tree, paths, provenance, sources
from .runner import LabError, run_quiet
from .series import patch_subject

RECORD = paths.RESULTS / "uploads.json"
_DIFF_PATH = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.M)


@dataclass(frozen=True)
class Uploads:
    date: str
    package: str
    pinned: str
    newest: str
    suites: list[str]
    applies: bool | None        # the series on the newest; None: it is the pin
    stops_at: str = ""          # the patch that did not apply, and why
    provenance: dict[str, Any] | None = None

    @property
    def moved(self) -> bool:
        return self.newest != self.pinned

    def summary(self) -> str:
        if not self.moved:
            return f"{self.package} {self.pinned} (pinned) is the newest Debian serves"
        verdict = "the series applies to it" if self.applies else \
            f"the series does NOT apply to it: {self.stops_at}"
        return (f"Debian serves {self.package} {self.newest}, newer than the pinned "
                f"{self.pinned}: {verdict}")

    def write(self) -> Path:
        RECORD.parent.mkdir(parents=True, exist_ok=True)
        RECORD.write_text(json.dumps(asdict(self), indent=1) + "\n")
        return RECORD

    @classmethod
    def load(cls) -> "Uploads":
        try:
            return cls(**json.loads(RECORD.read_text()))
        except (OSError, ValueError, TypeError) as e:
            raise LabError(f"{RECORD}: not a record of Debian's uploads ({e})") from None


def series_patches() -> list[Path]:
    """What an operator applies: the product series, then the stable fixes."""
    return kernel_tree.product_series().patches() + kernel_tree.stable_series().patches()


def touched_files(patches: list[Path]) -> list[str]:
    files: set[str] = set()
    for patch in patches:
        for a, b in _DIFF_PATH.findall(patch.read_text(errors="replace")):
            files |= {a, b}
    return sorted(files)


def applies(tarball: Path, root: str, patches: list[Path]) -> str:
    """Apply @patches in order to the files they touch, unpacked from
    @tarball's directory @root: "" when all apply, else the first that
    does not and why."""
    with tempfile.TemporaryDirectory(prefix="memlab-uploads-") as tmp:
        top = Path(tmp)
        members = [f"{root}/{f}" for f in touched_files(patches)]
        # Members the tree lacks are files a patch creates: tar names them
        # and goes on with the rest.
        subprocess.run(["tar", "-xJf", str(tarball), "-C", tmp, *members],
                       capture_output=True, check=False)
        tree = top / root
        tree.mkdir(exist_ok=True)
        for patch in patches:
            res = run_quiet(["git", "apply", "--whitespace=nowarn", str(patch)], cwd=tree,
                            check=False)
            if res.returncode != 0:
                why = (res.stderr or res.stdout).strip().splitlines()
                return f"{patch.name} ({patch_subject(patch)}): {why[0] if why else '?'}"
    return ""


def check() -> Uploads:
    """The newest upload Debian serves of the base, and whether the series
    applies to it; recorded in results/uploads.json."""
    base = kernel_base.current()
    archive = sources.archive()
    newest = archive.newest(base.package)
    applied: bool | None = None
    stops_at = ""
    if newest != base.version:
        deps.ensure("source")
        tarball = base.tarball(archive.unpacked(base.package, newest))
        stops_at = applies(tarball, base.package, series_patches())
        applied = not stops_at
        # Only the pinned upload stays unpacked: the newest goes when
        # checked (it is downloaded again when it moves the pin).
        shutil.rmtree(tarball.parents[2], ignore_errors=True)
    record = Uploads(date=time.strftime("%Y-%m-%d %H:%M:%S %Z"), package=base.package,
                     pinned=base.version, newest=newest, suites=list(base.suites),
                     applies=applied, stops_at=stops_at,
                     provenance=provenance.now().to_json())
    record.write()
    return record
