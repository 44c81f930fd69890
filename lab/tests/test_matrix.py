"""The compile matrix: diagnostics compared without line numbers, a target
fails on a new warning or any error of the series' build."""
from pathlib import Path

import pytest

from memlab import cli, commands, matrix, tables
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


SPARSE_LOG = """\
  CHECK   ../mm/mm_init.c
../mm/mm_init.c:1093:31: warning: incorrect type in initializer (different address spaces)
../mm/mm_init.c:1093:31:    expected void [noderef] __iomem *where
../mm/mm_init.c:1093:31:    got struct page *page
"""


def test_a_sparse_warning_is_a_diagnostic_and_its_detail_lines_are_not():
    assert matrix.diagnostics(SPARSE_LOG) == {
        "mm/mm_init.c: warning: incorrect type in initializer (different address spaces)"}


def test_the_robots_x86_64_and_arm64_builds_run_sparse_and_are_built_with_clang_too():
    for name in ("x86_64-zone-device", "x86_64-hotplug-no-device", "arm64"):
        gcc, clang = matrix.TARGETS[name], matrix.TARGETS[f"{name}-clang"]
        assert "C=1" in gcc.make_args(Path("/o")) and "sparse" in gcc.needs()
        args = clang.make_args(Path("/o"))
        assert f"LLVM=-{matrix.CLANG_VERSION}" in args and "C=1" not in args
        assert not any(a.startswith("CROSS_COMPILE=") for a in args)
        assert f"clang-{matrix.CLANG_VERSION}" in clang.needs()
        assert (clang.options, clang.series_options, clang.dirs) == \
            (gcc.options, gcc.series_options, gcc.dirs)
    assert "C=1" not in matrix.TARGETS["alpha"].make_args(Path("/o"))


def test_unknown_target_is_an_error(monkeypatch):
    monkeypatch.setattr(matrix.deps, "ensure", lambda *g: None)
    monkeypatch.setattr(matrix.kernel_tree, "has_tree", lambda: True)
    with pytest.raises(LabError, match="unknown matrix target"):
        matrix.run(["vax"])
    with pytest.raises(SystemExit):
        commands.parser().parse_args(["matrix", "--target", "vax"])


def _prefix_run(monkeypatch, tmp_path, warns_in: str, tail: list[str]):
    """run_prefixes() over commits c1, c2 with the tree @warns_in adding a
    warning for one target; @tail: the clearing tail; recorded in
    @tmp_path/prefixes.json."""
    commits = {"c1": "mm: one", "c2": "mm: two"}

    def git(*args, **kwargs):
        if args[0] == "rev-list":
            return "c1\nc2"
        return commits[args[-1]]
    monkeypatch.setattr(matrix.deps, "ensure", lambda *g: None)
    monkeypatch.setattr(matrix.deps, "apt_install", lambda pkgs: None)
    monkeypatch.setattr(matrix.kernel_tree, "has_tree", lambda: True)
    monkeypatch.setattr(matrix.kernel_tree, "git", git)
    monkeypatch.setattr(matrix.kernel_tree, "checkout", lambda name, rev: rev)
    monkeypatch.setattr(matrix, "series_sources", lambda: ["mm/mm_init.c"])
    monkeypatch.setattr(matrix, "clearing_tail", lambda commits: tail)
    monkeypatch.setattr(matrix, "tail_tree", lambda commits: "tail")
    monkeypatch.setattr(matrix, "PREFIX_RESULTS", tmp_path / "prefixes.json")
    monkeypatch.setattr(matrix, "_run_facts", lambda: {"date": "today", "commit": "abc"})
    monkeypatch.setattr(matrix, "build_variant", lambda t, variant, tree, touched: (
        0, BASE_LOG + (SERIES_LOG.splitlines()[2] if tree == warns_in and
                       t.name == "x86_64-hotplug-no-device" else "")))
    return matrix.run_prefixes()


def test_a_prefix_that_adds_a_warning_is_named(monkeypatch, tmp_path):
    results = _prefix_run(monkeypatch, tmp_path, "c2", ["c2"])
    assert [(r.patch, r.subject, r.ok) for r in results][:2] == [("1", "mm: one", True),
                                                                  ("2", "mm: two", False)]
    assert list(results[1].new) == ["x86_64-hotplug-no-device"]


def test_the_prefixes_are_recorded_and_the_proof_table_names_the_unclean(monkeypatch,
                                                                        tmp_path):
    results = _prefix_run(monkeypatch, tmp_path, "c2", ["c2"])
    recorded_run = matrix.load_prefixes(tmp_path / "prefixes.json")
    facts, recorded = recorded_run
    assert recorded == results and facts["commit"] == "abc"
    assert tables._prefixes_cell(recorded_run, "`x`") == "2 of 3 clean; not clean: 2"
    assert "and the clearing patches alone" in tables._prefixes_label(recorded_run)
    assert tables._prefixes_cell(matrix.load_prefixes(tmp_path / "none.json"), "`x`") == \
        "not recorded (`x`)"


def test_the_clearing_tail_alone_is_built_too(monkeypatch, tmp_path):
    results = _prefix_run(monkeypatch, tmp_path, "tail", ["c2"])
    assert [(r.patch, r.ok) for r in results] == [("1", True), ("2", True), ("tail", False)]
    assert "alone" in results[2].subject


def test_the_clearing_tail_follows_the_last_memmap_patch(monkeypatch):
    # rev-list of the commits touching mm/mm_init.c, newest first
    monkeypatch.setattr(matrix.kernel_tree, "git", lambda *args, **kwargs: "c2\nc1")
    assert matrix.clearing_tail(["c1", "c2", "c3", "c4"]) == ["c3", "c4"]


def test_a_series_without_a_clearing_tail_builds_its_prefixes_only(monkeypatch, tmp_path):
    monkeypatch.setattr(matrix.kernel_tree, "git", lambda *args, **kwargs: "c3\nc1")
    assert matrix.clearing_tail(["c1", "c2", "c3"]) == []
    results = _prefix_run(monkeypatch, tmp_path, "none", [])
    assert [(r.patch, r.ok) for r in results] == [("1", True), ("2", True)]
    assert tables._prefixes_label(matrix.load_prefixes(tmp_path / "prefixes.json")) == \
        "every prefix: W=1, x86-64 and arm64"


def test_only_the_series_objects_that_kbuild_builds(tmp_path):
    for name, text in (("mm/Makefile", "mmu-$(CONFIG_MMU) := highmem.o \\\n\tmemory.o\n"
                                       "obj-y += mm_init.o\n"
                                       "obj-$(CONFIG_ZONE_DEVICE) += memremap.o\n"
                                       "obj-$(CONFIG_KMSAN) += kmsan/\n"),
                       ("mm/kmsan/Makefile", "obj-y := init.o\n"), ("mm/kmsan/init.c", ""),
                       ("mm/mm_init.c", ""), ("mm/mm_init_kunit.c", ""), ("mm/memory.c", ""),
                       ("mm/memremap.c", ""),
                       ("arch/x86/lib/Makefile", "lib-y += clear_page_64.o\n"),
                       ("arch/x86/lib/clear_page_64.S", "")):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    touched = ("mm/kmsan/init.c mm/mm_init.c mm/mm_init_kunit.c mm/memory.c mm/gone.c "
               "mm/memremap.c include/linux/mm.h arch/x86/lib/clear_page_64.S").split()
    x86 = matrix.TARGETS["x86_64-zone-device"]
    assert matrix.series_objects(x86, tmp_path, touched, {"CONFIG_MMU": "y"}) \
        == ["mm/mm_init.o", "mm/memory.o", "arch/x86/lib/clear_page_64.o"]
    assert matrix.series_objects(x86, tmp_path, touched, {"CONFIG_MMU": "y",
                                 "CONFIG_ZONE_DEVICE": "y", "CONFIG_KMSAN": "y"}) \
        == ["mm/kmsan/init.o", "mm/mm_init.o", "mm/memory.o", "mm/memremap.o",
            "arch/x86/lib/clear_page_64.o"]
    arm64 = matrix.TARGETS["arm64"]
    assert matrix.series_objects(arm64, tmp_path, touched, {"CONFIG_MMU": "y"}) \
        == ["mm/mm_init.o", "mm/memory.o"]


def test_architecture_objects_are_built_in_one_job():
    assert matrix.goal_groups(["mm/mm_init.o", "arch/x86/lib/clear_page_64.o", "mm/memory.o"]) \
        == [["mm/mm_init.o", "mm/memory.o"], ["-j1", "arch/x86/lib/clear_page_64.o"]]
    assert matrix.goal_groups(["mm/mm_init.o"]) == [["mm/mm_init.o"]]


def test_a_prefix_is_configured_again_only_when_its_config_inputs_change(monkeypatch, tmp_path):
    monkeypatch.setattr(matrix.paths, "OUT", tmp_path / "out")
    monkeypatch.setattr(matrix.paths, "LOGS", tmp_path / "logs")
    kconfigs = {"files": "100644 aaa 0\tmm/Kconfig"}
    monkeypatch.setattr(matrix.kernel_tree, "git",
                        lambda *args, **kwargs: kconfigs["files"] if "ls-files" in args else "")
    configured = []

    def configure(t, variant, make, out, opts, log, env):
        configured.append(variant)
        (out / ".config").write_text("CONFIG_MMU=y\n")
    monkeypatch.setattr(matrix, "configure", configure)
    monkeypatch.setattr(matrix, "run_logged", lambda *args, **kwargs: 0)
    t = matrix.TARGETS["arm64"]
    for _ in range(2):
        matrix.build_variant(t, "prefix", tmp_path, touched=[])
    assert configured == ["prefix"]
    kconfigs["files"] = "100644 bbb 0\tmm/Kconfig"     # a patch changed mm/Kconfig
    matrix.build_variant(t, "prefix", tmp_path, touched=[])
    assert configured == ["prefix", "prefix"]


def test_the_proof_table_names_the_targets_no_recorded_run_has(monkeypatch):
    from memlab import figures, tables
    record = {"date": "d", "host_cpu": "c", "commit": "x",
              "targets": [{"target": name, "ok": True, "new": []}
                          for name in matrix.TARGETS if not name.endswith("-clang")]}
    monkeypatch.setattr(matrix, "load_results", lambda source=None: record)
    monkeypatch.setattr(figures, "matrix_tally", lambda source=None: (15, 15))
    monkeypatch.setattr(matrix.MATRIX_RESULTS.__class__, "exists", lambda self: True)
    cell = tables._matrix_cell(matrix.MATRIX_RESULTS, "`m`")
    assert cell.startswith("15 of 15 targets clean")
    assert cell.endswith("not run yet: x86_64-zone-device-clang, "
                         "x86_64-hotplug-no-device-clang, arm64-clang")
    rows = tables.matrix_table().rows
    assert [r[3] for r in rows][:1] == ["gcc W=1"] and rows[-1][3:] == ["", "not run"]
    # Its source says whether the record is of today's code.
    monkeypatch.setattr(matrix.MATRIX_RESULTS.__class__, "relative_to", lambda self, other: self)
    assert tables._matrix_source(matrix.MATRIX_RESULTS, "`m`").endswith(
        ", commit x, provenance not recorded (`m`)")
    record["provenance"] = {"commit": "x", "series": {"product": "old", "lab": "old"},
                            "base": "", "host_cpu": "c"}
    assert "STALE: the code changed since (product series old -> " in \
        tables._matrix_source(matrix.MATRIX_RESULTS, "`m`")


def test_a_run_of_some_targets_amends_the_record_of_the_same_series(monkeypatch, tmp_path):
    import json
    record = tmp_path / "matrix.json"
    monkeypatch.setattr(matrix, "MATRIX_RESULTS", record)
    facts = {"date": "later", "host_cpu": "c", "commit": "new", "series": "s",
             "provenance": {"series": {"product": "p1"}}}
    monkeypatch.setattr(matrix, "_run_facts", lambda: dict(facts))
    fixed = matrix.TargetResult("parisc64", True, [], "", 1.0)
    assert not matrix.amend_results([fixed])          # nothing recorded
    record.write_text(json.dumps({"date": "first", "commit": "old",
                                  "provenance": {"series": {"product": "p1"}},
                                  "targets": [{"target": "alpha", "ok": True, "new": []},
                                              {"target": "parisc64", "ok": False,
                                               "new": ["x"]}]}))
    assert matrix.amend_results([fixed])
    data = json.loads(record.read_text())
    assert [(t["target"], t["ok"]) for t in data["targets"]] == [("alpha", True),
                                                                 ("parisc64", True)]
    assert data["date"] == "first" and data["amended"] == [
        {"date": "later", "host_cpu": "c", "commit": "new", "targets": ["parisc64"]}]
    facts["provenance"] = {"series": {"product": "p2"}}
    assert not matrix.amend_results([fixed])          # other code: run them all
