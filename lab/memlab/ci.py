"""`memlab ci`: what `.ci/run` runs, the default plan of `memlab test`,
each step timed and recorded in results/ci/ (runrecord.py).

A run whose compiler cache was empty when it started is a cold run: it
builds every kernel from nothing, the time a fresh machine takes. Its
record is results/ci/cold.json; any other run's is results/ci/warm.json.
"""
from __future__ import annotations

from . import build, testcmd
from .runner import say
from .runrecord import CI_RESULTS, RunRecord, totals


def ccache_files() -> int:
    """Entries in the compiler cache the builds use (0 before ccache is
    installed: `memlab test` installs it)."""
    return build.ccache_stats().get("files_in_cache", 0)


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
