"""A kernel base is one row of kernel_base.py: a second row (a throw-away
one here) moves everything that depends on the base, and nothing else in
the lab names a version."""
import re
from pathlib import Path

import pytest

from memlab import (commands, figures, kernel_base, kernel_tree, package, paths, provenance,
                    sources, uploads)
from memlab.series import apply_command

MAINLINE = kernel_base.KernelBase("7.2", "7.2.13-1", ("sid",), "sid", "7.2",
                                  ("the template init of ZONE_DEVICE memmaps",))


@pytest.fixture
def second_base(monkeypatch):
    monkeypatch.setitem(kernel_base.BASES, "7.2", MAINLINE)
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
    assert uploads.series_patches() == []      # nothing written for it yet
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
