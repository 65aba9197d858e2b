/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("muster %s (%s)\n", MUSTER_VERSION, MUSTER_GIT);
		return 0;
	}
	fprintf(stderr, "usage: muster manager|--version\n");
	return 2;
}
