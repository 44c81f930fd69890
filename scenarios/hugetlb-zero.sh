# Guest scenario (boot with init_on_alloc=1): dirty memory, then allocate
# HUGEPAGES 2 MB hugetlb pages (timed: init_on_alloc zeroes each one as it
# is allocated; the timer brackets the one write() to nr_hugepages), ALLOCS
# times over freshly dirtied memory (each a sample: background work that
# lands in one window shows as one outlier, not as the boot's figure);
# check the last pool's hugetlb pages and THP-backed memory read zero.
set -eu
. "$(dirname "$0")/lib.sh"
HUGEPAGES=${HUGEPAGES:-512}
THP_MIB=${THP_MIB:-64}
CHECK_MIB=${CHECK_MIB:-0}   # hugetlb MiB to check for zeros; 0: all of it
DIRTY_MIB=${DIRTY_MIB:-$((HUGEPAGES * 2))}   # memory dirtied (and freed) first
ALLOCS=${ALLOCS:-1}
need python3
grep -qw init_on_alloc=1 /proc/cmdline || fail "booted without init_on_alloc=1"
zc() { python3 "$(dirname "$0")/zerocheck.py" "$@"; }

quiesce
i=0
while [ "$i" -lt "$ALLOCS" ]; do
	i=$((i + 1))
	echo 0 > /proc/sys/vm/nr_hugepages || fail "freeing the hugetlb pool"
	zc dirty "$DIRTY_MIB" || fail "dirtying memory"
	zc alloc "$HUGEPAGES" || fail "allocating hugetlb pages"
	got=$(cat /proc/sys/vm/nr_hugepages)
	say hugepages="$got" alloc="$i"
	[ "$got" -eq "$HUGEPAGES" ] || fail "only $got of $HUGEPAGES hugetlb pages"
done
say allocs="$i"

mkdir -p /tmp/huge
mount -t hugetlbfs none /tmp/huge || fail "mount hugetlbfs"
check=$((got * 2))
[ "$CHECK_MIB" -gt 0 ] && [ "$CHECK_MIB" -lt "$check" ] && check=$CHECK_MIB
zc file /tmp/huge/zero "$((check * 1048576))" || fail "hugetlb pages are not zero"
rm -f /tmp/huge/zero
echo 0 > /proc/sys/vm/nr_hugepages
# THP for every anonymous mapping (a minimal kernel may lack madvise()).
echo always > /sys/kernel/mm/transparent_hugepage/enabled || fail "cannot enable THP"
zc thp "$THP_MIB" || fail "THP memory is not zero (or no THP was used)"
say done=1
