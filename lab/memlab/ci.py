"""`memlab ci`: what `.ci/run` runs, the default plan of `memlab test`,
each step timed and recorded in results/ci/ (runrecord.py).

A run whose compiler cache was empty when it started is a cold run: it
builds every kernel from nothing, the time a fresh machine takes. Its
record is results/ci/cold.json; any other run's is results/ci/warm.json.
"""
from __future__ import annotations

import subprocess

from . import build, testcmd
from .runner import say
from .runrecord import CI_RESULTS, RunRecord, totals


def ccache_files() -> int | None:
    """Entries in the compiler cache the builds use; None when unknown."""
    try:
        res = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True,
                             env=build.build_env(), check=False)
    except OSError:
        return 0     # not installed yet (`memlab test` installs it): nothing cached
    for line in res.stdout.splitlines():
        key, _, value = line.partition("\t")
        if key == "files_in_cache" and value.strip().isdigit():
            return int(value)
    return None


def run() -> int:
    cold = ccache_files() == 0
    test = testcmd.execute()
    test.print_summary()
    exit_code = 0 if test.ok else 1
    record = RunRecord.now(exit_code, test.seconds, test.records(),
                           testcmd.provenance_of_plan(), cold=cold)
    if exit_code == 0:
        # Passing runs only: a failed one leaves the last passing records.
        testcmd.record(test, full=False)
        path = record.write(CI_RESULTS / ("cold.json" if cold else "warm.json"))
        say(f"CI run ({'cold' if cold else 'warm'}, {record.seconds / 60:.1f} min) "
            f"recorded in {path}")
    passed, failed = totals(record.steps)
    print(f"memlab: {passed} passed, {failed} failed", flush=True)
    return exit_code
