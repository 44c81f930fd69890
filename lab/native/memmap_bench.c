// SPDX-License-Identifier: GPL-2.0
/*
 * Native hot-loop benchmark: the store patterns of the series, on this
 * machine's real CPU (QEMU TCG models no caches, so it cannot tell plain
 * from non-temporal stores).
 *
 *  - memmap init over a memmap the size of a DEVICE_GB device:
 *      slow      6.12's per-field writes (__init_single_page() +
 *                __init_zone_device_page()), with the built kernel's offsets
 *      copy      the template copy with plain stores
 *      copy_nt   the template copy with the series' stream_copy_u64s()
 *                (the very header of the patch) and a final drain
 *  - clearing: clear_page() per 4 KiB vs one clear over 2 MiB and 1 GiB runs
 *    (REP STOSB, as clear_pages() with ERMS)
 *  - the physical limit: MOVNTI and REP STOSB fills of the same buffer
 *
 * Each at 1 and 2 threads (the range split in halves), REPS repetitions;
 * one JSON object per line on stdout.
 *
 * Built by memlab (lab/memlab/native.py) with -include of the generated
 * offsets header (memlab_offsets.h) and -I of the patch's headers.
 */
#include <asm/stream_copy.h>	/* from the patch, through memlab's shim */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define PAGE_SZ 4096UL
#define REPS 5

typedef void (*kernel_fn)(unsigned char *buf, size_t bytes, int thread);

struct job {
	kernel_fn fn;
	unsigned char *buf;
	size_t bytes;
	int thread;
};

static unsigned char template_page[STRUCT_PAGE_SIZE] __attribute__((aligned(64)));
static size_t clear_run;	/* bytes per clear call in the clear kernels */

static inline uint64_t *field64(unsigned char *page, size_t off)
{
	return (uint64_t *)(page + off);
}

static inline void rep_stosb(void *dst, size_t bytes)
{
	asm volatile("rep stosb" : "+D" (dst), "+c" (bytes) : "a" (0) : "memory");
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
		stream_copy_u64s((u64 *)p, (const u64 *)template_page,
				 STRUCT_PAGE_SIZE / sizeof(u64));
	stream_copy_drain();
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

static void fill_movnti(unsigned char *buf, size_t bytes, int thread)
{
	uint64_t *p = (uint64_t *)buf, *end = (uint64_t *)(buf + bytes);

	for (; p < end; p += 8) {
		asm volatile("movnti %1, 0(%0)\n\tmovnti %1, 8(%0)\n\t"
			     "movnti %1, 16(%0)\n\tmovnti %1, 24(%0)\n\t"
			     "movnti %1, 32(%0)\n\tmovnti %1, 40(%0)\n\t"
			     "movnti %1, 48(%0)\n\tmovnti %1, 56(%0)"
			     : : "r" (p), "r" (0UL) : "memory");
	}
	asm volatile("sfence" : : : "memory");
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

/* Seconds for fn over buf, split across nthreads. */
static double timed(kernel_fn fn, unsigned char *buf, size_t bytes, int nthreads)
{
	pthread_t tid[2];
	struct job jobs[2];
	size_t part = bytes / nthreads / 4096 * 4096;
	double t0;
	int i;

	t0 = now();
	for (i = 0; i < nthreads; i++) {
		jobs[i] = (struct job){ fn, buf + i * part,
					i == nthreads - 1 ? bytes - i * part : part, i };
		pthread_create(&tid[i], NULL, run_job, &jobs[i]);
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	return now() - t0;
}

static void bench(const char *group, const char *name, kernel_fn fn,
		  unsigned char *buf, size_t bytes, int nthreads, size_t run)
{
	double secs[REPS];
	int r;

	clear_run = run;
	fn(buf, bytes < (64UL << 20) ? bytes : (64UL << 20), 0);	/* warm up */
	for (r = 0; r < REPS; r++)
		secs[r] = timed(fn, buf, bytes, nthreads);
	printf("{\"group\": \"%s\", \"name\": \"%s\", \"threads\": %d, \"bytes\": %zu, "
	       "\"seconds\": [", group, name, nthreads, bytes);
	for (r = 0; r < REPS; r++)
		printf("%s%.6f", r ? ", " : "", secs[r]);
	printf("]}\n");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	double device_gb = argc > 1 ? atof(argv[1]) : 100.0;
	size_t pages = (size_t)(device_gb * (1UL << 30) / PAGE_SZ);
	size_t memmap = pages * STRUCT_PAGE_SIZE;
	size_t clear_bytes = 1UL << 30;
	size_t bytes = memmap > clear_bytes ? memmap : clear_bytes;
	unsigned char *buf;
	int t;

	buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memmap_slow(template_page, STRUCT_PAGE_SIZE, 0);
	printf("{\"struct_page_size\": %d, \"device_gb\": %.1f, \"memmap_bytes\": %zu}\n",
	       STRUCT_PAGE_SIZE, device_gb, memmap);
	for (t = 1; t <= 2; t++) {
		bench("memmap", "slow", memmap_slow, buf, memmap, t, 0);
		bench("memmap", "copy", memmap_copy, buf, memmap, t, 0);
		bench("memmap", "copy_nt", memmap_copy_nt, buf, memmap, t, 0);
		bench("limit", "movnti_fill", fill_movnti, buf, memmap, t, 0);
		bench("limit", "stosb_fill", fill_stosb, buf, memmap, t, 0);
		bench("clear", "per_4k", clear_per_page, buf, clear_bytes, t, 0);
		bench("clear", "run_2m", clear_runs, buf, clear_bytes, t, 2UL << 20);
		bench("clear", "run_1g", clear_runs, buf, clear_bytes, t, clear_bytes);
	}
	return 0;
}
