"""The public postings the documents quote, and the figures each
measured, and where (lab/data/postings.json): what a bench row is
printed beside. Quoted, never reproduced by the lab."""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass

from . import paths
from .runner import LabError

DATA = paths.REPO / "lab" / "data" / "postings.json"


@dataclass(frozen=True)
class Posting:
    key: str
    list: str
    subject: str
    date: str
    base: str

    def cite(self) -> str:
        return f"{self.list}, {self.date}: {self.subject}"


@dataclass(frozen=True)
class Reference:
    """A posting's measurement of what a bench row measures."""
    what: str
    base: float
    patched: float
    unit: str
    where: str
    posting: Posting

    @property
    def ratio(self) -> float:
        return self.patched / self.base

    def __str__(self) -> str:
        return f"{self.what}: {self.base:g} -> {self.patched:g} {self.unit} ({self.ratio:.3f})"


@functools.cache
def _load() -> tuple[dict[str, Posting], dict[str, Reference]]:
    try:
        data = json.loads(DATA.read_text())
        posts = {k: Posting(k, **v) for k, v in data["postings"].items()}
        figures = {row: Reference(f["what"], float(f["base"]), float(f["patched"]), f["unit"],
                                  f["where"], posts[f["posting"]])
                   for row, f in data["figures"].items()}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise LabError(f"{DATA}: not the postings' figures ({type(e).__name__}: {e})") from None
    return posts, figures


def figure(row: str) -> Reference | None:
    """The posted figure beside bench row @row, if a posting measured it."""
    return _load()[1].get(row)


def postings() -> dict[str, Posting]:
    return _load()[0]
