"""The compile matrix: diagnostics compared without line numbers, a target
fails on a new warning or any error of the series' build."""
import pytest

from memlab import cli, matrix
from memlab.runner import LabError

BASE_LOG = """\
  CC      mm/page_alloc.o
../mm/page_alloc.c:1200:5: warning: no previous prototype for 'foo' [-Wmissing-prototypes]
"""
SERIES_LOG = """\
../mm/page_alloc.c:1210:5: warning: no previous prototype for 'foo' [-Wmissing-prototypes]
/work/x/build/trees/matrix-series/mm/mm_init.c:1081:62: error: 'PAGES_PER_SECTION' undeclared (first use in this function)
../mm/mm_init.c:900:13: warning: 'memmap_use_template' defined but not used [-Wunused-function]
"""


def test_moved_lines_are_the_same_warning_and_new_ones_are_found():
    new = sorted(matrix.diagnostics(SERIES_LOG) - matrix.diagnostics(BASE_LOG))
    assert new == [
        "mm/mm_init.c: error: 'PAGES_PER_SECTION' undeclared (first use in this function)",
        "mm/mm_init.c: warning: 'memmap_use_template' defined but not used "
        "[-Wunused-function]"]


def _fake_builds(monkeypatch, logs):
    monkeypatch.setattr(matrix.deps, "apt_install", lambda pkgs: None)
    monkeypatch.setattr(matrix.kernel_tree, "checkout", lambda name, rev: name)
    monkeypatch.setattr(matrix, "build_variant",
                        lambda t, variant, tree: logs[variant])


def test_a_new_warning_fails_the_target(monkeypatch):
    _fake_builds(monkeypatch, {"base": (0, BASE_LOG), "series": (0, BASE_LOG + SERIES_LOG)})
    res = matrix.check_target(matrix.TARGETS["alpha"])
    assert not res.ok and len(res.new) == 2


def test_a_failed_series_build_fails_even_without_diagnostics(monkeypatch):
    _fake_builds(monkeypatch, {"base": (0, BASE_LOG), "series": (2, BASE_LOG)})
    res = matrix.check_target(matrix.TARGETS["alpha"])
    assert not res.ok and "failed" in res.note


def test_the_same_warnings_pass(monkeypatch):
    _fake_builds(monkeypatch, {"base": (0, BASE_LOG), "series": (0, BASE_LOG)})
    assert matrix.check_target(matrix.TARGETS["alpha"]).ok


def test_a_pristine_build_that_fails_is_the_targets_fault(monkeypatch):
    _fake_builds(monkeypatch, {"base": (2, SERIES_LOG), "series": (0, "")})
    res = matrix.check_target(matrix.TARGETS["alpha"])
    assert not res.ok and "pristine tree does not build" in res.note


def test_the_matrix_covers_what_the_robot_would():
    names = set(matrix.TARGETS)
    assert {"alpha", "riscv64", "riscv64-nommu", "sparc64", "powerpc64le", "s390x",
            "mips64el", "parisc64", "m68k", "arm", "i386", "x86_64-allno",
            "x86_64-zone-device", "x86_64-hotplug-no-device"} <= names


def test_unknown_target_is_an_error(monkeypatch):
    monkeypatch.setattr(matrix.deps, "ensure", lambda *g: None)
    monkeypatch.setattr(matrix.kernel_tree, "has_tree", lambda: True)
    with pytest.raises(LabError, match="unknown matrix target"):
        matrix.run(["vax"])
    with pytest.raises(SystemExit):
        cli.parser().parse_args(["matrix", "--target", "vax"])


def test_a_prefix_that_adds_a_warning_is_named(monkeypatch):
    commits = {"c1": "mm: one", "c2": "mm: two"}

    def git(*args, **kwargs):
        if args[0] == "rev-list":
            return "c1\nc2"
        return commits[args[-1]]
    monkeypatch.setattr(matrix.deps, "ensure", lambda *g: None)
    monkeypatch.setattr(matrix.deps, "apt_install", lambda pkgs: None)
    monkeypatch.setattr(matrix.kernel_tree, "git", git)
    monkeypatch.setattr(matrix.kernel_tree, "checkout", lambda name, rev: rev)
    # The tree of c2 adds a warning for one target.
    monkeypatch.setattr(matrix, "build_variant", lambda t, variant, tree: (
        0, BASE_LOG + (SERIES_LOG.splitlines()[2] if tree == "c2" and
                       t.name == "x86_64-hotplug-no-device" else "")))
    results = matrix.run_prefixes()
    assert [(r.patch, r.subject, r.ok) for r in results] == [(1, "mm: one", True),
                                                              (2, "mm: two", False)]
    assert list(results[1].new) == ["x86_64-hotplug-no-device"]
