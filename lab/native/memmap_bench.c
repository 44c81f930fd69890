// SPDX-License-Identifier: GPL-2.0
/*
 * Native hot-loop benchmark: the store patterns of the series, on this
 * machine's real CPU (QEMU TCG models no caches, so it cannot tell plain
 * from non-temporal stores).
 *
 *  - memmap init over a memmap the size of a DEVICE_GB device:
 *      slow         6.12's per-field writes (__init_single_page() +
 *                   __init_zone_device_page()), with the built kernel's offsets
 *      copy         a template copy per page with plain stores
 *      copy_nt      a template copy per page with the series' streaming
 *                   stores, the template read from memory for every page
 *      template_nt  the series' loop: copy_pages() below, as mm/mm_init.c's
 *                   memmap_copy_pages() writes it, with the patch's own
 *                   stream_store(), over one run per memory section, each
 *                   drained, the template held in registers
 *  - the limit: non-zero streaming fills of the same buffer from registers,
 *    eight MOVNTI per 64 bytes, and the widest vector streaming store this
 *    CPU has (64-byte ZMM, else two YMM, else four XMM per 64 bytes)
 *  - onlining hot-added memory, memory block by memory block (ONLINE_BLOCK
 *    bytes of memory each): the memmap init, then the buddy allocator's
 *    pass over the same struct pages, 4 MB buddy block by buddy block:
 *    __free_pages_core() (page type and refcount of each page), then
 *    free_pages_prepare() (the flags of each tail), then a list link in
 *    the head, as online_pages() runs them:
 *      slow         6.12's __init_single_page() + __SetPageOffline()
 *      plain        the series' run loop for hot-added memory:
 *                   copy_pages() with each lru pointing at itself, plain
 *                   stores, one run per pageblock
 *      stream       the same with the architecture's streaming stores
 *      one_pass_plain, one_pass_stream
 *                   plain and stream writing the state of a free page
 *                   (refcount 0, not offline), and the free pass taking
 *                   only the head of each buddy block
 *      one_pass_plain_checked, one_pass_stream_checked
 *                   the same, and free_pages_prepare()'s checking walk
 *                   over the tails of each buddy block, as where the page
 *                   checks look at fresh pages on their first free: each
 *                   tail's mapcount, mapping, refcount and flags read and
 *                   compared (page_expected_state()), its flags cleared
 *    at 1 thread only (onlining is one thread), for a small and a large
 *    block: where the memmap stays in the caches for the second pass, and
 *    where it does not
 *  - zeroing: a REP STOSB fill of the same buffer; clear_page() per 4 KiB
 *    vs one clear over 2 MiB and 1 GiB runs (REP STOSB, as clear_pages()
 *    with ERMS)
 *  - clearing large runs, one thread, with the patch's own variants
 *    (arch/x86/lib/clear_page_64.S, assembled by memlab): REP STOSB (what
 *    clear_pages() does below its streaming threshold), MOVNTI, CLZERO
 *    where the CPU has it, and the widest vector streaming store as the
 *    limit; the buffer cleared in runs of one size, each run cold:
 *      clear            the runs alone, at 2 MiB, 32 MiB, 1 GiB
 *      + read 4K        each run's first page read right after it is cleared
 *      + read run       each whole run read right after (a user touching
 *                       all of it), at sizes from 1 MiB to 1 GiB: where
 *                       streaming overtakes the cached clear
 *      16G              a 16 GiB buffer in 1 GiB runs (16 gigantic pages),
 *                       when the host has the memory
 *    Each variant is checked first: a run between two guard pages reads
 *    zero and the guards keep their pattern, or the benchmark fails.
 *
 * Each at 1 and 2 threads (the range shared out in whole sections' memmaps,
 * as the kernel shares a ZONE_DEVICE range among threads), REPS repetitions
 * taken in turns; one JSON object per line on stdout.
 *
 * Built by memlab (lab/memlab/native.py) with -include of the generated
 * offsets header (memlab_offsets.h) and -I of the patch's headers.
 */
#include <asm/stream_store.h>	/* from the patch, through memlab's shim */

#include <cpuid.h>
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define PAGE_SZ 4096UL
#define REPS 9

typedef void (*kernel_fn)(unsigned char *buf, size_t bytes, int thread);

struct job {
	kernel_fn fn;
	unsigned char *buf;
	size_t bytes;
	int thread;
};

static unsigned char template_page[STRUCT_PAGE_SIZE] __attribute__((aligned(64)));
static size_t clear_run;	/* bytes per clear call in the clear kernels */

/* The patch's clear_pages() variants: (address, length in bytes). */
typedef void (*clear_fn)(void *addr, unsigned long len);
void clear_pages_erms(void *addr, unsigned long len);
void clear_pages_movnti(void *addr, unsigned long len);
void clear_pages_clzero(void *addr, unsigned long len);

enum touch { TOUCH_NONE, TOUCH_FIRST_PAGE, TOUCH_RUN };
static clear_fn run_clear;	/* the variant the clear_then_touch kernel calls */
static enum touch run_touch;	/* and what it reads after each run */

static inline uint64_t *field64(unsigned char *page, size_t off)
{
	return (uint64_t *)(page + off);
}

static inline void rep_stosb(void *dst, size_t bytes)
{
	asm volatile("rep stosb" : "+D" (dst), "+c" (bytes) : "a" (0) : "memory");
}

/*
 * The series' template copy, written as mm/mm_init.c writes it
 * (memmap_copy_word(), memmap_copy_page(), memmap_copy_pages(), which are
 * static there): each page a run of fixed-offset word stores, from a local
 * copy of the template, two pages per loop step, with the patch's
 * stream_store() if @stream; with @self_lru the empty lru list head of each
 * copy points at itself.
 */
#define PAGE_WORDS	(STRUCT_PAGE_SIZE / 8)

static __always_inline void copy_word(u64 *dst, const u64 *src, unsigned int i,
				      int self_lru, int stream)
{
	const unsigned int lru = PAGE_LRU / 8;
	u64 val;

	if (i >= PAGE_WORDS)
		return;
	if (self_lru && (i == lru || i == lru + 1))
		val = (u64)(unsigned long)(dst + lru);
	else
		val = src[i];
	if (stream)
		stream_store(dst + i, val);
	else
		dst[i] = val;
}

static __always_inline void copy_page_words(u64 *dst, const u64 *src, int self_lru, int stream)
{
	copy_word(dst, src, 0, self_lru, stream);
	copy_word(dst, src, 1, self_lru, stream);
	copy_word(dst, src, 2, self_lru, stream);
	copy_word(dst, src, 3, self_lru, stream);
	copy_word(dst, src, 4, self_lru, stream);
	copy_word(dst, src, 5, self_lru, stream);
	copy_word(dst, src, 6, self_lru, stream);
	copy_word(dst, src, 7, self_lru, stream);
	copy_word(dst, src, 8, self_lru, stream);
	copy_word(dst, src, 9, self_lru, stream);
	copy_word(dst, src, 10, self_lru, stream);
	copy_word(dst, src, 11, self_lru, stream);
	copy_word(dst, src, 12, self_lru, stream);
	copy_word(dst, src, 13, self_lru, stream);
	copy_word(dst, src, 14, self_lru, stream);
	copy_word(dst, src, 15, self_lru, stream);
}

static __always_inline void copy_pages(u64 *dst, const u64 *template, unsigned long count,
				       int self_lru, int stream)
{
	u64 words[PAGE_WORDS];

	copy_page_words(words, template, 0, 0);
	if (count & 1) {
		copy_page_words(dst, words, self_lru, stream);
		dst += PAGE_WORDS;
	}
	for (count /= 2; count; count--, dst += 2 * PAGE_WORDS) {
		copy_page_words(dst, words, self_lru, stream);
		copy_page_words(dst + PAGE_WORDS, words, self_lru, stream);
	}
}

/* 6.12's slow path, store for store (zone-device page, order 0). */
static void memmap_slow(unsigned char *buf, size_t bytes, int thread)
{
	uint64_t links = ((uint64_t)PAGE_ZONE_DEVICE << PAGE_ZONES_PGSHIFT) |
			 ((uint64_t)thread << PAGE_NODES_PGSHIFT);
	unsigned char *p;

	for (p = buf; p < buf + bytes; p += STRUCT_PAGE_SIZE) {
		volatile uint64_t *w = (volatile uint64_t *)p;
		size_t i;

		for (i = 0; i < STRUCT_PAGE_SIZE / 8; i++)	/* mm_zero_struct_page */
			w[i] = 0;
		*field64(p, PAGE_FLAGS) |= links;		/* set_page_links */
		*(volatile int *)(p + PAGE_REFCOUNT) = 1;	/* init_page_count */
		*(volatile int *)(p + PAGE_MAPCOUNT) = -1;
		*field64(p, PAGE_LRU) = (uint64_t)(p + PAGE_LRU);	/* INIT_LIST_HEAD */
		*field64(p, PAGE_LRU + 8) = (uint64_t)(p + PAGE_LRU);
		*field64(p, PAGE_FLAGS) |= 1ULL << PAGE_PG_RESERVED;	/* __SetPageReserved */
		*field64(p, PAGE_PGMAP) = (uint64_t)template_page;
		*field64(p, PAGE_ZONE_DEVICE_DATA) = 0;
	}
}

static void memmap_copy(unsigned char *buf, size_t bytes, int thread)
{
	unsigned char *p;

	for (p = buf; p < buf + bytes; p += STRUCT_PAGE_SIZE)
		memcpy(p, template_page, STRUCT_PAGE_SIZE);
}

static void memmap_copy_nt(unsigned char *buf, size_t bytes, int thread)
{
	unsigned char *p;

	for (p = buf; p < buf + bytes; p += STRUCT_PAGE_SIZE)
		copy_page_words((u64 *)p, (const u64 *)template_page, 0, 1);
	stream_store_drain();
}

/* As memmap_init_zone_device_from_template() streams order-0 pages. */
static void memmap_template_nt(unsigned char *buf, size_t bytes, int thread)
{
	size_t run = PAGES_PER_SECTION * STRUCT_PAGE_SIZE, off;

	for (off = 0; off < bytes; off += run) {
		size_t len = run < bytes - off ? run : bytes - off;

		copy_pages((u64 *)(buf + off), (const u64 *)template_page,
			   len / STRUCT_PAGE_SIZE, 0, 1);
		stream_store_drain();
	}
}

/*
 * 6.12's memmap init of one hot-added page (order 0, not ZONE_DEVICE), or,
 * @free, the series' one-pass state: free for the buddy allocator.
 */
static void online_init_slow(unsigned char *p, uint64_t links, int free)
{
	volatile uint64_t *w = (volatile uint64_t *)p;
	size_t i;

	for (i = 0; i < STRUCT_PAGE_SIZE / 8; i++)	/* mm_zero_struct_page */
		w[i] = 0;
	*field64(p, PAGE_FLAGS) |= links;			/* set_page_links */
	*(volatile int *)(p + PAGE_REFCOUNT) = 1;		/* init_page_count */
	*(volatile int *)(p + PAGE_MAPCOUNT) = -1;
	*field64(p, PAGE_LRU) = (uint64_t)(p + PAGE_LRU);	/* INIT_LIST_HEAD */
	*field64(p, PAGE_LRU + 8) = (uint64_t)(p + PAGE_LRU);
	if (free)
		*(volatile int *)(p + PAGE_REFCOUNT) = 0;	/* set_page_count */
	else
		*(volatile unsigned int *)(p + PAGE_MAPCOUNT) = PAGE_TYPE_OFFLINE;
}

#define PAGEBLOCK_PAGES	512
#define BUDDY_PAGES	1024

/* memmap_init_hotplug_runs(): one template run per pageblock. */
static inline void online_init_runs(unsigned char *block, size_t nr, uint64_t links,
				    int stream, int free)
{
	size_t pfn, run;

	for (pfn = 0; pfn < nr; pfn += run) {
		unsigned char *first = block + pfn * STRUCT_PAGE_SIZE;
		uint64_t template[STRUCT_PAGE_SIZE / 8];

		run = nr - pfn < PAGEBLOCK_PAGES ? nr - pfn : PAGEBLOCK_PAGES;
		online_init_slow(first, links, free);
		memcpy(template, first, STRUCT_PAGE_SIZE);
		if (stream) {
			copy_pages((u64 *)(first + STRUCT_PAGE_SIZE), template, run - 1, 1, 1);
			stream_store_drain();
		} else {
			copy_pages((u64 *)(first + STRUCT_PAGE_SIZE), template, run - 1, 1, 0);
		}
	}
}

/*
 * Each buddy block to the free lists: __free_pages_core()'s walk over its
 * pages (type and count) and free_pages_prepare()'s over its tails (flags),
 * unless @walk is 0 (the series' one pass), then a list link in its head.
 */
static void online_free(unsigned char *block, size_t nr, int walk)
{
	size_t head, pfn;

	for (head = 0; head < nr; head += BUDDY_PAGES) {
		size_t end = nr - head < BUDDY_PAGES ? nr : head + BUDDY_PAGES;
		volatile uint64_t *h = (volatile uint64_t *)(block + head * STRUCT_PAGE_SIZE);

		for (pfn = head; walk && pfn < end; pfn++) {
			unsigned char *p = block + pfn * STRUCT_PAGE_SIZE;

			*(volatile int *)(p + PAGE_MAPCOUNT) = -1;	/* __ClearPageOffline */
			*(volatile int *)(p + PAGE_REFCOUNT) = 0;	/* set_page_count */
		}
		for (pfn = head + 1; walk && pfn < end; pfn++)
			*field64(block + pfn * STRUCT_PAGE_SIZE, PAGE_FLAGS) &= ~PAGE_FLAGS_PREP;
		h[PAGE_LRU / 8] = h[PAGE_LRU / 8 + 1];	/* list_add */
	}
}

/*
 * free_pages_prepare()'s walk over the tails of each buddy block where the
 * page checks are on: page_expected_state() of each tail, then its flags
 * cleared. The pages are in the free state, so any mismatch is the
 * model's own bug and ends the benchmark.
 */
static void online_check_tails(unsigned char *block, size_t nr)
{
	size_t head, pfn, bad = 0;

	for (head = 0; head < nr; head += BUDDY_PAGES) {
		size_t end = nr - head < BUDDY_PAGES ? nr : head + BUDDY_PAGES;

		for (pfn = head + 1; pfn < end; pfn++) {
			unsigned char *p = block + pfn * STRUCT_PAGE_SIZE;
			volatile uint64_t *flags = field64(p, PAGE_FLAGS);

			bad += *(volatile int *)(p + PAGE_MAPCOUNT) != -1;
			bad += *(volatile uint64_t *)field64(p, PAGE_MAPPING) != 0;
			bad += *(volatile int *)(p + PAGE_REFCOUNT) != 0;
			bad += (*flags & PAGE_FLAGS_PREP) != 0;
			*flags &= ~PAGE_FLAGS_PREP;
		}
	}
	if (bad) {
		fprintf(stderr, "online_check_tails: %zu fresh tails not free\n", bad);
		exit(1);
	}
}

static size_t online_block;	/* bytes of memory per block in the online kernels */

enum online_how { ONLINE_SLOW, ONLINE_PLAIN, ONLINE_STREAM, ONE_PASS_PLAIN, ONE_PASS_STREAM,
		  ONE_PASS_PLAIN_CHECKED, ONE_PASS_STREAM_CHECKED };

static void online_blocks(unsigned char *buf, size_t bytes, enum online_how how)
{
	int checked = how == ONE_PASS_PLAIN_CHECKED || how == ONE_PASS_STREAM_CHECKED;
	int one_pass = how == ONE_PASS_PLAIN || how == ONE_PASS_STREAM || checked;
	int stream = how == ONLINE_STREAM || how == ONE_PASS_STREAM ||
		     how == ONE_PASS_STREAM_CHECKED;
	size_t per = online_block / PAGE_SZ, off, nr;
	uint64_t links = (uint64_t)2 << PAGE_ZONES_PGSHIFT;

	for (off = 0; off < bytes; off += nr * STRUCT_PAGE_SIZE) {
		unsigned char *block = buf + off;
		size_t pfn;

		nr = (bytes - off) / STRUCT_PAGE_SIZE < per ?
		     (bytes - off) / STRUCT_PAGE_SIZE : per;
		if (how == ONLINE_SLOW)
			for (pfn = 0; pfn < nr; pfn++)
				online_init_slow(block + pfn * STRUCT_PAGE_SIZE, links, 0);
		else
			online_init_runs(block, nr, links, stream, one_pass);
		if (checked)
			online_check_tails(block, nr);
		online_free(block, nr, !one_pass);
	}
}

static void online_slow(unsigned char *buf, size_t bytes, int thread)
{
	online_blocks(buf, bytes, ONLINE_SLOW);
}

static void online_plain(unsigned char *buf, size_t bytes, int thread)
{
	online_blocks(buf, bytes, ONLINE_PLAIN);
}

static void online_stream(unsigned char *buf, size_t bytes, int thread)
{
	online_blocks(buf, bytes, ONLINE_STREAM);
}

static void online_one_pass_plain(unsigned char *buf, size_t bytes, int thread)
{
	online_blocks(buf, bytes, ONE_PASS_PLAIN);
}

static void online_one_pass_stream(unsigned char *buf, size_t bytes, int thread)
{
	online_blocks(buf, bytes, ONE_PASS_STREAM);
}

static void online_one_pass_plain_checked(unsigned char *buf, size_t bytes, int thread)
{
	online_blocks(buf, bytes, ONE_PASS_PLAIN_CHECKED);
}

static void online_one_pass_stream_checked(unsigned char *buf, size_t bytes, int thread)
{
	online_blocks(buf, bytes, ONE_PASS_STREAM_CHECKED);
}

static void clear_per_page(unsigned char *buf, size_t bytes, int thread)
{
	size_t off;

	for (off = 0; off < bytes; off += PAGE_SZ)
		rep_stosb(buf + off, PAGE_SZ);
}

static void clear_runs(unsigned char *buf, size_t bytes, int thread)
{
	size_t off;

	for (off = 0; off < bytes; off += clear_run)
		rep_stosb(buf + off, clear_run < bytes - off ? clear_run : bytes - off);
}

static volatile uint64_t read_sink;

/* One load per cache line, as a user touching the memory would cause. */
static void read_lines(const unsigned char *p, size_t bytes)
{
	uint64_t sum = 0;
	size_t off;

	for (off = 0; off < bytes; off += 64)
		sum += *(const uint64_t *)(p + off);
	read_sink = sum;
}

static void clear_then_touch(unsigned char *buf, size_t bytes, int thread)
{
	size_t off;

	for (off = 0; off < bytes; off += clear_run) {
		size_t n = clear_run < bytes - off ? clear_run : bytes - off;

		run_clear(buf + off, n);
		if (run_touch != TOUCH_NONE)
			read_lines(buf + off, run_touch == TOUCH_RUN ? n : PAGE_SZ);
	}
}

/* The limit: zeroes with the widest vector streaming store, then SFENCE. */
__attribute__((target("avx512f")))
static void zero_nt_zmm(void *addr, unsigned long len)
{
	unsigned char *p;

	for (p = addr; p < (unsigned char *)addr + len; p += 64)
		_mm512_stream_si512((void *)p, _mm512_setzero_si512());
	_mm_sfence();
}

__attribute__((target("avx")))
static void zero_nt_ymm(void *addr, unsigned long len)
{
	unsigned char *p;

	for (p = addr; p < (unsigned char *)addr + len; p += 64) {
		_mm256_stream_si256((void *)p, _mm256_setzero_si256());
		_mm256_stream_si256((void *)(p + 32), _mm256_setzero_si256());
	}
	_mm_sfence();
}

static void zero_nt_xmm(void *addr, unsigned long len)
{
	unsigned char *p;
	int i;

	for (p = addr; p < (unsigned char *)addr + len; p += 64)
		for (i = 0; i < 64; i += 16)
			_mm_stream_si128((void *)(p + i), _mm_setzero_si128());
	_mm_sfence();
}

/*
 * A variant clears exactly its run: pattern-filled guard page, run, guard
 * page, for a run of one page and of 64. Exits on the first wrong byte.
 */
static void check_clear(const char *name, clear_fn clear, unsigned char *buf)
{
	static const size_t runs[] = { PAGE_SZ, 64 * PAGE_SZ };
	size_t i, b;

	for (i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		size_t total = runs[i] + 2 * PAGE_SZ;

		memset(buf, 0x5a, total);
		clear(buf + PAGE_SZ, runs[i]);
		for (b = 0; b < total; b++) {
			int in_run = b >= PAGE_SZ && b < PAGE_SZ + runs[i];

			if (buf[b] != (in_run ? 0 : 0x5a)) {
				fprintf(stderr, "%s: run of %zu bytes: byte %zu of guard, run, guard "
					"is %#x\n", name, runs[i], b, buf[b]);
				exit(1);
			}
		}
	}
}

/* The fills store the template's first 64 bytes per 64 bytes of buffer. */
_Static_assert(STRUCT_PAGE_SIZE >= 64, "the limit fills read 64 template bytes");

/* The template's first 64 bytes, from registers, MOVNTI per word. */
static void fill_movnti(unsigned char *buf, size_t bytes, int thread)
{
	const uint64_t *t = (const uint64_t *)template_page;
	uint64_t w0 = t[0], w1 = t[1], w2 = t[2], w3 = t[3];
	uint64_t w4 = t[4], w5 = t[5], w6 = t[6], w7 = t[7];
	unsigned char *p;

	for (p = buf; p + 64 <= buf + bytes; p += 64)
		asm volatile("movnti %1, 0(%0)\n\tmovnti %2, 8(%0)\n\t"
			     "movnti %3, 16(%0)\n\tmovnti %4, 24(%0)\n\t"
			     "movnti %5, 32(%0)\n\tmovnti %6, 40(%0)\n\t"
			     "movnti %7, 48(%0)\n\tmovnti %8, 56(%0)"
			     : : "r" (p), "r" (w0), "r" (w1), "r" (w2), "r" (w3),
			       "r" (w4), "r" (w5), "r" (w6), "r" (w7) : "memory");
	asm volatile("sfence" : : : "memory");
}

/* The same 64 bytes from vector registers, with the widest streaming store. */
__attribute__((target("avx512f")))
static void fill_nt_zmm(unsigned char *buf, size_t bytes, int thread)
{
	__m512i v = _mm512_load_si512((const void *)template_page);
	unsigned char *p;

	for (p = buf; p + 64 <= buf + bytes; p += 64)
		_mm512_stream_si512((void *)p, v);
	_mm_sfence();
}

__attribute__((target("avx")))
static void fill_nt_ymm(unsigned char *buf, size_t bytes, int thread)
{
	__m256i a = _mm256_load_si256((const void *)template_page);
	__m256i b = _mm256_load_si256((const void *)(template_page + 32));
	unsigned char *p;

	for (p = buf; p + 64 <= buf + bytes; p += 64) {
		_mm256_stream_si256((void *)p, a);
		_mm256_stream_si256((void *)(p + 32), b);
	}
	_mm_sfence();
}

static void fill_nt_xmm(unsigned char *buf, size_t bytes, int thread)
{
	__m128i a = _mm_load_si128((const void *)template_page);
	__m128i b = _mm_load_si128((const void *)(template_page + 16));
	__m128i c = _mm_load_si128((const void *)(template_page + 32));
	__m128i d = _mm_load_si128((const void *)(template_page + 48));
	unsigned char *p;

	for (p = buf; p + 64 <= buf + bytes; p += 64) {
		_mm_stream_si128((void *)p, a);
		_mm_stream_si128((void *)(p + 16), b);
		_mm_stream_si128((void *)(p + 32), c);
		_mm_stream_si128((void *)(p + 48), d);
	}
	_mm_sfence();
}

static void fill_stosb(unsigned char *buf, size_t bytes, int thread)
{
	rep_stosb(buf, bytes);
}

static void *run_job(void *arg)
{
	struct job *j = arg;

	j->fn(j->buf, j->bytes, j->thread);
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * Where thread i of nthreads starts, as the kernel shares out a range: in
 * whole units (the memmap of one memory section) from the start, the units
 * shared out evenly.
 */
static size_t chunk_start(size_t bytes, int i, int nthreads)
{
	const size_t unit = PAGES_PER_SECTION * STRUCT_PAGE_SIZE;
	size_t nr_units = (bytes + unit - 1) / unit;
	size_t start = nr_units * i / nthreads * unit;

	return start < bytes ? start : bytes;
}

/* Seconds for fn over buf, split across nthreads. */
static double timed(kernel_fn fn, unsigned char *buf, size_t bytes, int nthreads)
{
	pthread_t tid[2];
	struct job jobs[2];
	double t0;
	int i;

	t0 = now();
	for (i = 0; i < nthreads; i++) {
		size_t start = chunk_start(bytes, i, nthreads);

		jobs[i] = (struct job){ fn, buf + start,
					chunk_start(bytes, i + 1, nthreads) - start, i };
		pthread_create(&tid[i], NULL, run_job, &jobs[i]);
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	return now() - t0;
}

struct row {
	const char *group;
	const char *name;
	kernel_fn fn;
	size_t bytes;
	size_t run;		/* clear_run, or online_block for the online kernels */
	clear_fn clear;		/* for clear_then_touch */
	enum touch touch;
	double secs[REPS];
};

static void print_row(const struct row *row, int nthreads)
{
	int r;

	printf("{\"group\": \"%s\", \"name\": \"%s\", \"threads\": %d, \"bytes\": %zu, "
	       "\"seconds\": [", row->group, row->name, nthreads, row->bytes);
	for (r = 0; r < REPS; r++)
		printf("%s%.6f", r ? ", " : "", row->secs[r]);
	printf("]}\n");
	fflush(stdout);
}

/* The kernels' parameters for a row. */
static void select_row(const struct row *row)
{
	clear_run = online_block = row->run;
	run_clear = row->clear;
	run_touch = row->touch;
}

/*
 * The repetitions take turns, one of each row per round, so that a slower
 * spell of a shared host falls on all rows alike rather than on one.
 */
static void bench_rows(struct row *rows, int nr, unsigned char *buf, int nthreads)
{
	int i, r;

	for (i = 0; i < nr; i++) {	/* warm up */
		select_row(&rows[i]);
		rows[i].fn(buf, rows[i].bytes < (64UL << 20) ? rows[i].bytes : (64UL << 20), 0);
	}
	for (r = 0; r < REPS; r++)
		for (i = 0; i < nr; i++) {
			select_row(&rows[i]);
			rows[i].secs[r] = timed(rows[i].fn, buf, rows[i].bytes, nthreads);
		}
	for (i = 0; i < nr; i++)
		print_row(&rows[i], nthreads);
}

struct clear_variant {
	const char *name;
	clear_fn clear;
};

static int cpu_has_clzero(void)
{
	unsigned int a, b, c, d;

	return __get_cpuid(0x80000008, &a, &b, &c, &d) && (b & 1);
}

/* The variants this CPU runs, the limit last. */
static int clear_variants(struct clear_variant *v)
{
	int n = 0;

	v[n++] = (struct clear_variant){ "stosb", clear_pages_erms };
	v[n++] = (struct clear_variant){ "movnti", clear_pages_movnti };
	if (cpu_has_clzero())
		v[n++] = (struct clear_variant){ "clzero", clear_pages_clzero };
	if (__builtin_cpu_supports("avx512f"))
		v[n++] = (struct clear_variant){ "vector_nt", zero_nt_zmm };
	else if (__builtin_cpu_supports("avx"))
		v[n++] = (struct clear_variant){ "vector_nt", zero_nt_ymm };
	else
		v[n++] = (struct clear_variant){ "vector_nt", zero_nt_xmm };
	return n;
}

/* Every variant clears exactly its run, or the program exits. */
static void check_clear_variants(unsigned char *buf)
{
	struct clear_variant v[4];
	int n = clear_variants(v), i;

	for (i = 0; i < n; i++)
		check_clear(v[i].name, v[i].clear, buf);
	printf("{\"checked\": [");
	for (i = 0; i < n; i++)
		printf("%s\"%s\"", i ? ", " : "", v[i].name);
	printf("]}\n");
	fflush(stdout);
}

static const char *size_name(size_t bytes)
{
	static char names[32][16];
	static int used;
	char *name = names[used++ % 32];

	if (bytes >= (1UL << 30))
		snprintf(name, 16, "%zuG", bytes >> 30);
	else
		snprintf(name, 16, "%zuM", bytes >> 20);
	return name;
}

/*
 * Clearing large runs, one thread: each group one run size and what is
 * read after each run, each row one variant over the same buffer.
 */
static void bench_clearing(unsigned char *buf, double seq_gb)
{
	static const size_t read_run_sizes[] = {
		1UL << 20, 2UL << 20, 4UL << 20, 6UL << 20, 8UL << 20,
		12UL << 20, 16UL << 20, 32UL << 20, 1UL << 30,
	};
	static const size_t sizes[] = { 2UL << 20, 32UL << 20, 1UL << 30 };
	struct clear_variant v[4];
	struct row rows[64];
	static char groups[32][48];
	int nv = clear_variants(v), nr = 0, ng = 0, i, k;
	size_t seq_bytes = (size_t)(seq_gb * (1UL << 30));

	for (k = 0; k < 2; k++)
		for (i = 0; i < (int)(sizeof(sizes) / sizeof(sizes[0])); i++) {
			int j;

			snprintf(groups[ng], sizeof(groups[ng]), "clear %s%s", size_name(sizes[i]),
				 k ? " + read 4K" : "");
			for (j = 0; j < nv; j++)
				rows[nr++] = (struct row){ groups[ng], v[j].name, clear_then_touch,
							   1UL << 30, sizes[i], v[j].clear,
							   k ? TOUCH_FIRST_PAGE : TOUCH_NONE };
			ng++;
		}
	bench_rows(rows, nr, buf, 1);
	nr = 0;
	for (i = 0; i < (int)(sizeof(read_run_sizes) / sizeof(read_run_sizes[0])); i++) {
		int j;

		snprintf(groups[ng], sizeof(groups[ng]), "clear %s + read run",
			 size_name(read_run_sizes[i]));
		for (j = 0; j < nv; j++)
			rows[nr++] = (struct row){ groups[ng], v[j].name, clear_then_touch,
						   1UL << 30, read_run_sizes[i], v[j].clear,
						   TOUCH_RUN };
		ng++;
	}
	bench_rows(rows, nr, buf, 1);
	if (seq_bytes) {
		unsigned char *seq = mmap(NULL, seq_bytes, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

		if (seq == MAP_FAILED) {
			perror("mmap of the 16G sequence");
			exit(1);
		}
		nr = 0;
		snprintf(groups[ng], sizeof(groups[ng]), "clear %s in 1G runs",
			 size_name(seq_bytes));
		for (i = 0; i < nv; i++)
			rows[nr++] = (struct row){ groups[ng], v[i].name, clear_then_touch,
						   seq_bytes, 1UL << 30, v[i].clear, TOUCH_NONE };
		bench_rows(rows, nr, seq, 1);
		munmap(seq, seq_bytes);
	}
}

/*
 * memmap_bench DEVICE_GB [SEQUENCE_GB]: the benchmark (SEQUENCE_GB 0 or
 * absent: no 16G sequence); memmap_bench check: the clearing variants'
 * check alone.
 */
int main(int argc, char **argv)
{
	double device_gb = argc > 1 ? atof(argv[1]) : 100.0;
	double seq_gb = argc > 2 ? atof(argv[2]) : 0;	/* 0: no sequence */
	size_t pages = (size_t)(device_gb * (1UL << 30) / PAGE_SZ);
	size_t memmap = pages * STRUCT_PAGE_SIZE;
	size_t clear_bytes = 1UL << 30;
	size_t bytes = memmap > clear_bytes ? memmap : clear_bytes;
	const char *vector_name = "xmm";
	kernel_fn vector_fill = fill_nt_xmm;
	unsigned char *buf;
	int t;

	buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	check_clear_variants(buf);
	if (argc > 1 && !strcmp(argv[1], "check"))
		return 0;
	memmap_slow(template_page, STRUCT_PAGE_SIZE, 0);
	/* The widest vector streaming store this CPU has. */
	if (__builtin_cpu_supports("avx512f")) {
		vector_name = "zmm";
		vector_fill = fill_nt_zmm;
	} else if (__builtin_cpu_supports("avx")) {
		vector_name = "ymm";
		vector_fill = fill_nt_ymm;
	}
	printf("{\"struct_page_size\": %d, \"device_gb\": %.1f, \"memmap_bytes\": %zu, "
	       "\"vector\": \"%s\", \"clzero\": %s, \"sequence_gb\": %.1f}\n",
	       STRUCT_PAGE_SIZE, device_gb, memmap, vector_name,
	       cpu_has_clzero() ? "true" : "false", seq_gb);
	for (t = 1; t <= 2; t++) {
		struct row rows[] = {
			{ "memmap", "slow", memmap_slow, memmap, 0 },
			{ "memmap", "copy", memmap_copy, memmap, 0 },
			{ "memmap", "copy_nt", memmap_copy_nt, memmap, 0 },
			{ "memmap", "template_nt", memmap_template_nt, memmap, 0 },
			{ "limit", "movnti_fill", fill_movnti, memmap, 0 },
			{ "limit", "vector_nt_fill", vector_fill, memmap, 0 },
			{ "zero", "stosb_fill", fill_stosb, memmap, 0 },
			{ "clear", "per_4k", clear_per_page, clear_bytes, 0 },
			{ "clear", "run_2m", clear_runs, clear_bytes, 2UL << 20 },
			{ "clear", "run_1g", clear_runs, clear_bytes, clear_bytes },
		};

		bench_rows(rows, sizeof(rows) / sizeof(rows[0]), buf, t);
	}
	{
		struct row online[] = {
			{ "online 128M", "slow", online_slow, memmap, 128UL << 20 },
			{ "online 128M", "plain", online_plain, memmap, 128UL << 20 },
			{ "online 128M", "stream", online_stream, memmap, 128UL << 20 },
			{ "online 128M", "one_pass_plain", online_one_pass_plain, memmap,
			  128UL << 20 },
			{ "online 128M", "one_pass_stream", online_one_pass_stream, memmap,
			  128UL << 20 },
			{ "online 128M", "one_pass_plain_checked", online_one_pass_plain_checked,
			  memmap, 128UL << 20 },
			{ "online 128M", "one_pass_stream_checked", online_one_pass_stream_checked,
			  memmap, 128UL << 20 },
			{ "online 2G", "slow", online_slow, memmap, 2UL << 30 },
			{ "online 2G", "plain", online_plain, memmap, 2UL << 30 },
			{ "online 2G", "stream", online_stream, memmap, 2UL << 30 },
			{ "online 2G", "one_pass_plain", online_one_pass_plain, memmap,
			  2UL << 30 },
			{ "online 2G", "one_pass_stream", online_one_pass_stream, memmap,
			  2UL << 30 },
			{ "online 2G", "one_pass_plain_checked", online_one_pass_plain_checked,
			  memmap, 2UL << 30 },
			{ "online 2G", "one_pass_stream_checked", online_one_pass_stream_checked,
			  memmap, 2UL << 30 },
		};

		bench_rows(online, sizeof(online) / sizeof(online[0]), buf, 1);
	}
	bench_clearing(buf, seq_gb);
	return 0;
}
