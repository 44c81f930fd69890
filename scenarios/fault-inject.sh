# Guest scenario (a kernel with fault injection and kmemleak): faults during
# the work of the series, each met by a clean success or a clean failure.
#  1. binds: the pfn device of an fsdax namespace (map=dev) on region 0 is
#     bound with the Nth slab or page allocation of memremap_pages() failed
#     (fail-nth, failslab and fail_page_alloc), for N = 1, 2, ... until a
#     bind meets no fault. A bind that succeeds must read back the
#     namespace's data; one that fails must leave the device unbound and
#     the next bind must work. Then a bind with only the allocation of
#     the chunks that share a large range among the CPUs failed must
#     succeed (the binding task initializes the range alone).
#  2. onlining: region 1 as dax kmem, each block onlined with the memory
#     notifier failing MEM_GOING_ONLINE (the online must fail and the block
#     stay offline), then onlined for real, filled and read back, offlined.
#  3. CPU offline: the namespace rebound while CPU 1, which shares its
#     memmap init, goes offline and comes back over and over, until one
#     init met an offline under way.
# Then no new kmemleak report, and a last bind reads back the data.
set -eu
. "$(dirname "$0")/lib.sh"
DATA_MIB=${DATA_MIB:-2}
CPU_ROUNDS=${CPU_ROUNDS:-8}
MAX_CPU_ROUNDS=${MAX_CPU_ROUNDS:-40}
MAX_NTH=${MAX_NTH:-2000}
need ndctl
need daxctl
enable_memmap_debug
enable_share_debug
enable_online_debug
quiesce
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
dbg=/sys/kernel/debug
[ -e $dbg/kmemleak ] || fail "no $dbg/kmemleak (CONFIG_DEBUG_KMEMLEAK)"
[ -d $dbg/failslab ] && [ -d $dbg/fail_page_alloc ] ||
	fail "no failslab/fail_page_alloc in debugfs (CONFIG_FAULT_INJECTION_DEBUG_FS)"
notifier=$dbg/notifier-error-inject/memory/actions/MEM_GOING_ONLINE/error
[ -e $notifier ] || fail "no $notifier (CONFIG_MEMORY_NOTIFIER_ERROR_INJECT)"
# What boot left behind is not this scenario's.
echo clear > $dbg/kmemleak

say phase=create
ndctl create-namespace -f -e namespace0.0 -m fsdax -M dev >/dev/null ||
	fail "ndctl create-namespace fsdax on namespace0.0"
settle
[ -b /dev/pmem0 ] || fail "no /dev/pmem0 after create-namespace"
pfn=$(pfn_of pmem0)
say pfn_size="$(cat /sys/bus/nd/devices/$pfn/size)"
head -c "$((DATA_MIB * 1048576))" /dev/urandom > /tmp/memlab-data
dd if=/tmp/memlab-data of=/dev/pmem0 bs=1M oflag=direct status=none || fail "write pmem0"
sum=$(checksum /tmp/memlab-data "$DATA_MIB")
[ "$(checksum /dev/pmem0 "$DATA_MIB")" = "$sum" ] || fail "pmem0 reads back other data"
data_kept() { [ "$(checksum /dev/pmem0 "$DATA_MIB")" = "$sum" ]; }
bound() { [ -e "$ND_PMEM/$pfn" ]; }

say phase=bind-faults
# symbol_range NAME: the start and end address of a kernel function.
symbol_range() {
	awk -v name="$1" '$3 == name {f = 1; printf "0x%s ", $1; next}
		f {print "0x" $1; exit}' /proc/kallsyms
}
set -- $(symbol_range memremap_pages) $(symbol_range __add_pages)
[ "$#" -eq 4 ] || fail "memremap_pages or __add_pages missing from /proc/kallsyms"
# Only fail-nth injects (probability 0), into sleeping allocations of any
# order too, quietly, and only into what memremap_pages() allocates (the
# work of the series) but __add_pages(), whose failure x86's add_pages()
# reports with a WARN by design.
for f in failslab fail_page_alloc; do
	echo 0 > $dbg/$f/probability
	echo N > $dbg/$f/ignore-gfp-wait
	echo 0 > $dbg/$f/verbose
	echo "$1" > $dbg/$f/require-start
	echo "$2" > $dbg/$f/require-end
	echo "$3" > $dbg/$f/reject-start
	echo "$4" > $dbg/$f/reject-end
done
echo 0 > $dbg/fail_page_alloc/min-order
echo "$pfn" > $ND_PMEM/unbind || fail "unbind $pfn"
# bind_with_fault N: the bind with the Nth fault-injection point of this
# shell's task failed; sets injected (1: the bind met it). Every file is
# opened before the fault is armed, and between arming and reading back
# the shell only writes and reads open files: an open() or a fork() would
# meet the fault itself.
nth=/proc/thread-self/fail-nth
bind_with_fault() {
	exec 3>$nth 4<$nth 5>$ND_PMEM/bind 6>/dev/null
	echo "$1" >&3
	echo "$pfn" 2>&6 >&5 || true
	read -r left <&4
	echo 0 >&3
	exec 3>&- 4<&- 5>&- 6>&-
	injected=0
	[ "$left" -ne 0 ] || injected=1
}
n=1 ok=0 failed=0 bad=0
while :; do
	[ "$n" -le "$MAX_NTH" ] || fail "binds still meet faults after $MAX_NTH"
	bind_with_fault "$n"
	[ "$injected" = 1 ] || break		# the bind met fewer than n faults
	if bound; then
		ok=$((ok + 1))
		data_kept || { bad=$((bad + 1)); say bad_bind_nth="$n"; }
		echo "$pfn" > $ND_PMEM/unbind || fail "unbind $pfn after fault $n"
	else
		failed=$((failed + 1))
		[ ! -b /dev/pmem0 ] || fail "fault $n: bind failed, /dev/pmem0 left behind"
	fi
	n=$((n + 1))
done
bound || fail "the bind that met no fault did not bind"
data_kept || bad=$((bad + 1))
say faults="$((n - 1))" fault_binds_ok="$ok" fault_binds_failed="$failed" \
	fault_binds_bad="$bad"

# The chunks' allocation alone: failslab fails what is allocated with
# memmap_init_zone_device() on the stack, once.
say phase=chunk-fault
set -- $(symbol_range memmap_init_zone_device)
[ "$#" -eq 2 ] || fail "no memmap_init_zone_device in /proc/kallsyms"
fs=$dbg/failslab
echo "$1" > $fs/require-start
echo "$2" > $fs/require-end
echo 0 > $fs/reject-start
echo 0 > $fs/reject-end
echo 32 > $fs/stacktrace-depth
echo 1 > $fs/times
echo 1 > $fs/verbose
echo 100 > $fs/probability
echo "$pfn" > $ND_PMEM/unbind || fail "unbind $pfn"
echo "$pfn" > $ND_PMEM/bind || fail "bind $pfn with the chunks' allocation failed"
echo 0 > $fs/probability
settle
chunks_left=$(cat $fs/times)
data_kept || fail "pmem0 data changed across the bind without chunks"
say chunk_faults_left="$chunks_left" chunk_bind=ok

say phase=online-faults
ndctl create-namespace -f -e namespace1.0 -m devdax -a 2M >/dev/null ||
	fail "ndctl create-namespace devdax on namespace1.0"
settle
kmem_add_offline dax1.0
echo -12 > $notifier
refused=0
for b in $blocks; do
	if echo online_movable 2>/dev/null > "$b/state"; then
		fail "$(basename "$b") onlined while MEM_GOING_ONLINE fails"
	fi
	[ "$(cat "$b/state")" = offline ] || fail "$(basename "$b") not offline after a failed online"
	refused=$((refused + 1))
done
echo 0 > $notifier
for b in $blocks; do
	echo online_movable > "$b/state" || fail "online $(basename "$b") after the failed one"
done
settle
say blocks="$nr_blocks" onlines_refused="$refused"
fill_movable $((nr_blocks * $((0x$(cat $mem/block_size_bytes))) / 2 / 1048576))
for b in $blocks; do
	echo offline > "$b/state" || fail "offline $(basename "$b")"
done

say phase=cpu-offline
cpu1=/sys/devices/system/cpu/cpu1/online
[ -e $cpu1 ] || fail "CPU 1 cannot go offline"
# CPU 1 goes offline and comes back over and over, each offline marked in
# the kernel log as it starts, while the namespace is rebound: at least
# CPU_ROUNDS binds, and more, up to MAX_CPU_ROUNDS, until one memmap init
# shared with CPU 1 ran while CPU 1 was going offline (an init takes a few
# milliseconds, an offline tens). The host checks that from the console too.
toggle_cpu1() {
	while [ -e /tmp/memlab-toggle ]; do
		echo "memlab: CPU 1 going offline" > /dev/kmsg
		echo 0 2>/dev/null > $cpu1 || echo "memlab: CPU 1 stayed online" > /dev/kmsg
		echo 1 > $cpu1
	done
}
# The memmap inits of two threads or more that met an offline under way,
# from the kernel log.
offline_mid_init() {
	dmesg | awk '
		function ts(line) { sub(/^\[ */, "", line); sub(/\].*/, "", line); return line + 0 }
		/memlab: CPU 1 going offline/ { start = ts($0) }
		/CPU 1 is now offline/ { n++; from[n] = start; to[n] = ts($0) }
		/initialised [0-9]+ pages in [0-9]+ms, up to [0-9]+ threads/ {
			t = $0; sub(/ threads.*/, "", t); sub(/.* up to /, "", t); shared = t > 1 }
		/initialised [0-9]+ pages in [0-9]+ns/ && shared {
			ns = $0; sub(/ns$/, "", ns); sub(/.* in /, "", ns)
			m++; done[m] = ts($0); began[m] = done[m] - ns / 1e9 }
		END {
			for (j = 1; j <= m; j++)
				for (i = 1; i <= n; i++)
					if (from[i] <= done[j] && to[i] >= began[j]) { hits++; break }
			print hits + 0
		}'
}
touch /tmp/memlab-toggle
toggle_cpu1 &
toggler=$!
i=1
while [ "$i" -le "$CPU_ROUNDS" ] || { [ "$(offline_mid_init)" -eq 0 ] && [ "$i" -le "$MAX_CPU_ROUNDS" ]; }; do
	echo "$pfn" > $ND_PMEM/unbind || fail "unbind $pfn"
	echo "$pfn" > $ND_PMEM/bind || fail "bind with CPU 1 going offline, round $i"
	data_kept || fail "pmem0 data changed across the bind of round $i"
	say cpu_offline_round="$i"
	i=$((i + 1))
done
rm /tmp/memlab-toggle
wait "$toggler"
[ "$(cat $cpu1)" = 1 ] || fail "CPU 1 did not come back online"
say cpu_offlines_mid_init="$(offline_mid_init)"

say phase=leaks
echo scan > $dbg/kmemleak
echo scan > $dbg/kmemleak
leaks=$(grep -c '^unreferenced object' $dbg/kmemleak || true)
say kmemleak_reports="$leaks"
[ "$leaks" -eq 0 ] || { cat $dbg/kmemleak; fail "kmemleak reports $leaks objects"; }
data_kept || fail "pmem0 data changed"
say done=1
