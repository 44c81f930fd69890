# Guest scenario: fsdax namespace with map=dev (memmap on the device, so the
# pfn device's bind runs memmap_init_zone_device() with an altmap) on the
# legacy pmem region, then REBINDS unbind/bind cycles of the pfn device.
# Data written before the rebinds must read back identical after them.
set -eu
. "$(dirname "$0")/lib.sh"
REBINDS=${REBINDS:-3}
DATA_MIB=${DATA_MIB:-32}
MAP=${MAP:-dev}
need ndctl
enable_memmap_debug
quiesce

say phase=create map="$MAP"
create_fsdax "$MAP"
drv=$ND_PMEM
say pfn="$pfn" pfn_size="$(cat /sys/bus/nd/devices/$pfn/size)" \
	pfn_resource="$(cat /sys/bus/nd/devices/$pfn/resource)" \
	ns_size="$(cat /sys/bus/nd/devices/namespace0.0/size)"

head -c "$((DATA_MIB * 1048576))" /dev/urandom > /tmp/memlab-data
dd if=/tmp/memlab-data of=/dev/pmem0 bs=1M oflag=direct status=none || fail "write pmem0"
before=$(checksum /dev/pmem0 "$DATA_MIB")
[ "$before" = "$(checksum /tmp/memlab-data "$DATA_MIB")" ] || fail "pmem0 reads back other data than written"
say phase=rebind rebinds="$REBINDS"
i=1
while [ "$i" -le "$REBINDS" ]; do
	rebind "$drv" "$pfn"
	say rebind="$i"
	i=$((i + 1))
done
after=$(checksum /dev/pmem0 "$DATA_MIB")
say checksum_before="$before" checksum_after="$after"
[ "$before" = "$after" ] || fail "pmem data changed across rebinds"
say done=1
