// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/replay.c - a fuzz target without the fuzzer: runs
 * LLVMFuzzerTestOneInput once on every file named, or in a directory named,
 * on the command line.  `make check` replays each target's corpus this way
 * (tests/scripts/fuzz-corpus.sh); a crash or a failed property aborts.
 * Exits 1 if there was no input at all (an empty corpus tests nothing).
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include "fuzz.h"

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t size = 0, cap = 0, n;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	do {
		if (size == cap) {
			cap = cap ? 2 * cap : 4096;
			data = realloc(data, cap);
			if (!data)
				abort();
		}
		n = fread(data + size, 1, cap - size, f);
		size += n;
	} while (n);
	fclose(f);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	return 1;
}

static int skip_dot(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* replay - @path, or every file in it if it is a directory; how many inputs. */
static int replay(const char *path)
{
	struct dirent **names;
	struct stat st;
	int n, count = 0;

	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return replay_file(path);
	n = scandir(path, &names, skip_dot, alphasort);
	if (n < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	for (int i = 0; i < n; i++) {
		char file[4096];

		snprintf(file, sizeof(file), "%s/%s", path, names[i]->d_name);
		count += replay_file(file);
		free(names[i]);
	}
	free(names);
	return count;
}

int main(int argc, char **argv)
{
	int count = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++)
		count += replay(argv[i]);
	printf("%s: %d inputs replayed\n", argv[0], count);
	return count ? 0 : 1;
}
