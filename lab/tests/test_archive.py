"""Debian's archive through the lab's own apt state, the kernel base rows
and the check of Debian's newest upload."""
import subprocess
from pathlib import Path

import pytest

from memlab import archive, kernel_base, uploads
from memlab.runner import LabError


def test_sources_list_names_each_suite_on_its_mirror_signed():
    text = archive.sources_list(("trixie", "trixie-security"))
    assert f"deb [signed-by={archive.KEYRING}] {archive.MIRROR} trixie main" in text
    assert f"deb-src [signed-by={archive.KEYRING}] {archive.SECURITY_MIRROR} " \
           "trixie-security main" in text


def test_apt_conf_reads_nothing_of_the_machines_apt():
    conf = archive.apt_conf()
    # Dir::Etc is the lab's: /etc/apt's sources, parts and pins are not read.
    assert f'Dir::Etc "{archive.STATE / "etc"}";' in conf
    assert f'Dir::State::status "{archive.STATE / "status"}";' in conf
    assert "/etc/apt" not in conf


def test_versions_sort_as_dpkg_sorts_them():
    assert archive.compare_versions("6.12.118-1", "6.12.117-1~deb12u1") == 1
    assert archive.compare_versions("6.12.117-1~deb12u1", "6.12.117-1") == -1
    assert archive.compare_versions("6.12.118-1+memlab3", "6.12.118-1") == 1
    assert archive.compare_versions("6.12.118-1", "6.12.118-1") == 0


def test_a_version_that_is_not_one_is_an_error():
    with pytest.raises(LabError, match="not a Debian version"):
        archive.compare_versions("6.12.118-1; rm -rf /", "1")


def test_the_pinned_base_is_debian_13s_and_its_suites_serve_it():
    base = kernel_base.BASES[kernel_base.DEFAULT]
    assert base.release == "trixie"
    assert base.release_suites == ("trixie", "trixie-updates", "trixie-security")
    assert base.tarball(Path("/r")) == Path("/r/usr/src/linux-source-6.12.tar.xz")


def test_another_upload_is_pinned_from_the_environment(monkeypatch):
    monkeypatch.setenv("MEMLAB_SOURCE_VERSION", "6.12.119-1")
    base = kernel_base.current()
    assert base.version == "6.12.119-1"
    assert base.suites == kernel_base.BASES[kernel_base.DEFAULT].suites


PATCH = """From 0 Mon Sep 17 00:00:00 2001
From: memlab <memlab@localhost>
Subject: [PATCH] mm: change a line

---
diff --git a/mm/a.c b/mm/a.c
--- a/mm/a.c
+++ b/mm/a.c
@@ -1,2 +1,2 @@
 one
-two
+three
diff --git a/mm/new.c b/mm/new.c
new file mode 100644
--- /dev/null
+++ b/mm/new.c
@@ -0,0 +1 @@
+new
"""


def _tarball(tmp: Path, second_line: str) -> Path:
    (tmp / "linux-source-9.9" / "mm").mkdir(parents=True)
    (tmp / "linux-source-9.9" / "mm" / "a.c").write_text(f"one\n{second_line}\n")
    (tmp / "linux-source-9.9" / "mm" / "untouched.c").write_text("x\n")
    tarball = tmp / "src.tar.xz"
    subprocess.run(["tar", "-cJf", str(tarball), "-C", str(tmp), "linux-source-9.9"],
                   check=True)
    return tarball


def test_the_series_applies_to_the_files_it_touches(tmp_path):
    patch = tmp_path / "0001-x.patch"
    patch.write_text(PATCH)
    assert uploads.touched_files([patch]) == ["mm/a.c", "mm/new.c"]
    assert uploads.applies(_tarball(tmp_path, "two"), "linux-source-9.9", [patch]) == ""


def test_an_upload_the_series_no_longer_applies_to_names_the_patch(tmp_path):
    patch = tmp_path / "0001-x.patch"
    patch.write_text(PATCH)
    stops = uploads.applies(_tarball(tmp_path, "TWO"), "linux-source-9.9", [patch])
    assert stops.startswith("0001-x.patch (mm: change a line): error: patch failed: mm/a.c")


def test_the_summary_says_whether_debian_moved_and_whether_it_applies():
    same = uploads.Uploads("d", "linux-source-6.12", "6.12.118-1", "6.12.118-1", ["t"], None)
    assert same.summary() == "linux-source-6.12 6.12.118-1 (pinned) is the newest Debian serves"
    moved = uploads.Uploads("d", "linux-source-6.12", "6.12.118-1", "6.12.119-1", ["t"],
                            False, "0008-x.patch (x): error")
    assert "newer than the pinned 6.12.118-1: the series does NOT apply to it: 0008" \
        in moved.summary()
