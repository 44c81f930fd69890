"""Where the lab keeps things."""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# The kernel base the lab works on when it is not the default one
# (kernel_base.py): the environment's MEMLAB_BASE, a base's name, or "".
# Such a base keeps its trees, builds, logs and results in a subdirectory
# of build/ and results/ named after it; what all bases share (the Debian
# archive's state, virtme-ng, the host's own facts) stays at the top.
BASE = os.environ.get("MEMLAB_BASE", "")


def of_base(root: Path, base: str | None = None) -> Path:
    """The directory of @base (None: the base in use) under @root."""
    base = BASE if base is None else base
    return root / base if base else root


def results_of(base: str | None = None) -> Path:
    """The results directory of @base (None: the base in use)."""
    return RESULTS if base is None or base == BASE else of_base(REPO / "results", base)


PATCHES = REPO / "patches"          # each kernel base's series (kernel_base.py)
CONFIGS = REPO / "configs"          # kconfig fragments
SCENARIOS = REPO / "scenarios"      # guest scripts
TEMPLATES = REPO / "lab" / "documents"   # the documents' templates (documents.py)
RESULTS = of_base(REPO / "results")

BUILD = REPO / "build"              # git-ignored: everything generated
BASE_BUILD = of_base(BUILD)         # what is generated from the base in use
KERNEL_TREE = BASE_BUILD / "linux"  # developers' work tree: base, product, lab
VARIANT_TREES = BASE_BUILD / "trees"    # clean checkouts used for variant builds
PRISTINE_TREE = VARIANT_TREES / "pristine"   # where the apply command is tried
OUT = BASE_BUILD / "out"            # O= build directories
LOGS = BASE_BUILD / "logs"
VENV = BUILD / "venv"               # virtme-ng lives here (PEP 668 safe)

# Refs in the kernel work tree. Branch WORK_BRANCH is base, then the
# product series (ending at branch PRODUCT_BRANCH), then the stable fixes
# (ending at STABLE_BRANCH), then the lab patches: the "patched" variant.
# Tag TAG_LAB is base with the same stable fixes and lab patches: the
# "base" variant. Both variants carry the same fixes and measurement aids.
TAG_BASE = "base"               # pristine Debian source
PRODUCT_BRANCH = "product"      # base + product series
STABLE_BRANCH = "stable"        # product + stable fixes
WORK_BRANCH = "memlab"          # stable + lab patches (checked out)
TAG_LAB = "lab"                 # base + stable fixes + lab patches


def out_dir(arch: str, variant: str, config: str) -> Path:
    return OUT / f"{arch}-{variant}-{config}"
