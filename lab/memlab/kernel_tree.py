"""The kernel git work tree: pristine base, product series, stable fixes,
lab patches.

build/linux, branch memlab:  base (tag) -> product series (branch product)
                             -> stable fixes (branch stable) -> lab patches
tag lab:                     base -> the same stable fixes and lab patches

The product series applies to the pristine tree on its own; the stable
fixes (of the base itself) and the lab's measurement aids go on top of
each variant. The "patched" variant is built from branch memlab, the
"base" variant from tag lab (remade from memlab's stable and lab commits
whenever they change), so both are measured the same way.
"""
from __future__ import annotations

import filecmp
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import kernel_base, paths, sources
from .runner import LabError, run_logged, run_quiet, say
from .series import (COVER_LETTER, Series, parse_am_failure, refresh_cover_letter,
                     write_series)

# The work tree as a message names it: build/linux, or another base's.
_TREE = paths.KERNEL_TREE.relative_to(paths.REPO)

# The project signs as itself (no personal names in commits).
IDENTITY = {
    "GIT_AUTHOR_NAME": "memlab", "GIT_AUTHOR_EMAIL": "memlab@localhost",
    "GIT_COMMITTER_NAME": "memlab", "GIT_COMMITTER_EMAIL": "memlab@localhost",
}


@dataclass(frozen=True)
class Layer:
    """One of the series the work tree stacks on base, in order: where its
    patches live, the branch at its last commit, how they are exported."""
    directory: Path
    branch: str
    header: str                 # the first line of its series file
    subject_prefix: str = "PATCH"

    @property
    def series(self) -> Series:
        return Series(self.directory)


def layers() -> tuple[Layer, ...]:
    """The product series, the stable fixes, the lab patches of the base."""
    base = kernel_base.current()
    return (
        Layer(base.series, paths.PRODUCT_BRANCH,
              "The product series, in order (cover letter: " + COVER_LETTER + ")"),
        Layer(base.stable_series, paths.STABLE_BRANCH,
              "Fixes of the base itself, in the form its stable maintainers take: "
              "applied under base and patched alike, and shipped in the package",
              subject_prefix=f"PATCH {base.name}.y"),
        Layer(base.lab_series, paths.WORK_BRANCH,
              "Lab-only measurement aids and the fixes the lab's kernels need, "
              "applied on top of base and of the product series alike"),
    )


def _ranges() -> list[tuple[Layer, str]]:
    """Each layer with its commits' range in the work tree."""
    starts = [paths.TAG_BASE] + [layer.branch for layer in layers()]
    return [(layer, f"{start}..{layer.branch}") for layer, start in zip(layers(), starts)]


def product_series() -> Series:
    return layers()[0].series


def stable_series() -> Series:
    return layers()[1].series


def git_env() -> dict[str, str]:
    """The environment for git commands that commit: the project's identity."""
    return dict(os.environ, **IDENTITY)


def git(*args: str, cwd: Path | None = None, check: bool = True) -> str:
    """git in cwd (default: the work tree); its output, stripped."""
    cwd = cwd or paths.KERNEL_TREE
    env = git_env()
    res = run_quiet(["git", *args], cwd=cwd, env=env, check=False)
    if check and res.returncode != 0:
        raise LabError(f"git {' '.join(args)} failed in {cwd}:\n"
                       f"{res.stdout}{res.stderr}")
    return res.stdout.strip()


def has_tree() -> bool:
    return (paths.KERNEL_TREE / ".git").exists() and \
        git("tag", "--list", paths.TAG_BASE, check=False) == paths.TAG_BASE


def unpack(version: str, tarball: Path) -> None:
    """Pristine Debian source as the first commit, tagged `base`."""
    tmp = paths.BUILD / "unpack.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    log = paths.LOGS / "source.log"
    run_logged(["tar", "-xJf", str(tarball), "-C", str(tmp)], log,
               f"unpack {tarball.name}", expected_lines=None)
    top = next(tmp.iterdir())
    shutil.rmtree(paths.KERNEL_TREE, ignore_errors=True)
    top.rename(paths.KERNEL_TREE)
    tmp.rmdir()
    env = git_env()
    cwd = paths.KERNEL_TREE
    run_logged(["git", "init", "-q", "-b", paths.WORK_BRANCH], log, "git init",
               cwd=cwd, env=env)
    drop_debian_ignore_all(cwd / ".gitignore")
    run_logged(["git", "add", "-A", "-f", "."], log, "git add (whole tree)",
               cwd=cwd, env=env)
    run_logged(["git", "commit", "-q", "-m",
                f"Debian {kernel_base.current().package} {version} (pristine)\n\n"
                "Pristine but for .gitignore: Debian's packaging block that\n"
                "ignores every top-level entry is removed, so new files show."],
               log, "git commit base", cwd=cwd, env=env)
    git("tag", paths.TAG_BASE)


def drop_debian_ignore_all(gitignore: Path) -> None:
    """Debian's .gitignore ends with `/*` (ignore all top-level entries),
    which would hide every new file a developer adds to the tree."""
    if not gitignore.exists():
        return
    lines = gitignore.read_text().splitlines()
    kept = [ln for ln in lines if ln not in ("/*", "!/debian/")]
    if kept != lines:
        gitignore.write_text("\n".join(kept) + "\n")


def apply(series: Series) -> None:
    """`git am` each patch; on failure name the patch, file and hunk."""
    for patch in series.patches():
        res = run_quiet(["git", "am", "-q", str(patch)], cwd=paths.KERNEL_TREE,
                        env=git_env(), check=False)
        if res.returncode != 0:
            out = res.stdout + res.stderr
            git("am", "--abort", check=False)
            failure = parse_am_failure(patch, out)
            raise LabError(f"patch does not apply: {failure.describe()}\n{out.strip()}")
        say(f"applied {patch.relative_to(paths.REPO)}")


def rebuild_from_patches() -> None:
    """Reset the work tree to base; apply each layer's series in turn."""
    git("am", "--abort", check=False)
    git("checkout", "-q", "-f", "-B", paths.WORK_BRANCH, paths.TAG_BASE)
    git("reset", "-q", "--hard", paths.TAG_BASE)
    git("clean", "-q", "-fdx")
    for layer in layers():
        apply(layer.series)
        if layer.branch != paths.WORK_BRANCH:   # the one checked out
            git("branch", "-f", layer.branch, "HEAD")
    refresh_lab_tag()


def check_layout() -> None:
    """Each layer's branch must follow the one before it."""
    wanted = [layer.branch for layer in layers()]
    have = git("branch", "--list", *wanted, "--format=%(refname:short)").split()
    if sorted(have) != sorted(wanted):
        raise LabError(f"{_TREE} lacks a branch of {', '.join(wanted)} (made by an "
                       "older memlab?): run `memlab source --force` (after exporting "
                       "any work)")
    for older, newer in zip([paths.TAG_BASE] + wanted, wanted):
        res = run_quiet(["git", "merge-base", "--is-ancestor", older, newer],
                        cwd=paths.KERNEL_TREE, check=False)
        if res.returncode != 0:
            raise LabError(
                f"{_TREE}: {older} is not an ancestor of branch {newer}. The "
                f"branches follow each other ({' -> '.join([paths.TAG_BASE] + wanted)}): "
                f"rebase with `git rebase -i --update-refs {paths.TAG_BASE}` on branch "
                f"{paths.WORK_BRANCH}")


def _patch_ids(rev_range: str) -> list[str]:
    """Stable patch ids of the commits in rev_range, oldest first."""
    log = git("log", "--reverse", "-p", "--format=commit %H", rev_range)
    res = run_quiet(["git", "patch-id", "--stable"], input=log + "\n",
                    cwd=paths.KERNEL_TREE)
    return [line.split()[0] for line in res.stdout.splitlines() if line.strip()]


def refresh_lab_tag() -> None:
    """Tag lab = base + memlab's stable and lab commits; remade when they
    changed.

    A stable fix or lab patch must apply to the pristine tree and to the
    product series alike: one that does not is named here."""
    lab_range = f"{paths.PRODUCT_BRANCH}..{paths.WORK_BRANCH}"
    wanted = _patch_ids(lab_range)
    if git("tag", "--list", paths.TAG_LAB) == paths.TAG_LAB and \
            _patch_ids(f"{paths.TAG_BASE}..{paths.TAG_LAB}") == wanted:
        return
    tree = _worktree(variant_tree("base"))
    git("cherry-pick", "--abort", cwd=tree, check=False)
    git("checkout", "-q", "-f", "--detach", paths.TAG_BASE, cwd=tree)
    for commit in git("rev-list", "--reverse", lab_range).split():
        res = run_quiet(["git", "cherry-pick", commit], cwd=tree, env=git_env(),
                        check=False)
        if res.returncode != 0:
            git("cherry-pick", "--abort", cwd=tree, check=False)
            subject = git("log", "-1", "--format=%s", commit)
            raise LabError(f"patch {subject!r} does not apply to the pristine base "
                           f"(stable fixes and lab patches must apply to base and to "
                           f"the product series alike):\n{res.stdout}{res.stderr}")
    git("tag", "-f", paths.TAG_LAB, "HEAD", cwd=tree)
    say(f"tag {paths.TAG_LAB}: base + {len(wanted)} stable fixes and lab patches")


def tree_version() -> str:
    """The Debian version build/linux's pristine commit was unpacked from."""
    subject = git("log", "-1", "--format=%s", paths.TAG_BASE)
    words = subject.split()
    return words[2] if len(words) > 2 and words[0] == "Debian" else "unknown"


def ensure_pristine() -> None:
    """build/linux with at least the pristine commit (tag base) of the
    pinned version: a tree of another version is made anew when it holds
    nothing patches/ lacks."""
    version, tarball = sources.kernel_source()
    if has_tree() and tree_version() != version:
        old = tree_version()
        if not is_unpatched() and check_export():
            raise LabError(f"{_TREE} is of {old}, the pin is {version}, and it has "
                           "work that differs from patches/: `memlab export` it, then "
                           "`memlab source --force` unpacks the pinned version")
        say(f"{_TREE} is of {old}; unpacking the pinned {version}")
        shutil.rmtree(paths.KERNEL_TREE)
    if not has_tree():
        unpack(version, tarball)


def is_unpatched() -> bool:
    """Unpacked but never patched: nothing there to lose."""
    return git("branch", "--list", paths.PRODUCT_BRANCH) == "" and \
        git("rev-parse", "HEAD") == git("rev-parse", paths.TAG_BASE)


def source(force: bool = False) -> None:
    if force and has_tree() and tree_version() != sources.kernel_source()[0]:
        shutil.rmtree(paths.KERNEL_TREE)
    ensure_pristine()
    if force or is_unpatched():
        rebuild_from_patches()
    else:
        differences = check_export()
        if differences:
            raise LabError(f"{_TREE} has work that differs from patches/:\n  "
                           + "\n  ".join(differences)
                           + "\nrun `memlab export` to keep it, or "
                           "`memlab source --force` to discard it")
        say(f"{_TREE} already matches {product_series().directory.relative_to(paths.REPO)}/")
    sync_variant_tree("base")
    say(f"kernel work tree: {paths.KERNEL_TREE} (HEAD {git('rev-parse', '--short', 'HEAD')})")


def _is_worktree(tree: Path) -> bool:
    """tree's .git names a worktree that build/linux still knows (a checkout
    killed half way leaves the file and not the worktree)."""
    dotgit = tree / ".git"
    if not dotgit.is_file():
        return False
    return Path(dotgit.read_text().removeprefix("gitdir:").strip()).is_dir()


def _worktree(tree: Path) -> Path:
    """A detached git worktree of build/linux at tree (made at tag base
    when missing, and again over what an interrupted checkout left)."""
    if not _is_worktree(tree):
        if tree.exists():
            say(f"{tree}: not a worktree of {paths.KERNEL_TREE} (an interrupted "
                f"checkout?): checking it out again")
            shutil.rmtree(tree)
        tree.parent.mkdir(parents=True, exist_ok=True)
        git("worktree", "prune")
        run_logged(["git", "worktree", "add", "-f", "--detach", str(tree),
                    paths.TAG_BASE],
                   paths.LOGS / "source.log", f"checkout {tree.name} tree",
                   cwd=paths.KERNEL_TREE)
    return tree


def pristine_tree() -> Path:
    """A clean checkout of tag base, for applying the series as an
    operator would."""
    tree = _worktree(paths.PRISTINE_TREE)
    git("am", "--abort", cwd=tree, check=False)
    git("checkout", "-q", "-f", "--detach", paths.TAG_BASE, cwd=tree)
    git("clean", "-q", "-fdx", cwd=tree)
    return tree


def checkout(name: str, rev: str) -> Path:
    """A worktree of build/linux under build/trees/NAME at rev (detached;
    only the files that differ get new mtimes, so builds stay incremental)."""
    tree = _worktree(paths.VARIANT_TREES / name)
    git("checkout", "-q", "-f", "--detach", rev, cwd=tree)
    return tree


def variant_tree(variant: str) -> Path:
    """Source tree a variant builds from."""
    if variant == "patched":
        return paths.KERNEL_TREE
    if variant == "base":
        return paths.VARIANT_TREES / "base"
    raise LabError(f"unknown variant {variant!r} (base or patched)")


def sync_variant_tree(variant: str) -> Path:
    """Check out the variant's commit; only changed files get new mtimes."""
    tree = variant_tree(variant)
    check_layout()
    if variant == "patched":
        branch = git("symbolic-ref", "--short", "-q", "HEAD", check=False)
        if branch != paths.WORK_BRANCH:
            raise LabError(f"{_TREE} has {branch or 'a detached HEAD'} checked "
                           f"out; the patched variant builds branch "
                           f"{paths.WORK_BRANCH} (product series, stable fixes, lab patches)")
        return tree
    refresh_lab_tag()
    git("checkout", "-q", "--detach", paths.TAG_LAB, cwd=_worktree(tree))
    return tree


FORMAT_PATCH_ATTRIBUTES = paths.REPO / "lab" / "data" / "format-patch.gitattributes"


def _format_patches(rev_range: str, dest: Path, subject_prefix: str) -> list[str]:
    dest.mkdir(parents=True, exist_ok=True)
    # Full blob ids: abbreviated ones grow with the object count (e.g.
    # after a gc), which would make `export --check` flap.
    out = git("-c", f"core.attributesFile={FORMAT_PATCH_ATTRIBUTES}",
              "-c", "diff.nofunc.xfuncname=$^",  # a pattern no line matches
              "format-patch", "--zero-commit", "--no-signature", "--full-index",
              "--no-numbered", f"--subject-prefix={subject_prefix}", "-o", str(dest),
              rev_range)
    return [Path(p).name for p in out.splitlines() if p.strip()]


def _export_to(dest: dict[Path, Path]) -> None:
    """Each layer's commits as patch files and a series file in
    dest[its directory]."""
    check_layout()
    for layer, rev_range in _ranges():
        names = _format_patches(rev_range, dest[layer.directory], layer.subject_prefix)
        write_series(dest[layer.directory], names, layer.header)


def cover_letter_template() -> Path:
    """The cover letter's template: export keeps its shortlog and diffstat,
    `memlab report` writes patches/ from it (documents.py)."""
    return paths.TEMPLATES / product_series().directory.relative_to(paths.REPO) / COVER_LETTER


def _cover_letter(existing: Path) -> str | None:
    """The cover letter (template) refreshed from the work tree, if there is one."""
    if not existing.exists():
        return None
    product = f"{paths.TAG_BASE}..{paths.PRODUCT_BRANCH}"
    subjects = git("log", "--reverse", "--format=%s", product).splitlines()
    diffstat = git("diff", "--stat", product)
    return refresh_cover_letter(existing.read_text(), subjects, diffstat)


def _patch_files(directory: Path) -> set[str]:
    return {p.name for p in directory.glob("*.patch") if p.name != COVER_LETTER} | \
        ({"series"} if (directory / "series").exists() else set())


def check_export() -> list[str]:
    """Differences between the work tree's commits and patches/ (empty: same)."""
    if not has_tree():
        raise LabError("no kernel work tree: run `memlab source` first")
    with tempfile.TemporaryDirectory() as tmp:
        dest = {layer.directory: Path(tmp) / layer.branch for layer in layers()}
        _export_to(dest)
        diffs = []
        for have, want in dest.items():
            names = _patch_files(have) | _patch_files(want)
            for name in sorted(names):
                a, b = have / name, want / name
                if not a.exists():
                    diffs.append(f"{b.relative_to(tmp)}: in {_TREE}, not in patches/")
                elif not b.exists():
                    diffs.append(f"{a.relative_to(paths.REPO)}: not in {_TREE}")
                elif not filecmp.cmp(a, b, shallow=False):
                    diffs.append(f"{a.relative_to(paths.REPO)}: differs from {_TREE}")
        cover = cover_letter_template()
        fresh = _cover_letter(cover)
        if fresh is not None and fresh != cover.read_text():
            diffs.append(f"{cover.relative_to(paths.REPO)}: shortlog or diffstat is stale")
        return diffs


def export() -> None:
    """Write the work tree's commits back to patches/ (cover letter kept)."""
    if not has_tree():
        raise LabError("no kernel work tree: run `memlab source` first")
    status = git("status", "--porcelain", "--untracked-files=no")
    if status:
        say(f"WARNING: {_TREE} has uncommitted changes; only commits are exported")
    for layer in layers():
        layer.directory.mkdir(parents=True, exist_ok=True)
        for old in layer.directory.glob("*.patch"):
            if old.name != COVER_LETTER:
                old.unlink()
    _export_to({layer.directory: layer.directory for layer in layers()})
    cover = cover_letter_template()
    fresh = _cover_letter(cover)
    if fresh is not None:
        cover.write_text(fresh)
    say("exported " + ", ".join(f"{len(layer.series.names())} patches to "
                                f"{layer.directory.relative_to(paths.REPO)}"
                                for layer in layers()))
    # What changed in patches/, for the commit the developer makes next.
    changed = run_quiet(["git", "status", "--short", "patches"], cwd=paths.REPO).stdout
    if changed:
        print(changed, end="")
