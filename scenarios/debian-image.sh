# Guest scenario of the Debian image (memlab image): run at boot by a
# systemd unit of the image, under Debian's own systemd, udev, ndctl and
# daxctl, on whichever kernel package it booted. An operator's steps on a
# pmem region: an fsdax namespace created, data written, the namespace
# rebound and the data read back; the region made devdax and handed to the
# kernel as system RAM with daxctl (Debian's own way: the blocks go online
# as they are added) and used; each memmap init timed by the kernel's own
# debug line (dynamic debug), as the reference postings measured. Last,
# after phase=hvo, the HVO reproducer of the stable fix: 2 MB hugetlb pages
# with their vmemmap optimized, allocated and freed, and the kernel's
# "Bad page state" reports counted (stock 6.12.118 prints them).
set -eu
. "$(dirname "$0")/lib.sh"
DATA_MIB=${DATA_MIB:-64}
FILL_MIB=${FILL_MIB:-256}
HVO_PAGES=${HVO_PAGES:-64}
need ndctl
need daxctl
say kernel="$(uname -r)" newest_kernel="$(linux-version list | linux-version sort | tail -n 1)" \
	packages="$(dpkg-query -W -f='${Package}=${Version},' 'linux-image-*' | tr -d ' ')"
echo 'func memmap_init_zone_device +p' > /proc/dynamic_debug/control ||
	fail "cannot enable the memmap init debug line"
udevadm settle --timeout=60 || true
[ -e /sys/bus/nd/devices/region0 ] || fail "no pmem region (memmap=)"

say phase=fsdax
create_fsdax dev
head -c "$((DATA_MIB * 1048576))" /dev/urandom > /tmp/memlab-data
dd if=/tmp/memlab-data of=/dev/pmem0 bs=1M oflag=direct status=none || fail "write pmem0"
say pfn_size="$(cat "/sys/bus/nd/devices/$pfn/size")" \
	checksum_before="$(checksum /dev/pmem0 "$DATA_MIB")"
rebind $ND_PMEM "$pfn"
udevadm settle --timeout=60 || true
[ -b /dev/pmem0 ] || fail "no /dev/pmem0 after the rebind"
say checksum_after="$(checksum /dev/pmem0 "$DATA_MIB")"

say phase=kmem
total_before=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
ndctl create-namespace -f -e namespace0.0 -m devdax -a 2M >/dev/null ||
	fail "ndctl create-namespace devdax"
udevadm settle --timeout=60 || true
# Debian's kernels online hot-added memory as it is added
# (auto_online_blocks "online"): --force lets the kernel do so.
daxctl reconfigure-device --mode=system-ram --force dax0.0 >/dev/null ||
	fail "daxctl reconfigure-device --mode=system-ram --force dax0.0"
settle
total_after=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
online=$(daxctl list -d dax0.0 | tr -d ' \n' | grep -o '"online_memblocks":[0-9]*' |
	cut -d: -f2)
say kmem_blocks="$online" mem_total_before_kb="$total_before" \
	mem_total_after_kb="$total_after"
fill_memory "$FILL_MIB"
check_fill
say fill_mib="$fill_mib" bad_files="$bad_files"
drop_fill

say phase=hvo
echo 1 > /proc/sys/vm/hugetlb_optimize_vmemmap || fail "cannot turn HVO on"
pool=/proc/sys/vm/nr_hugepages
echo "$HVO_PAGES" > $pool
got=$(cat $pool)
echo 0 > $pool
settle
say hvo_pages="$got" hvo_left="$(cat $pool)" \
	hvo_bad_page_reports="$(dmesg | grep -c 'BUG: Bad page state' || true)"
say done=1
