# Reporting the kernel selftests' outcomes, for mm-selftests.sh (sourced
# after lib.sh; runs inside the guest). A test's report is
# "MEMLAB selftest=SUITE:NAME outcome=pass|fail|skip runs=N", spaces in NAME
# as underscores.

outcome_of() {  # outcome_of EXIT_CODE
	case $1 in 0) echo pass ;; 4) echo skip ;; *) echo fail ;; esac
}

# Tests of run_vmtests.sh that fail now and then under TCG on either
# kernel, as CATEGORY:NAME (spaces in NAME as underscores): uffd-unit-tests'
# event tests can meet ENOENT from UFFDIO_COPY, on base too; 7.2's
# khugepaged finds fewer than the 64 pages it paged out swapped in
# collapse_max_ptes_swap, on base (the -s 2 run) as on patched (the first)
# in one run of both. When one fails, its category runs again
# (run_vmtests.sh -t, so with the same setup around the test) until the
# test passes, up to RUNS runs of it in all. Both kernels get the same
# reruns; the host shows each. Any other failure stands as it is.
FLAKY="userfaultfd:uffd-unit-tests thp:khugepaged thp:khugepaged_-s_2"
RUNS=3

# run_vmtests.sh's tests as "OUTCOME|NAME": its TAP lines "ok N NAME",
# "ok N NAME # SKIP", "not ok N NAME # exit=R", and the skips it counts
# with no TAP line of their own, "# [SKIP] ./NAME" (7.2's khugepaged on
# files, without XFS). (The tests' own output comes prefixed with "# ".)
tap_outcomes() {  # tap_outcomes FILE
	sed -n -e 's/^ok [0-9]* \(.*\) # SKIP$/skip|\1/p; t' \
		-e 's/^ok [0-9]* \(.*\)$/pass|\1/p; t' \
		-e 's/^not ok [0-9]* \(.*\) # exit=[0-9]*$/fail|\1/p; t' \
		-e 's/^# \[SKIP\] \.\/\(.*\)$/skip|\1/p' "$1"
}

# Run a failed flaky test's category again until the test passes or its
# runs are used (a skip is no pass); prints "OUTCOME RUNS". The reruns'
# output goes to stderr, the console.
rerun() {  # rerun DIR CATEGORY NAME
	runs=1 outcome=fail
	while [ "$outcome" != pass ] && [ "$runs" -lt "$RUNS" ]; do
		runs=$((runs + 1))
		echo "memlab: $3 failed; run $runs of $RUNS: run_vmtests.sh -t $2" >&2
		(cd "$1" && bash ./run_vmtests.sh -t "$2" </dev/null 2>&1 || true) |
			tee /tmp/rerun.out >&2
		outcome=$(tap_outcomes /tmp/rerun.out |
			awk -F'|' -v name="$3" '$2 == name { print $1; exit }')
	done
	[ "$outcome" = pass ] || outcome=fail
	echo "$outcome $runs"
}

# Report each test of a run_vmtests.sh output, a flaky one that failed
# after its reruns.
report_tap() {  # report_tap SUITE DIR FILE
	tap_outcomes "$3" | while IFS='|' read -r outcome name; do
		runs=1 key=$(echo "$name" | tr ' ' '_')
		if [ "$outcome" = fail ]; then
			for flaky in $FLAKY; do
				[ "${flaky#*:}" = "$key" ] || continue
				result=$(rerun "$2" "${flaky%%:*}" "$name")
				outcome=${result% *} runs=${result#* }
			done
		fi
		say selftest="$1:$key" outcome="$outcome" runs="$runs"
	done
}
