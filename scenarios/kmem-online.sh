# Guest scenario: the legacy pmem region as devdax, handed to the kernel as
# system RAM (dax kmem) and onlined movable block by block, each online
# timed by the lab patch; then most of the new memory is used from
# userspace (tmpfs files of random data, read back) and freed. CYCLES times
# all its blocks are offlined, onlined again and an eighth of the memory
# used the same way; they must offline cleanly at the end. With
# MEMMAP_ON_MEMORY=1 (and memory_hotplug.memmap_on_memory=1 on the command
# line) each block carries its own memmap in its first pages; with HVO=1
# too, hugetlb folios are allocated on those blocks with HVO on, and must
# leave that memmap alone.
set -eu
. "$(dirname "$0")/lib.sh"
CYCLES=${CYCLES:-3}
FILL_MIB=${FILL_MIB:-}	# default: 3/4 of the hot-added memory, 1/8 in a cycle
MEMMAP_ON_MEMORY=${MEMMAP_ON_MEMORY:-0}
HVO=${HVO:-0}
need ndctl
need daxctl
enable_online_debug
quiesce

say phase=create
ndctl create-namespace -f -e namespace0.0 -m devdax -a 2M >/dev/null ||
	fail "ndctl create-namespace devdax"
settle
[ -c /dev/dax0.0 ] || fail "no /dev/dax0.0 after create-namespace"
# Set while device_dax has the device: kmem reads it when it adds the memory.
memmap_attr=/sys/bus/dax/devices/dax0.0/memmap_on_memory
echo "$MEMMAP_ON_MEMORY" > $memmap_attr ||
	fail "dax0.0 refused memmap_on_memory=$MEMMAP_ON_MEMORY"
say memmap_on_memory="$(cat $memmap_attr)"

kmem_add_offline dax0.0
block_bytes=$((0x$(cat $mem/block_size_bytes)))
say block_bytes="$block_bytes" blocks="$nr_blocks"

set_state() {  # set_state STATE: every kmem block to STATE, checked
	for b in $blocks; do
		echo "$1" > "$b/state" || fail "$1 $(basename "$b")"
	done
	for b in $blocks; do
		want=$1
		[ "$want" = online_movable ] && want=online
		[ "$(cat "$b/state")" = "$want" ] ||
			fail "$(basename "$b") is $(cat "$b/state"), not $want"
	done
	settle
}

say phase=online cycles="$CYCLES"
# Use the new memory; each file's data must read back as written.
use_blocks() {  # use_blocks EIGHTHS: fill that many eighths of it
	fill_movable "${FILL_MIB:-$((nr_blocks * block_bytes * $1 / 8 / 1048576))}"
}
set_state online_movable
for b in $blocks; do
	grep -q Movable "$b/valid_zones" || fail "$(basename "$b") not in ZONE_MOVABLE"
done
# HVO frees most of the memmap of each hugetlb folio, but not of one whose
# struct pages lie on a block that carries its own memmap: the self-hosted
# mark in the struct pages of that memmap, set before the block goes
# online, tells it so. Half of the onlined memory as 2 MB folios, from
# ZONE_MOVABLE (the first zone hugetlb's movable allocations try), with
# HVO on: the kernel's count of memmap pages must not move.
if [ "$HVO" = 1 ]; then
	[ "$MEMMAP_ON_MEMORY" = 1 ] || fail "HVO=1 needs MEMMAP_ON_MEMORY=1"
	hvo=/proc/sys/vm/hugetlb_optimize_vmemmap
	pool=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
	[ -w $hvo ] && [ -w $pool ] || fail "no $hvo or $pool (HVO=1)"
	[ "$(cat $pool)" = 0 ] || fail "the 2 MB hugetlb pool is not empty"
	hvo_was=$(cat $hvo)
	echo 1 > $hvo && [ "$(cat $hvo)" = 1 ] || fail "cannot turn HVO on"
	want=$((nr_blocks * block_bytes / 2 / 2097152))
	memmap_before=$(memmap_pages)
	free_before=$(movable_free)
	echo "$want" > $pool && [ "$(cat $pool)" = "$want" ] ||
		fail "$(cat $pool) of $want hugetlb folios allocated"
	memmap_after=$(memmap_pages)
	free_after=$(movable_free)
	[ -n "$memmap_before" ] && [ -n "$memmap_after" ] ||
		fail "no nr_memmap_pages or nr_memmap_boot_pages in /proc/vmstat"
	say hvo_folios="$want" hvo_movable_taken=$((free_before - free_after)) \
		hvo_memmap_delta=$((memmap_after - memmap_before))
	echo 0 > $pool && echo "$hvo_was" > $hvo || fail "cannot free the hugetlb folios"
	settle
fi

use_blocks 6
i=1
while [ "$i" -le "$CYCLES" ]; do
	set_state offline
	set_state online_movable
	use_blocks 1
	say cycle="$i"
	i=$((i + 1))
done

say phase=offline
set_state offline
say done=1
