"""The kernel git work tree: pristine base, lab patches, product series.

build/linux history:   base (tag) -> lab patches -> lab (tag) -> product series
The "base" variant is built from tag `lab`, the "patched" variant from HEAD
of build/linux, so both carry the same measurement aids.
"""
from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import deps, paths
from .runner import LabError, run_logged, run_quiet, say
from .series import (COVER_LETTER, Series, parse_am_failure, refresh_cover_letter,
                     write_series)

# The project signs as itself (no personal names in commits).
IDENTITY = {
    "GIT_AUTHOR_NAME": "memlab", "GIT_AUTHOR_EMAIL": "memlab@localhost",
    "GIT_COMMITTER_NAME": "memlab", "GIT_COMMITTER_EMAIL": "memlab@localhost",
}


def product_series() -> Series:
    return Series(paths.PATCHES)


def lab_series() -> Series:
    return Series(paths.LAB_PATCHES)


def git(*args: str, cwd: Path = paths.KERNEL_TREE, check: bool = True) -> str:
    env = dict(os.environ, **IDENTITY)
    res = subprocess.run(["git", *args], cwd=cwd, capture_output=True,
                         text=True, env=env)
    if check and res.returncode != 0:
        raise LabError(f"git {' '.join(args)} failed in {cwd}:\n"
                       f"{res.stdout}{res.stderr}")
    return res.stdout.strip()


def has_tree() -> bool:
    return (paths.KERNEL_TREE / ".git").exists() and \
        git("tag", "--list", paths.TAG_BASE, check=False) == paths.TAG_BASE


def unpack(version: str) -> None:
    """Pristine Debian source as the first commit, tagged `base`."""
    tmp = paths.BUILD / "unpack.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    log = paths.LOGS / "source.log"
    run_logged(["tar", "-xJf", str(paths.SOURCE_TARBALL), "-C", str(tmp)], log,
               f"unpack {paths.SOURCE_TARBALL.name}", expected_lines=None)
    top = next(tmp.iterdir())
    shutil.rmtree(paths.KERNEL_TREE, ignore_errors=True)
    top.rename(paths.KERNEL_TREE)
    tmp.rmdir()
    env = dict(os.environ, **IDENTITY)
    cwd = paths.KERNEL_TREE
    run_logged(["git", "init", "-q", "-b", "memlab"], log, "git init", cwd=cwd, env=env)
    drop_debian_ignore_all(cwd / ".gitignore")
    run_logged(["git", "add", "-A", "-f", "."], log, "git add (whole tree)",
               cwd=cwd, env=env)
    run_logged(["git", "commit", "-q", "-m",
                f"Debian {paths.SOURCE_PACKAGE} {version} (pristine)\n\n"
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
        res = subprocess.run(["git", "am", "-q", str(patch)], cwd=paths.KERNEL_TREE,
                             capture_output=True, text=True,
                             env=dict(os.environ, **IDENTITY))
        if res.returncode != 0:
            out = res.stdout + res.stderr
            git("am", "--abort", check=False)
            failure = parse_am_failure(patch, out)
            raise LabError(f"patch does not apply: {failure.describe()}\n{out.strip()}")
        say(f"applied {patch.relative_to(paths.REPO)}")


def rebuild_from_patches() -> None:
    """Reset the work tree to base and apply lab + product series."""
    git("am", "--abort", check=False)
    git("checkout", "-q", "-B", "memlab", paths.TAG_BASE)
    git("reset", "-q", "--hard", paths.TAG_BASE)
    git("clean", "-q", "-fdx")
    apply(lab_series())
    git("tag", "-f", paths.TAG_LAB)
    apply(product_series())


def source(force: bool = False) -> None:
    version = deps.ensure_kernel_source()
    if not has_tree():
        unpack(version)
        rebuild_from_patches()
    elif force:
        rebuild_from_patches()
    else:
        differences = check_export()
        if differences:
            raise LabError("build/linux has work that differs from patches/:\n  "
                           + "\n  ".join(differences)
                           + "\nrun `memlab export` to keep it, or "
                           "`memlab source --force` to discard it")
        say("build/linux already matches patches/")
    sync_variant_tree("base")
    say(f"kernel work tree: {paths.KERNEL_TREE} (HEAD {git('rev-parse', '--short', 'HEAD')})")


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
    if variant == "patched":
        return tree
    if not (tree / ".git").exists():
        tree.parent.mkdir(parents=True, exist_ok=True)
        git("worktree", "prune")
        run_logged(["git", "worktree", "add", "-f", "--detach", str(tree), paths.TAG_LAB],
                   paths.LOGS / "source.log", f"checkout {variant} tree",
                   cwd=paths.KERNEL_TREE)
    else:
        git("checkout", "-q", "--detach", paths.TAG_LAB, cwd=tree)
    return tree


def _format_patches(rev_range: str, dest: Path) -> list[str]:
    dest.mkdir(parents=True, exist_ok=True)
    # Full blob ids: abbreviated ones grow with the object count (e.g.
    # after a gc), which would make `export --check` flap.
    out = git("format-patch", "--zero-commit", "--no-signature", "--full-index",
              "--no-numbered", "-o", str(dest), rev_range)
    return [Path(p).name for p in out.splitlines() if p.strip()]


def _export_to(dest_product: Path, dest_lab: Path) -> None:
    lab_names = _format_patches(f"{paths.TAG_BASE}..{paths.TAG_LAB}", dest_lab)
    write_series(dest_lab, lab_names,
                 "Lab-only measurement aids, applied to base and patched alike")
    names = _format_patches(f"{paths.TAG_LAB}..HEAD", dest_product)
    write_series(dest_product, names,
                 "The product series, in order (cover letter: " + COVER_LETTER + ")")


def _cover_letter(existing: Path) -> str | None:
    """The product cover letter refreshed from the work tree, if there is one."""
    if not existing.exists():
        return None
    subjects = git("log", "--reverse", "--format=%s", f"{paths.TAG_LAB}..HEAD").splitlines()
    diffstat = git("diff", "--stat", f"{paths.TAG_LAB}..HEAD")
    return refresh_cover_letter(existing.read_text(), subjects, diffstat)


def _patch_files(directory: Path) -> set[str]:
    return {p.name for p in directory.glob("*.patch") if p.name != COVER_LETTER} | \
        ({"series"} if (directory / "series").exists() else set())


def check_export() -> list[str]:
    """Differences between the work tree's commits and patches/ (empty: same)."""
    if not has_tree():
        raise LabError("no kernel work tree: run `memlab source` first")
    with tempfile.TemporaryDirectory() as tmp:
        product, lab = Path(tmp) / "product", Path(tmp) / "lab"
        _export_to(product, lab)
        diffs = []
        for have, want in ((paths.PATCHES, product), (paths.LAB_PATCHES, lab)):
            names = _patch_files(have) | _patch_files(want)
            for name in sorted(names):
                a, b = have / name, want / name
                if not a.exists():
                    diffs.append(f"{b.relative_to(tmp)}: in build/linux, not in patches/")
                elif not b.exists():
                    diffs.append(f"{a.relative_to(paths.REPO)}: not in build/linux")
                elif not filecmp.cmp(a, b, shallow=False):
                    diffs.append(f"{a.relative_to(paths.REPO)}: differs from build/linux")
        cover = paths.PATCHES / COVER_LETTER
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
        say("WARNING: build/linux has uncommitted changes; only commits are exported")
    for directory in (paths.PATCHES, paths.LAB_PATCHES):
        directory.mkdir(parents=True, exist_ok=True)
        for old in directory.glob("*.patch"):
            if old.name != COVER_LETTER:
                old.unlink()
    _export_to(paths.PATCHES, paths.LAB_PATCHES)
    cover = paths.PATCHES / COVER_LETTER
    fresh = _cover_letter(cover)
    if fresh is not None:
        cover.write_text(fresh)
    say(f"exported {len(product_series().names())} product and "
        f"{len(lab_series().names())} lab patches to {paths.PATCHES}")
    # What changed in patches/, for the commit the developer makes next.
    changed = run_quiet(["git", "status", "--short", "patches"], cwd=paths.REPO).stdout
    if changed:
        print(changed, end="")
