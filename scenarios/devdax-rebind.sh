# Guest scenario: devdax namespace (ALIGN, default 2M: compound pages) on the
# legacy pmem region; REBINDS unbind/bind cycles of the dax_pmem device, each
# re-running memmap_init_zone_device(). Data written through /dev/dax0.0
# before the rebinds must read back identical after them; then a mapping
# is held across fork, and the child's store seen by the parent.
set -eu
. "$(dirname "$0")/lib.sh"
REBINDS=${REBINDS:-3}
ALIGN=${ALIGN:-2M}
DATA_MIB=${DATA_MIB:-32}
need ndctl
need daxctl
enable_memmap_debug
quiesce

say phase=create mode=devdax align="$ALIGN"
create_devdax "$ALIGN"
drv=$DAX_PMEM
dev=$dax_dev
say nd_dax="$dev" pfn_size="$(cat /sys/bus/nd/devices/$dev/size)" \
	dax_size="$(cat /sys/bus/dax/devices/dax0.0/size)" \
	align="$(cat /sys/bus/dax/devices/dax0.0/align)"

# Device DAX supports only mmap, in whole-alignment units.
need python3
align=$(cat /sys/bus/dax/devices/dax0.0/align)
bytes=$((DATA_MIB * 1048576))
maplen=$(( (bytes + align - 1) / align * align ))
head -c "$bytes" /dev/urandom > /tmp/memlab-data
daxio() { python3 "$(dirname "$0")/daxio.py" "$@"; }
daxio write /dev/dax0.0 /tmp/memlab-data "$maplen" || fail "write dax0.0"
before=$(daxio sum /dev/dax0.0 "$bytes" "$maplen") || fail "read dax0.0"
[ "$before" = "$(sha256sum < /tmp/memlab-data | cut -d' ' -f1)" ] ||
	fail "dax0.0 reads back other data than written"
say phase=rebind rebinds="$REBINDS"
i=1
while [ "$i" -le "$REBINDS" ]; do
	rebind "$drv" "$dev"
	[ -c /dev/dax0.0 ] || fail "no /dev/dax0.0 after rebind $i"
	say rebind="$i"
	i=$((i + 1))
done
daxio fork /dev/dax0.0 "$maplen" || fail "dax0.0 mapping across fork"
after=$(daxio sum /dev/dax0.0 "$bytes" "$maplen") || fail "read dax0.0 after rebinds"
say checksum_before="$before" checksum_after="$after"
[ "$before" = "$after" ] || fail "devdax data changed across rebinds"
say done=1
