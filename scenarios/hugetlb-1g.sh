# Guest scenario (boot with hugepagesz=1G hugepages=1): the 1 GB hugetlb
# page reserved at boot, ROUNDS times given to a file of a 1 GB hugetlbfs
# and zeroed for it, by a write fault in its middle (even rounds, timed) or
# by fallocate() (odd rounds): each time it must read zero, and is dirtied
# again before it goes back to the pool. Then RUNTIME_ALLOCS times a second page
# is allocated at run time (init_on_alloc clears it there, the series in one
# clear_pages() run), given to a file the same way and freed to the buddy
# allocator, while the boot page stays in a file of its own; then the boot
# page is freed too. With HVO=1 (and hugetlb_free_vmemmap=on) the kernel
# frees the vmemmap of hugetlb pages: allocating a page frees its vmemmap
# and freeing one restores it, which the kernel's count of memmap pages
# shows.
set -eu
. "$(dirname "$0")/lib.sh"
ROUNDS=${ROUNDS:-4}
RUNTIME_ALLOCS=${RUNTIME_ALLOCS:-0}
HVO=${HVO:-0}
need python3
if [ "$HVO" = 1 ]; then
	say hvo="$(cat /proc/sys/vm/hugetlb_optimize_vmemmap 2>/dev/null || echo none)"
fi
# "mem auto-init: stack:..., heap alloc:on, heap free:off" at boot.
say heap_alloc_init="$(dmesg | sed -n 's/.*mem auto-init:.* heap alloc:\([a-z]*\).*/\1/p')"
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
# The boot page stays in a file meanwhile, so that shrinking the pool
# frees the page just allocated.
i=0
if [ "$RUNTIME_ALLOCS" -gt 0 ]; then
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
os.posix_fallocate(fd, 0, 1 << 30)' /tmp/huge1g/boot-page || fail "keep the boot page in a file"
	while [ "$i" -lt "$RUNTIME_ALLOCS" ]; do
		# The kernel gives up on a 1 GB range at the first page it cannot
		# migrate at that moment: free the page cache, compact, and try
		# again, a few times.
		tries=0
		while [ "$tries" -lt 5 ] && [ "$(cat "$pool")" -lt 2 ]; do
			tries=$((tries + 1))
			sync
			echo 3 > /proc/sys/vm/drop_caches
			echo 1 > /proc/sys/vm/compact_memory
			before=$(memmap_pages)
			echo 2 > "$pool"
		done
		say runtime_alloc_tries="$tries"
		[ "$(cat "$pool")" -eq 2 ] || fail "no 1 GB page allocated at run time ($i)"
		allocated=$(memmap_pages)
		zc gigantic /tmp/huge1g/zero $((1 << 30)) fault || fail "run-time page $i: not zero"
		echo 1 > "$pool"
		[ "$(cat "$pool")" -eq 1 ] || fail "the page allocated at run time stayed ($i)"
		freed=$(memmap_pages)
		[ -n "$before" ] && [ -n "$freed" ] ||
			fail "no nr_memmap_pages or nr_memmap_boot_pages in /proc/vmstat"
		say runtime_alloc_memmap_delta=$((allocated - before)) \
			runtime_free_memmap_delta=$((freed - allocated))
		i=$((i + 1))
	done
	rm /tmp/huge1g/boot-page
	before=$(memmap_pages)
	echo 0 > "$pool"
	[ "$(cat "$pool")" -eq 0 ] || fail "the boot page stayed"
	say boot_page_free_memmap_delta=$(($(memmap_pages) - before))
fi
say runtime_allocs="$i"
umount /tmp/huge1g
say done=1
