# Guest scenario: one pmem region reconfigured CYCLES times, rotating
# through fsdax map=dev, fsdax map=mem and devdax align 4K, 2M and 1G, so
# that each memmap init writes over struct pages another layout left
# behind. Each cycle writes fresh random data, reads it back, rebinds the
# device (another memmap init) and reads it back again; a devdax layout's
# pages are then taken by get_user_pages() from another process (daxio.py
# fork).
set -eu
. "$(dirname "$0")/lib.sh"
CYCLES=${CYCLES:-10}
DATA_MIB=${DATA_MIB:-8}
LAYOUTS=${LAYOUTS:-"fsdax:dev fsdax:mem devdax:4K devdax:2M devdax:1G"}
need ndctl
need python3
enable_memmap_debug
quiesce
daxio() { python3 "$(dirname "$0")/daxio.py" "$@"; }
bytes=$((DATA_MIB * 1048576))

# Each cycle sets pfn_size and the checksums read before and after the rebind.
fsdax_cycle() {  # fsdax_cycle MAP
	create_fsdax "$1"
	dd if=/tmp/memlab-data of=/dev/pmem0 bs=1M oflag=direct status=none ||
		fail "write pmem0 map=$1"
	read=$(checksum /dev/pmem0 "$DATA_MIB")
	rebind "$ND_PMEM" "$pfn"
	rebound=$(checksum /dev/pmem0 "$DATA_MIB")
	pfn_size=$(cat "/sys/bus/nd/devices/$pfn/size")
}

devdax_cycle() {  # devdax_cycle ALIGN
	create_devdax "$1"
	drv=$DAX_PMEM
	dev=$dax_dev
	align=$(cat /sys/bus/dax/devices/dax0.0/align)
	maplen=$(( (bytes + align - 1) / align * align ))
	daxio write /dev/dax0.0 /tmp/memlab-data "$maplen" || fail "write dax0.0 align=$1"
	read=$(daxio sum /dev/dax0.0 "$bytes" "$maplen") || fail "read dax0.0 align=$1"
	rebind "$drv" "$dev"
	[ -c /dev/dax0.0 ] || fail "no /dev/dax0.0 after rebind, align=$1"
	rebound=$(daxio sum /dev/dax0.0 "$bytes" "$maplen") ||
		fail "read dax0.0 after rebind, align=$1"
	daxio fork /dev/dax0.0 "$maplen" >/dev/null || fail "dax0.0 mapping across fork, align=$1"
	pfn_size=$(cat "/sys/bus/nd/devices/$dev/size")
}

say phase=stress cycles="$CYCLES"
layouts=$(echo "$LAYOUTS" | wc -w)
i=0
while [ "$i" -lt "$CYCLES" ]; do
	layout=$(echo "$LAYOUTS" | tr -s ' ' '\n' | sed -n "$((i % layouts + 1))p")
	head -c "$bytes" /dev/urandom > /tmp/memlab-data
	written=$(sha256sum < /tmp/memlab-data | cut -d' ' -f1)
	case $layout in
	fsdax:*) fsdax_cycle "${layout#*:}" ;;
	devdax:*) devdax_cycle "${layout#*:}" ;;
	*) fail "unknown layout $layout" ;;
	esac
	say cycle="$i" layout="$layout" pfn_size="$pfn_size" checksum_written="$written" \
		checksum_read="$read" checksum_rebound="$rebound"
	i=$((i + 1))
done
say done=1
