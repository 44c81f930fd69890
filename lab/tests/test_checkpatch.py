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


def test_maintainers_question_excused_when_entries_cover_the_new_files():
    out = (DATA / "checkpatch-warnings.txt").read_text()
    r = checkpatch.parse(Path("f.patch"), out, maintained=True)
    assert (r.warnings, r.checks) == (0, 1)
    assert not any("MAINTAINERS" in f for f in r.findings)


def test_created_files_from_the_summary():
    summary = (" 2 files changed, 60 insertions(+)\n"
               " create mode 100644 arch/x86/include/asm/stream_store.h\n"
               " create mode 100644 include/asm-generic/stream_store.h\n")
    assert checkpatch.created_files(summary) == ["arch/x86/include/asm/stream_store.h",
                                                 "include/asm-generic/stream_store.h"]
    # A move or a deletion may need a MAINTAINERS change the entries cannot show.
    assert checkpatch.created_files(summary + " delete mode 100644 a.h\n") == []


def test_entries_of_get_maintainer_sections():
    out = ("X86 ARCHITECTURE (32-BIT AND 64-BIT)\nM:\tSomeone <s@example.org>\n"
           "F:\tarch/x86/\n\nTHE REST\nM:\tLinus <l@example.org>\n")
    assert checkpatch.entries(out) == ["X86 ARCHITECTURE (32-BIT AND 64-BIT)", "THE REST"]
