# Guest scenario: an ext4 filesystem mounted with -o dax on an fsdax
# namespace (MAP=dev: memmap on the device; MAP=mem: in RAM), so that files
# are the pmem's ZONE_DEVICE pages: written through shared mappings, proven
# to map the namespace's physical pages, pinned by direct I/O to the raw
# second region (/dev/pmem1), shared and copied across fork. Then REBINDS
# times: umount, rebind the pfn device (a new memmap init), mount, and the
# files read back intact and pin again over the new struct pages (the
# files no longer change after the first round: its fork check leaves its
# pattern in the first file, the pinning copies restore what they clear).
set -eu
. "$(dirname "$0")/lib.sh"
REBINDS=${REBINDS:-2}
MAP=${MAP:-dev}
FILES=${FILES:-4}
FILE_MIB=${FILE_MIB:-8}
need ndctl
need mkfs.ext4
need python3
enable_memmap_debug
quiesce
daxfs() { python3 "$(dirname "$0")/daxfs.py" "$@"; }

say phase=create map="$MAP"
create_fsdax "$MAP"
[ -b /dev/pmem1 ] || fail "no raw /dev/pmem1 (second region) for direct I/O"
drv=$ND_PMEM
ns_start=$(cat /sys/bus/nd/devices/namespace0.0/resource)
ns_size=$(cat /sys/bus/nd/devices/namespace0.0/size)
say pfn="$pfn" pfn_size="$(cat /sys/bus/nd/devices/$pfn/size)" \
	ns_start="$ns_start" ns_size="$ns_size"

mnt=/tmp/memlab-dax
mkdir -p "$mnt"
mkfs.ext4 -q -F -b 4096 /dev/pmem0 || fail "mkfs.ext4 /dev/pmem0"
mount_dax() {
	# ext4 refuses dax=always where the device cannot do DAX.
	mount -t ext4 -o dax=always /dev/pmem0 "$mnt" || fail "mount -o dax=always /dev/pmem0"
	grep -q " $mnt ext4 .*dax=always" /proc/mounts || fail "$mnt is not mounted dax=always"
}
# Everything a mounted filesystem hands out, checked on the current memmap.
use_files() {  # use_files ROUND
	daxfs placed "$mnt" "$ns_start" "$ns_size" || fail "DAX placement, round $1"
	daxfs pin "$mnt" /dev/pmem1 || fail "direct I/O from DAX mappings, round $1"
	daxfs fork "$mnt" || fail "DAX mappings across fork, round $1"
}

mount_dax
daxfs write "$mnt" "$FILES" "$FILE_MIB" || fail "write files through DAX mappings"
use_files 0
say files_used=0
before=$(daxfs sums "$mnt" | sed -n 's/^MEMLAB files_sha256=//p')
[ -n "$before" ] || fail "no checksum of the files"
umount "$mnt" || fail "umount $mnt"

say phase=rebind rebinds="$REBINDS"
now=""
i=1
while [ "$i" -le "$REBINDS" ]; do
	rebind "$drv" "$pfn"
	mount_dax
	now=$(daxfs sums "$mnt" | sed -n 's/^MEMLAB files_sha256=//p')
	[ "$now" = "$before" ] || fail "files changed across rebind $i"
	use_files "$i"
	umount "$mnt" || fail "umount $mnt after rebind $i"
	say rebind="$i" files_used="$i"
	i=$((i + 1))
done
say checksum_before="$before" checksum_after="$now"
say done=1
