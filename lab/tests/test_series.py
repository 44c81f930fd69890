"""Series files and `git am` failure reports."""
import pytest

from memlab import series
from memlab.series import (Series, apply_command, hunk_header, parse_am_failure,
                           parse_am_run_failure, patch_subject, refresh_cover_letter,
                           write_series)
from memlab.runner import LabError
from conftest import DATA


def test_series_ignores_comments_and_blank_lines(tmp_path):
    (tmp_path / "a.patch").write_text("")
    (tmp_path / "b.patch").write_text("")
    write_series(tmp_path, ["a.patch", "b.patch"], "header")
    (tmp_path / "series").write_text((tmp_path / "series").read_text() + "\n# x\n")
    assert Series(tmp_path).names() == ["a.patch", "b.patch"]


def test_series_reports_missing_patch(tmp_path):
    (tmp_path / "series").write_text("gone.patch\n")
    with pytest.raises(LabError, match="gone.patch"):
        Series(tmp_path).patches()


def test_am_failure_names_patch_file_and_hunk():
    patch = DATA / "broken.patch"
    output = (DATA / "git-am-broken.txt").read_text()
    failure = parse_am_failure(patch, output)
    assert failure.patch == "broken.patch"
    assert failure.file == "mm/mm_init.c"
    assert failure.hunk is not None and failure.hunk.startswith("@@ -1117,")
    assert "patch broken.patch, file mm/mm_init.c, hunk @@ -1117," in failure.describe()


def test_am_failure_without_detail_still_names_patch(tmp_path):
    p = tmp_path / "x.patch"
    p.write_text("")
    assert parse_am_failure(p, "fatal: something").describe() == "patch x.patch"


def test_hunk_header_picks_the_right_file():
    text = ("diff --git a/a.c b/a.c\n@@ -10,3 +10,3 @@ f\n"
            "diff --git a/b.c b/b.c\n@@ -10,3 +10,4 @@ g\n")
    assert hunk_header(text, "b.c", 10) == "@@ -10,3 +10,4 @@ g"


def test_cover_letter_refresh_keeps_prose_and_updates_generated_parts():
    text = ("Subject: [PATCH 0/2] mm: x\n\nProse stays.\n\nmemlab (2):\n  a\n  b\n\n"
            " old | 1 +\n\n-- \nmemlab\n")
    new = refresh_cover_letter(text, ["a", "b", "c"], " mm/x.c | 3 +++\n")
    assert new.startswith("Subject: [PATCH 0/3] mm: x\n\nProse stays.\n\nmemlab (3):\n  a\n  b\n  c\n")
    assert " mm/x.c | 3 +++\n\n-- \nmemlab\n" in new
    assert "old |" not in new
    assert refresh_cover_letter(new, ["a", "b", "c"], " mm/x.c | 3 +++\n") == new


def test_apply_failure_over_the_whole_series_names_patch_file_and_hunk():
    # Real output of the README's apply command on the pristine tree, when
    # the series had been made on top of a lab patch.
    patches = sorted((DATA / "series-broken").glob("*.patch"))
    output = (DATA / "git-am-series-broken.txt").read_text()
    failure = parse_am_run_failure(patches, output)
    assert failure.patch == "0002-mm-factor-the-ZONE_DEVICE-range-init-out-of-memmap_i.patch"
    assert failure.file == "mm/mm_init.c"
    assert failure.line == 1074
    assert failure.hunk is not None and failure.hunk.startswith("@@ -1074,")


def test_patch_subject_is_unfolded():
    patch = DATA / "series-broken" / "0002-mm-factor-the-ZONE_DEVICE-range-init-out-of-memmap_i.patch"
    assert patch_subject(patch) == ("mm: factor the ZONE_DEVICE range init out of "
                                    "memmap_init_zone_device()")


def test_apply_failure_without_a_patch_name():
    assert "unknown" in parse_am_run_failure([], "fatal: not a git repository").patch


def test_readme_and_cover_letter_give_the_apply_command_memlab_test_runs():
    repo = DATA.parents[2]
    command = apply_command(repo / "patches", repo)
    assert command == "git am --empty=drop /path/to/memlab/patches/0*.patch"
    assert command in (repo / "README.md").read_text()
    assert command in (repo / "patches" / "0000-cover-letter.patch").read_text()


COVER_WITH_PARTS = """Subject: [PATCH 0/5] mm: x

 - Part 1, patches 1-2: the first thing,
   on two lines.
 - Part 2, patches 3-4, RFC: the second.
 - Part 3, patch 5, RFC: the last, a part of one patch
"""


def test_parts_are_read_from_the_cover_letter_in_order():
    assert series.parts(COVER_WITH_PARTS, 5) == [
        series.Part(1, 1, 2), series.Part(2, 3, 4), series.Part(3, 5, 5)]
    assert series.parts("Subject: [PATCH 0/2] mm: x\n\nNo parts.\n", 2) == []


@pytest.mark.parametrize("text, count", [
    (COVER_WITH_PARTS, 6),                                        # patch 6 in no part
    (COVER_WITH_PARTS.replace("patches 3-4", "patches 4-4"), 5),  # patch 3 in no part
    (COVER_WITH_PARTS.replace("Part 2,", "Part 3,"), 5),          # numbered out of order
])
def test_parts_that_do_not_cover_the_series_in_order_are_refused(text, count):
    with pytest.raises(LabError):
        series.parts(text, count)
