"""checkpatch.pl output (captured from real runs) turned into verdicts."""
from pathlib import Path

from memlab import checkpatch
from conftest import DATA


def test_clean_patch():
    r = checkpatch.parse(Path("a.patch"), (DATA / "checkpatch-clean.txt").read_text())
    assert r.clean
    assert (r.errors, r.warnings, r.checks) == (0, 0, 0)


def test_warnings_and_checks_are_counted_and_listed():
    r = checkpatch.parse(Path("b.patch"), (DATA / "checkpatch-warnings.txt").read_text())
    assert not r.clean
    assert (r.errors, r.warnings, r.checks) == (0, 1, 1)
    assert any("MAINTAINERS" in f for f in r.findings)
    assert "b.patch: 0 errors, 1 warnings, 1 checks" in r.describe()


def test_output_without_totals_is_a_failure():
    r = checkpatch.parse(Path("c.patch"), "perl: cannot open\n")
    assert not r.clean
    assert "checkpatch printed no totals" in r.findings


def test_page_flag_accessors_are_not_camelcase():
    """A real run over the hot-added memory patch: its only findings are
    the macro-generated page flag accessors, which do not count."""
    r = checkpatch.parse(Path("d.patch"),
                         (DATA / "checkpatch-page-flag-camelcase.txt").read_text())
    assert r.clean, r.describe()


def test_other_camelcase_still_counts():
    out = ("CHECK: Avoid CamelCase: <__SetPageOffline>\n"
           "CHECK: Avoid CamelCase: <myFlag>\n"
           "total: 0 errors, 0 warnings, 2 checks, 10 lines checked\n")
    r = checkpatch.parse(Path("e.patch"), out)
    assert (r.checks, r.findings) == (1, ["CHECK: Avoid CamelCase: <myFlag>"])
