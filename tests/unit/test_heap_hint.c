/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for util/heap_hint: the heap range it marks is advised for huge pages (the
 * kernel says so in /proc/self/smaps), and malloc works as before afterwards, small and large
 * blocks alike. Under AddressSanitizer (its own allocator) it changes nothing. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/heap_hint.h"
#include "util/sanitizer.h"

/* The VmFlags of the mapping holding address a: 1 if they include "hg" (MADV_HUGEPAGE), 0 if
 * not, -1 if the mapping or its flags were not found. */
static int advised_huge(const void *a)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	int inside = 0, found = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			inside = (uintptr_t)a >= lo && (uintptr_t)a < hi;
			continue;
		}
		if (inside && !strncmp(line, "VmFlags:", 8)) {
			found = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return found;
}

static void test_heap_is_advised_and_malloc_still_works(void **state)
{
	(void)state;
	int rc = heap_hint_huge_pages((size_t)96 << 20);
	if (MUSTER_ASAN) {
		assert_int_equal(rc, -ENOTSUP);
	} else if (rc == 0) {
		/* A block of the size a large run's arrays reach comes from the marked heap. */
		char *big = malloc((size_t)8 << 20);
		assert_non_null(big);
		memset(big, 1, (size_t)8 << 20);
		assert_int_equal(advised_huge(big + (4 << 20)), 1);
		free(big);
	} else {
		/* Only a kernel without transparent huge pages may say no to glibc's heap. */
		FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
		if (thp)
			fclose(thp);
		assert_null(thp);
		assert_int_equal(rc, -ENOTSUP);
	}
	/* Whatever it did, allocation is as before: many small blocks and some large ones. */
	void *blocks[4096];
	for (size_t i = 0; i < 4096; i++) {
		size_t size = i % 512 == 0 ? (size_t)1 << 20 : 16 + i % 300;
		blocks[i] = malloc(size);
		assert_non_null(blocks[i]);
		memset(blocks[i], (int)i, size);
	}
	for (size_t i = 0; i < 4096; i++)
		free(blocks[i]);
	/* A second call only moves the pad again: harmless. */
	rc = heap_hint_huge_pages(0);
	assert_true(rc == 0 || rc == -ENOTSUP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heap_is_advised_and_malloc_still_works),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
