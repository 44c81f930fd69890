"""A kernel base is one row of kernel_base.py: the second row (mainline)
moves everything that depends on the base, and nothing else in the lab
names a version. MEMLAB_BASE picks a base other than the default, with
build and results directories of its own."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memlab import (commands, figures, kernel_base, kernel_tree, package, paths, provenance,
                    sources, uploads)
from memlab.runner import LabError
from memlab.series import apply_command

MAINLINE = kernel_base.BASES["7.2"]


@pytest.fixture
def second_base(monkeypatch):
    monkeypatch.setattr(kernel_base, "DEFAULT", "7.2")
    monkeypatch.delenv("MEMLAB_SOURCE_VERSION", raising=False)
    return MAINLINE


def test_the_series_and_its_layers_live_where_the_row_says(second_base):
    dirs = [layer.directory for layer in kernel_tree.layers()]
    assert dirs == [paths.PATCHES / "7.2", paths.PATCHES / "7.2" / "stable",
                    paths.PATCHES / "7.2" / "lab"]
    assert kernel_tree.layers()[1].subject_prefix == "PATCH 7.2.y"
    assert apply_command(kernel_tree.product_series().directory, paths.REPO) == \
        "git am --empty=drop /path/to/memlab/patches/7.2/0*.patch"
    assert {p.parent for p in uploads.series_patches()} <= {paths.PATCHES / "7.2",
                                                            paths.PATCHES / "7.2" / "stable"}
    assert set(provenance.series_hashes()) == {"product", "stable", "lab"}


def test_packages_archive_and_documents_follow_the_row(second_base):
    assert package.release("cloud-amd64") == "7.2.13-memlab-cloud-amd64"
    assert package.package_version().startswith("7.2.13-1+memlab")
    assert sources.archive().suites == ("sid",)
    assert second_base.release_suites == ("sid",)
    assert figures.value("base:version") == "7.2.13-1"
    assert figures.value("base:release") == "Debian unstable sid"
    assert "Linux 7.2" in commands.parser().description


def test_no_module_but_the_bases_names_a_version():
    versioned = re.compile(r"""["'][^"'\n]*\b\d\.\d{1,2}(\.\d+)?(-\d+)?\b[^"'\n]*["']""")
    offenders = []
    for source in sorted((Path(paths.REPO) / "lab" / "memlab").glob("*.py")):
        if source.stem == "kernel_base":
            continue
        for n, line in enumerate(source.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if versioned.search(code) and "re.compile" not in code and "==" not in code:
                offenders.append(f"{source.name}:{n}: {line.strip()}")
    assert offenders == []


def where_the_lab_keeps(base: str) -> list[str]:
    """paths' directories in a fresh interpreter whose MEMLAB_BASE is @base."""
    env = dict(os.environ, MEMLAB_BASE=base)
    code = ("from memlab import paths; print(paths.KERNEL_TREE, paths.OUT, paths.LOGS, "
            "paths.RESULTS, paths.VENV, paths.PATCHES)")
    out = subprocess.run([sys.executable, "-c", code], cwd=paths.REPO / "lab", env=env,
                         capture_output=True, text=True, check=True).stdout
    return [str(Path(p).relative_to(paths.REPO)) for p in out.split()]


def test_another_base_keeps_its_trees_and_results_apart():
    assert where_the_lab_keeps("7.2") == ["build/7.2/linux", "build/7.2/out", "build/7.2/logs",
                                          "results/7.2", "build/venv", "patches"]
    assert where_the_lab_keeps("") == ["build/linux", "build/out", "build/logs",
                                       "results", "build/venv", "patches"]


def test_memlab_base_names_a_known_base_other_than_the_default(monkeypatch):
    monkeypatch.delenv("MEMLAB_SOURCE_VERSION", raising=False)
    monkeypatch.setattr(paths, "BASE", "7.2")
    assert kernel_base.current() == MAINLINE
    monkeypatch.setattr(paths, "BASE", "7.9")
    with pytest.raises(LabError, match="no such kernel base.*known: 6.12, 7.2"):
        kernel_base.current()
    monkeypatch.setattr(paths, "BASE", kernel_base.DEFAULT)
    with pytest.raises(LabError, match="is the default base: leave MEMLAB_BASE unset"):
        kernel_base.current()
