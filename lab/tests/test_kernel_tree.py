"""kernel_tree's failure reports on real `git am` output, in a tiny repo."""
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from memlab import kernel_tree, paths
from memlab.runner import LabError
from memlab.series import Series, parse_am_run_failure, write_series

IDENTITY = {"GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "test@localhost",
            "GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "test@localhost"}


def run_git(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=repo,
                          env=dict(os.environ, **IDENTITY), capture_output=True,
                          text=True, check=check)


def set_line(repo: Path, n: int, text: str, subject: str) -> None:
    """Commit mm/foo.c with line n replaced."""
    foo = repo / "mm" / "foo.c"
    lines = foo.read_text().splitlines()
    lines[n - 1] = text
    foo.write_text("\n".join(lines) + "\n")
    run_git(repo, "commit", "-q", "-a", "-m", subject)


@dataclass(frozen=True)
class Tree:
    repo: Path
    patches: list[Path]   # p1 (line 2) applies; p2 (line 10) conflicts


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Tree:
    """A repo at base + a change to line 10, and two patches made on base:
    one to line 2 (applies), one to line 10 (conflicts). kernel_tree is
    pointed at it, so nothing touches the real build/linux."""
    # No user or system config (am.threeWay, commit.gpgsign...) may change git.
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    repo = tmp_path / "linux"
    (repo / "mm").mkdir(parents=True)
    (repo / "mm" / "foo.c").write_text("".join(f"int line_{i};\n" for i in range(1, 21)))
    run_git(repo, "init", "-q")
    run_git(repo, "add", ".")
    run_git(repo, "commit", "-q", "-m", "base")
    run_git(repo, "tag", "base")
    set_line(repo, 2, "int line_2 = 1;", "mm: set line 2")
    set_line(repo, 10, "int line_10 = 1;", "mm: set line 10")
    out = run_git(repo, "format-patch", "-o", str(tmp_path / "patches"),
                  "base..HEAD").stdout
    patches = [Path(p) for p in out.split()]
    assert len(patches) == 2
    run_git(repo, "reset", "-q", "--hard", "base")
    set_line(repo, 10, "int line_10 = 2;", "mm: set line 10 otherwise")
    monkeypatch.setattr(paths, "REPO", tmp_path)
    monkeypatch.setattr(paths, "KERNEL_TREE", repo)    # git()'s default cwd too
    return Tree(repo, patches)


def head_subject(repo: Path) -> str:
    return run_git(repo, "log", "-1", "--format=%s").stdout.strip()


def test_apply_names_the_patch_file_and_hunk_that_failed(tree):
    write_series(tree.patches[0].parent, [p.name for p in tree.patches], "test")
    with pytest.raises(LabError) as exc:
        kernel_tree.apply(Series(tree.patches[0].parent))
    first = str(exc.value).splitlines()[0]
    assert first.startswith(f"patch does not apply: patch {tree.patches[1].name}, "
                            "file mm/foo.c, hunk @@ -7,7 +7,7 @@")
    # The first patch stays applied; the failed `git am` was aborted.
    assert head_subject(tree.repo) == "mm: set line 2"
    assert not (tree.repo / ".git" / "rebase-apply").exists()


def test_series_listing_a_missing_patch_is_a_lab_error(tree):
    directory = tree.patches[0].parent
    write_series(directory, [tree.patches[0].name, "0009-gone.patch"], "test")
    with pytest.raises(LabError, match="0009-gone.patch"):
        Series(directory).patches()


def test_apply_with_a_missing_patch_applies_nothing(tree):
    directory = tree.patches[0].parent
    write_series(directory, [tree.patches[0].name, "0009-gone.patch"], "test")
    with pytest.raises(LabError, match="0009-gone.patch"):
        kernel_tree.apply(Series(directory))
    assert head_subject(tree.repo) == "mm: set line 10 otherwise"


def test_run_failure_names_the_conflicting_patch_of_a_real_git_am(tree):
    # The README's apply command over several files: git names the patch
    # only by its subject.
    res = run_git(tree.repo, "am", "--empty=drop", *map(str, tree.patches), check=False)
    run_git(tree.repo, "am", "--abort", check=False)
    assert res.returncode != 0
    failure = parse_am_run_failure(tree.patches, res.stdout + res.stderr)
    assert failure.patch == tree.patches[1].name
    assert failure.file == "mm/foo.c"
    assert failure.hunk is not None and failure.hunk.startswith("@@ -7,")


def test_a_checkout_killed_half_way_is_made_again(tree, tmp_path, monkeypatch):
    """A worktree whose .git points at metadata git no longer has (the
    checkout was killed) is checked out again, not failed on."""
    monkeypatch.setattr(paths, "VARIANT_TREES", tmp_path / "trees")
    monkeypatch.setattr(paths, "LOGS", tmp_path / "logs")
    work = kernel_tree.checkout("base", "base")
    run_git(tree.repo, "worktree", "remove", "--force", str(work))
    work.mkdir()
    (work / ".git").write_text(f"gitdir: {tree.repo / '.git' / 'worktrees' / 'base'}\n")
    head = run_git(tree.repo, "rev-parse", "HEAD").stdout.strip()
    work = kernel_tree.checkout("base", head)
    assert (work / "mm" / "foo.c").read_text().splitlines()[9] == "int line_10 = 2;"
    assert run_git(work, "status", "--porcelain").stdout == ""
