# Shared helpers for guest scenarios (sourced; runs inside the guest).
# Results go to stdout as "MEMLAB key=value ..." lines that the host parses.

say() { echo "MEMLAB $*"; }
fail() { echo "MEMLAB error=$(echo "$*" | tr ' ' '_')"; echo "scenario failed: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null 2>&1 || fail "guest lacks tool $1 (install it on the host)"; }

# Print the lab patch's memmap_init_zone_device() timing line on the console.
enable_memmap_debug() {
	echo 'func memmap_init_report +p' > /proc/dynamic_debug/control ||
		fail "cannot enable dynamic debug for memmap_init_report (lab patch)"
}

# Print the lab patch's timing lines of memory onlining on the console.
enable_online_debug() {
	for f in move_pfn_range_to_zone online_pages; do
		echo "func $f +p" > /proc/dynamic_debug/control ||
			fail "cannot enable dynamic debug for $f (lab patch)"
	done
}

# Stop udevd before timed work. Under -icount the guest has one vCPU, and
# udev's event workers (woken by every bind/unbind) otherwise run inside the
# measured window; that made devdax timings move by up to 12% between boots.
# Device nodes still appear: devtmpfs creates them.
quiesce() {
	if command -v udevadm >/dev/null 2>&1; then
		udevadm settle --timeout=30 || true
		udevadm control --exit 2>/dev/null && say quiesced=udev && return
	fi
	say quiesced=none
}

# Wait until the kernel has written the new message(s) to the console.
settle() { sleep 0.2; }

# The pfn device behind a pmem block device, e.g. pfn0.1.
pfn_of() { basename "$(readlink -f "/sys/block/$1/device")"; }

ND_PMEM=/sys/bus/nd/drivers/nd_pmem
DAX_PMEM=/sys/bus/nd/drivers/dax_pmem

# Make namespace0.0 an fsdax namespace with its memmap on the device (dev)
# or in RAM (mem); sets pfn, the device behind /dev/pmem0 on nd_pmem.
create_fsdax() {  # create_fsdax MAP
	ndctl create-namespace -f -e namespace0.0 -m fsdax -M "$1" >/dev/null ||
		fail "ndctl create-namespace fsdax map=$1"
	settle
	[ -b /dev/pmem0 ] || fail "no /dev/pmem0 after create-namespace map=$1"
	pfn=$(pfn_of pmem0)
}

# Make namespace0.0 a devdax namespace of this alignment; sets dax_dev, its
# nd device (e.g. dax0.1) on the dax_pmem driver.
create_devdax() {  # create_devdax ALIGN
	ndctl create-namespace -f -e namespace0.0 -m devdax -a "$1" >/dev/null ||
		fail "ndctl create-namespace devdax align=$1"
	settle
	[ -c /dev/dax0.0 ] || fail "no /dev/dax0.0 after create-namespace align=$1"
	dax_dev=$(basename "$(ls -d $DAX_PMEM/dax* | head -n 1)")
}

# The series' own line: how many threads shared each ZONE_DEVICE range.
enable_share_debug() {
	echo 'func memmap_init_zone_device +p' > /proc/dynamic_debug/control ||
		fail "cannot enable dynamic debug for memmap_init_zone_device"
}

# Make namespace0.0 and namespace1.0 fsdax namespaces (map=dev) and write
# DATA_MIB of random data to each /dev/pmemN, which must read back; reports
# pfn_sizeN and checksum_beforeN.
create_fsdax_pair() {
	for r in 0 1; do
		ndctl create-namespace -f -e "namespace$r.0" -m fsdax -M dev >/dev/null ||
			fail "ndctl create-namespace fsdax on namespace$r.0"
	done
	settle
	for r in 0 1; do
		[ -b "/dev/pmem$r" ] || fail "no /dev/pmem$r after create-namespace"
		say "pfn_size$r=$(cat "/sys/bus/nd/devices/$(pfn_of "pmem$r")/size")"
		head -c "$((DATA_MIB * 1048576))" /dev/urandom > "/tmp/memlab-data$r"
		dd if="/tmp/memlab-data$r" of="/dev/pmem$r" bs=1M oflag=direct status=none ||
			fail "write pmem$r"
		sum=$(checksum "/dev/pmem$r" "$DATA_MIB")
		[ "$sum" = "$(checksum "/tmp/memlab-data$r" "$DATA_MIB")" ] ||
			fail "pmem$r reads back other data than written"
		say "checksum_before$r=$sum"
	done
}

rebind() {  # rebind DRIVER_DIR DEVICE
	echo "$2" > "$1/unbind" || fail "unbind $2"
	echo "$2" > "$1/bind" || fail "bind $2"
	settle
}

# Use memory from userspace: files on a tmpfs of their own (movable pages),
# each file a rotation of one random chunk by its own odd number of bytes
# past whole pages, so that every page of every file holds other data (up
# to FILL_MAX_FILES files, 64 GiB): a page that two files share, or that the
# kernel hands out twice, reads back wrong.
FILL_DIR=/tmp/memlab-fill
FILL_CHUNK=/tmp/memlab-chunk
FILL_CHUNK_MIB=16
FILL_MAX_FILES=4096
fill_data() {  # fill_data FILE_NUMBER: the file's data, on stdout
	off=$(($1 * 4097 % (FILL_CHUNK_MIB * 1048576)))
	tail -c +$((off + 1)) $FILL_CHUNK && head -c "$off" $FILL_CHUNK
}

# fill_memory MiB: write at least that, in fill_files files of
# FILL_CHUNK_MIB; sets fill_files and fill_mib.
fill_memory() {
	fill_files=$((($1 + FILL_CHUNK_MIB - 1) / FILL_CHUNK_MIB))
	[ "$fill_files" -le $FILL_MAX_FILES ] ||
		fail "a fill of $1 MiB needs more than $FILL_MAX_FILES distinct files"
	fill_mib=$((fill_files * FILL_CHUNK_MIB))
	head -c $((FILL_CHUNK_MIB * 1048576)) /dev/urandom > $FILL_CHUNK
	mkdir -p $FILL_DIR
	mount -t tmpfs -o size=$((fill_mib + 1))m memlab-fill $FILL_DIR ||
		fail "mount a tmpfs for $fill_mib MiB of files"
	f=0
	while [ "$f" -lt "$fill_files" ]; do
		fill_data $f > $FILL_DIR/$f || fail "fill file $f"
		f=$((f + 1))
	done
}

# check_fill: read the files back; sets bad_files (other data than written).
# fail_on_bad_fill, once the caller has reported, fails the scenario on any.
check_fill() {
	bad_files=0
	f=0
	while [ "$f" -lt "$fill_files" ]; do
		fill_data $f | cmp -s - $FILL_DIR/$f || bad_files=$((bad_files + 1))
		f=$((f + 1))
	done
}

fail_on_bad_fill() {
	[ "$bad_files" -eq 0 ] ||
		fail "$bad_files of $fill_files files read back other data than written"
}

drop_fill() {
	umount $FILL_DIR || fail "umount the fill's tmpfs"
	rm -f $FILL_CHUNK
}

# kmem_add_offline DAX: hand the devdax device DAX (e.g. dax0.0) to the
# kernel as system RAM through dax kmem, every block left offline for the
# scenario to online itself, as daxctl would. Debian's kernels online
# hot-added memory as it is added (auto_online_blocks "online"): reported,
# then set to offline. Sets mem (the memory blocks' sysfs directory),
# blocks (the new blocks' directories) and nr_blocks.
kmem_add_offline() {
	mem=/sys/devices/system/memory
	[ -z "$(kmem_offline_blocks)" ] || fail "offline memory blocks before kmem"
	say auto_online="$(cat $mem/auto_online_blocks)"
	echo offline > $mem/auto_online_blocks || fail "cannot set auto_online_blocks to offline"
	daxctl reconfigure-device --mode=system-ram --no-online "$1" >/dev/null ||
		fail "daxctl reconfigure-device --mode=system-ram $1"
	settle
	blocks=$(kmem_offline_blocks)
	nr_blocks=$(echo "$blocks" | grep -c memory || true)
	[ "$nr_blocks" -gt 0 ] || fail "no memory blocks added by dax kmem"
}
kmem_offline_blocks() {
	grep -l '^offline$' /sys/devices/system/memory/memory*/state | sed 's,/state$,,'
}

# The kernel's count of memmap pages, those allocated at boot and later.
memmap_pages() {
	awk '$1 == "nr_memmap_pages" || $1 == "nr_memmap_boot_pages" {n += $2; seen++}
		END {if (seen == 2) print n}' /proc/vmstat
}

# The free pages of the first ZONE_MOVABLE, with those on its per-CPU lists:
# pages freed there (the hugetlb folios of kmem-online.sh's HVO step) wait
# on those lists and reach the free count only as the lists are drained,
# which may happen while a fill runs.
movable_free() {
	awk '/^Node/ {if (m) exit; m = / zone +Movable/; next}
		m && $1 == "nr_free_pages" {free = $2} m && $1 == "count:" {pcp += $2}
		END {if (free != "") print free + pcp}' /proc/zoneinfo
}

# fill_movable MiB: use memory onlined movable. tmpfs pages are movable, and
# ZONE_MOVABLE is the first zone movable allocations try, so files of most
# of its size land there. Reports the fill and ZONE_MOVABLE's free pages
# before and filled; fails unless every file reads back as written.
fill_movable() {
	free_before=$(movable_free)
	fill_memory "$1"
	free_filled=$(movable_free)
	check_fill
	say fill_mib="$fill_mib" movable_free_before="$free_before" \
		movable_free_filled="$free_filled" bad_files="$bad_files"
	fail_on_bad_fill
	drop_fill
}

checksum() {  # checksum DEVICE MiB
	head -c "$(($2 * 1048576))" "$1" | sha256sum | cut -d' ' -f1
}
