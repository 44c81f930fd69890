# Guest scenario: the kernel's own HMM selftests (tools/testing/selftests/mm
# hmm-tests, built from the kernel's tree) against test_hmm with all four
# devices: two DEVICE_PRIVATE, two DEVICE_COHERENT on the physical range
# the kernel command line reserved (memmap=...$...). Every case must pass:
# the hugetlbfs cases get huge pages, the GUP cases /sys/kernel/debug/gup_test.
# test_hmm gives huge pages to DEVICE_PRIVATE devices only, so the cases
# that migrate THPs to a device (COHERENT_LEFT_OUT) run on the private
# devices only where hmm-tests has all of them (an older one, without
# device THPs, runs every case everywhere); each one left out is reported.
# SLOW_LEFT_OUT names cases left out on every device (on KASAN kernels:
# those that run past the harness's time limit there).
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
: > "$out"
rc=0
run_hmm_tests() {
	"$HMM_TESTS" "$@" >> "$out" 2>&1 || rc=$?
}
listed=$("$HMM_TESTS" -l 2>&1 || true)
left_out=${COHERENT_LEFT_OUT:-}
for t in $left_out; do
	if ! echo "$listed" | grep -qw -- "$t"; then
		left_out=""
		break
	fi
done
# The harness stops at the first filter that matches: -T before -v.
set --
for t in ${SLOW_LEFT_OUT:-}; do
	if echo "$listed" | grep -qw -- "$t"; then
		set -- -T "$t" "$@"
		say hmm_slow_left_out="$t"
	fi
done
if [ -n "$left_out" ]; then
	run_hmm_tests "$@" -V hmm_device_coherent
	for t in $left_out; do
		set -- -T "$t" "$@"
		say hmm_left_out="hmm.hmm_device_coherent.$t"
	done
	run_hmm_tests "$@" -v hmm_device_coherent
else
	run_hmm_tests "$@"
fi
cat "$out"
# "# Totals: pass:N fail:N xfail:N xpass:N skip:N error:N", once per run,
# summed -> hmm_pass=N ...
totals=$(sed -n 's/^# Totals: //p' "$out" | tr ' ' '\n' | awk -F: '
	NF == 2 { if (!($1 in n)) order[++k] = $1; n[$1] += $2 }
	END { for (i = 1; i <= k; i++) printf "hmm_%s=%d ", order[i], n[order[i]] }')
# shellcheck disable=SC2086
say hmm_exit="$rc" $totals
grep -E '^not ok |^ok .* # SKIP' "$out" | while read -r line; do
	say hmm_not_passed="$(echo "$line" | tr ' ' '_')"
done
rmmod test_hmm || fail "rmmod test_hmm"
say done=1
