"""The kernel's own selftests that guest scenarios run: built on the host
from the tree of the kernel they test, into its build directory, so that
base and patched each run the test program of their own tree."""
from __future__ import annotations

from pathlib import Path

from .runner import run_logged

# tools/testing/selftests/mm/hmm-tests.c against lib/test_hmm.ko: HMM
# mirroring, migration to and from DEVICE_PRIVATE and DEVICE_COHERENT
# memory, GUP of device pages.
HMM_TESTS = "hmm-tests"
HMM_TESTS_SOURCE = Path("tools/testing/selftests/mm/hmm-tests.c")


def build_hmm_tests(tree: Path, out: Path, log: Path) -> Path:
    """hmm-tests as the selftests' Makefile builds it: the harness from
    tools/testing/selftests, the private uapi headers (lib/test_hmm_uapi.h,
    mm/gup_test.h) from the tree's root."""
    binary = out / HMM_TESTS
    run_logged(["gcc", "-O2", "-Wall", "-Werror",
                "-I", str(tree / "tools/testing/selftests"), "-I", str(tree),
                "-o", str(binary), str(tree / HMM_TESTS_SOURCE), "-lpthread"],
               log, f"build {HMM_TESTS}")
    return binary
