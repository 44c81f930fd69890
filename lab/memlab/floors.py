"""The lab's floors, from the ground up: every module's place. A module
imports only from its own floor or from those below, and the modules of a
floor import one another without a cycle (lab/tests/test_floors.py holds
every import to this); docs/lab.md draws the map from it."""
from __future__ import annotations

FLOORS: dict[str, tuple[str, ...]] = {
    # Running commands, paths, the host, Debian packages and the venv, the
    # records of runs and results, the postings' figures.
    "ground": ("paths", "runner", "hostinfo", "deps", "runrecord", "results", "postings",
               "floors"),
    # The kernel: its bases and Debian's archive, the trees and series, the
    # architectures and configs, builds, checkpatch, Debian packages.
    "kernel": ("kernel_base", "archive", "sources", "series", "arches", "kconfig",
               "kernel_tree", "provenance", "build", "checkpatch", "uploads", "package"),
    # The machines: guests and their consoles, the accelerator, KUnit boots,
    # the selftests, a user's waits, the scenarios and their verdicts, the
    # Debian image.
    "machines": ("console", "monitor", "selftests", "guest", "accel", "kunit_runner",
                 "switches", "waits", "checks", "scenario", "catalog", "debian_image"),
    # The verbs: what a command does, and the grammar of the command line.
    "verbs": ("report", "native", "matrix", "bench", "testcmd", "ci", "demo", "commands"),
    # The documents: their figures, tables and plots, and their writing.
    "documents": ("figures", "tables", "plot", "documents"),
    # The command line on top.
    "command line": ("cli",),
}


def floor_of(module: str) -> int:
    """The floor of @module, 0 for the ground; -1 for none."""
    return next((n for n, mods in enumerate(FLOORS.values()) if module in mods), -1)
