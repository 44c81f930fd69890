# Guest scenario: the kernel's own mm selftests (run_vmtests.sh, its
# default set: nothing destructive) and the memory-hotplug selftest
# (mem-on-off-test.sh), as `memlab build` installed them from the tree of
# the kernel under test. Each test's result is reported, a known flaky one
# run again when it fails (kselftest-report.sh); the host compares the base
# and patched kernels' lists.
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kselftest-report.sh"
: "${KSELFTEST:?KSELFTEST must name the installed selftests (memlab build makes them)}"
: "${KCONFIG:?KCONFIG must name the kernel's .config}"
[ -x "$KSELFTEST/mm/run_vmtests.sh" ] || fail "no $KSELFTEST/mm/run_vmtests.sh"
[ -x "$KSELFTEST/memory-hotplug/mem-on-off-test.sh" ] ||
	fail "no $KSELFTEST/memory-hotplug/mem-on-off-test.sh"
need bash

# The shared root is read-only: some tests write beside themselves, the
# hugetlb cgroup ones mount under /mnt, and va_high_addr_switch.sh reads
# the kernel's config from /boot.
work=/tmp/kselftest
cp -r "$KSELFTEST" "$work"
for dir in /mnt /boot; do
	mount -t tmpfs "memlab-$(basename $dir)" $dir || fail "mount a tmpfs on $dir"
done
cp "$KCONFIG" "/boot/config-$(uname -r)"
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
# A hugetlb pool to start from, as a machine that uses hugetlb has:
# run_vmtests.sh grows it for its own tests and then restores it, and
# va_high_addr_switch.sh needs one (the script reserves it on arm64 only).
echo "${HUGEPAGES:-16}" > /proc/sys/vm/nr_hugepages
# Swap, which khugepaged's swap-in tests and the tests that page out need:
# the guest's legacy pmem region, a raw block device.
[ -b /dev/pmem0 ] || fail "no /dev/pmem0 for swap"
mkswap /dev/pmem0 >/dev/null && swapon /dev/pmem0 || fail "swap on /dev/pmem0"
say swap_kib="$(awk '$1 == "SwapTotal:" {print $2}' /proc/meminfo)"

# Run a suite's script in its directory, its output on the console as it
# comes and in OUT; its exit code in RC.
run_suite() {  # run_suite DIR OUT SCRIPT [ARG...]
	dir=$1 out=$2
	shift 2
	{ rc=0; (cd "$dir" && bash "$@") 2>&1 || rc=$?; echo "$rc" > "$out.rc"; } | tee "$out"
	RC=$(cat "$out.rc")
}

run_suite "$work/mm" /tmp/run_vmtests.out ./run_vmtests.sh
report_tap mm "$work/mm" /tmp/run_vmtests.out
say selftests_mm_exit="$RC" \
	selftests_mm_tests="$(tap_outcomes /tmp/run_vmtests.out | wc -l)" \
	selftests_mm_plan="$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' /tmp/run_vmtests.out)"

run_suite "$work/memory-hotplug" /tmp/mem-on-off-test.out ./mem-on-off-test.sh
say selftest=memory-hotplug:mem-on-off-test.sh outcome="$(outcome_of "$RC")" runs=1
# Its second half (memory notifier errors) ends the script with its first
# half's exit code when the injector is missing.
notifier_half=ran
grep -q '^skip extra tests' /tmp/mem-on-off-test.out && notifier_half=skipped
say selftests_hotplug_notifier="$notifier_half"
say done=1
