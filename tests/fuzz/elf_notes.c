// SPDX-License-Identifier: MIT
/*
 * tests/fuzz/elf_notes.c - elf_count_notes() (tools/elf_notes.c), which
 * every tool runs on the binary it is given with -b (or finds), on any
 * bytes as the ELF image.
 *
 * The image is read through libelf from memory; the seeds are small
 * objects with .note.stapsdt sections (blitz and other providers, 64- and
 * 32-bit).  Properties: the count is -ENOEXEC or at least 0, the same for
 * the same image read twice, and never more notes than the image has
 * room for; no read outside the image's sections (ASan).
 */
#include <errno.h>
#include <string.h>
#include "fuzz.h"
#include "../../tools/elf_notes.c"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		abort();
	return 0;
}

/* count - elf_count_notes() on a private copy of the image (libelf may write to it). */
static int count(const uint8_t *data, size_t size, const char *provider)
{
	char *copy = malloc(size ? size : 1);
	Elf *e;
	int n;

	if (!copy)
		abort();
	memcpy(copy, data, size);
	e = elf_memory(copy, size);
	n = e ? elf_count_notes(e, provider) : -ENOEXEC;
	if (e)
		elf_end(e);
	free(copy);
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int blitz = count(data, size, "blitz"), other = count(data, size, "other");

	FUZZ_CHECK(blitz == -ENOEXEC || blitz >= 0);
	FUZZ_CHECK(count(data, size, "blitz") == blitz);
	/* A note takes at least its 12-byte header and a descriptor of three addresses. */
	FUZZ_CHECK(blitz < 0 || (size_t)blitz * (12 + 8 + 12) <= size);
	FUZZ_CHECK((blitz < 0) == (other < 0));
	return 0;
}
