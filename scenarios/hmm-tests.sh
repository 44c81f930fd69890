# Guest scenario: the kernel's own HMM selftests (tools/testing/selftests/mm
# hmm-tests, built from the kernel's tree) against test_hmm with all four
# devices: two DEVICE_PRIVATE, two DEVICE_COHERENT on the physical range
# the kernel command line reserved (memmap=...$...). Every case must pass:
# the hugetlbfs cases get huge pages, the GUP cases /sys/kernel/debug/gup_test.
set -eu
. "$(dirname "$0")/lib.sh"
: "${MODULE:?MODULE must name the built test_hmm.ko}"
: "${HMM_TESTS:?HMM_TESTS must name the built hmm-tests}"
: "${SPM_ADDR0:?SPM_ADDR0 must give the first coherent device memory address}"
: "${SPM_ADDR1:?SPM_ADDR1 must give the second coherent device memory address}"
HUGEPAGES=${HUGEPAGES:-16}
need insmod
need rmmod
[ -f "$MODULE" ] || fail "no module $MODULE (CONFIG_TEST_HMM=m in the lab config?)"
[ -x "$HMM_TESTS" ] || fail "no $HMM_TESTS (memlab build makes it next to the kernel)"
enable_memmap_debug
quiesce
if [ ! -e /sys/kernel/debug/gup_test ]; then
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
fi
[ -e /sys/kernel/debug/gup_test ] || fail "no /sys/kernel/debug/gup_test (CONFIG_GUP_TEST)"
echo "$HUGEPAGES" > /proc/sys/vm/nr_hugepages
# Huge pages where asked for (madvise), as distributions configure THP: the
# device-exclusive cases need the small pages of an ordinary mapping.
echo madvise > /sys/kernel/mm/transparent_hugepage/enabled || fail "cannot set THP to madvise"
say hugepages="$(cat /proc/sys/vm/nr_hugepages)"

insmod "$MODULE" spm_addr_dev0="$SPM_ADDR0" spm_addr_dev1="$SPM_ADDR1" ||
	fail "insmod test_hmm with coherent devices at $SPM_ADDR0, $SPM_ADDR1"
settle
for d in 0 1 2 3; do
	[ -c "/dev/hmm_dmirror$d" ] || fail "no /dev/hmm_dmirror$d after insmod"
done
say phase=hmm-tests devices=4
out=/tmp/memlab-hmm-tests.out
rc=0
"$HMM_TESTS" > "$out" 2>&1 || rc=$?
cat "$out"
# "# Totals: pass:N fail:N xfail:N xpass:N skip:N error:N" -> hmm_pass=N ...
totals=$(sed -n 's/^# Totals: //p' "$out" | sed 's/\([a-z]*\):/hmm_\1=/g')
# shellcheck disable=SC2086
say hmm_exit="$rc" $totals
grep -E '^not ok |^ok .* # SKIP' "$out" | while read -r line; do
	say hmm_not_passed="$(echo "$line" | tr ' ' '_')"
done
rmmod test_hmm || fail "rmmod test_hmm"
say done=1
