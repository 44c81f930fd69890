# Guest scenario (boot with hugepagesz=1G hugepages=1): the 1 GB hugetlb
# page reserved at boot, ROUNDS times given to a file of a 1 GB hugetlbfs
# and zeroed for it, by a write fault in its middle (even rounds, timed) or
# by fallocate() (odd rounds): each time it must read zero, and is dirtied
# again before it goes back to the pool. With HVO=1 (and
# hugetlb_free_vmemmap=on), report whether the kernel frees the vmemmap of
# hugetlb pages.
set -eu
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-4}
HVO=${HVO:-0}
need python3
if [ "$HVO" = 1 ]; then
	say hvo="$(cat /proc/sys/vm/hugetlb_optimize_vmemmap 2>/dev/null || echo none)"
fi
pool=/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages
[ -e "$pool" ] || fail "no 1 GB hugetlb pages here"
say gigantic_pages="$(cat "$pool")"
[ "$(cat "$pool")" -eq 1 ] || fail "no 1 GB hugetlb page reserved at boot"
zc() { python3 "$(dirname "$0")/zerocheck.py" "$@"; }

quiesce
mkdir -p /tmp/huge1g
mount -t hugetlbfs -o pagesize=1G none /tmp/huge1g || fail "mount a 1 GB hugetlbfs"
i=0
while [ "$i" -lt "$ROUNDS" ]; do
	how=fault
	[ $((i % 2)) -eq 1 ] && how=fallocate
	zc gigantic /tmp/huge1g/zero $((1 << 30)) "$how" || fail "round $i ($how): not zero"
	i=$((i + 1))
done
say rounds="$i"
umount /tmp/huge1g
say done=1
