// SPDX-License-Identifier: MIT
/* tools/elf_notes.c - see elf_notes.h. */
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <string.h>
#include "elf_notes.h"

/* The note's type and owner for a USDT probe (sys/sdt.h). */
#define NT_STAPSDT	3
#define STAPSDT_OWNER	"stapsdt"

/*
 * is_provider_note - is the note @nh of @data, name at @name_off and
 * descriptor at @desc_off, a probe of @provider?  A descriptor is three
 * addresses of @addr bytes (pc, base, semaphore), then the provider's and
 * the probe's names and the arguments, each NUL-terminated.
 */
static bool is_provider_note(const Elf_Data *data, const GElf_Nhdr *nh, size_t name_off,
			     size_t desc_off, size_t addr, const char *provider)
{
	const char *d = (const char *)data->d_buf + desc_off;

	return nh->n_type == NT_STAPSDT && nh->n_namesz == sizeof(STAPSDT_OWNER) &&
	       !memcmp((const char *)data->d_buf + name_off, STAPSDT_OWNER, sizeof(STAPSDT_OWNER)) &&
	       nh->n_descsz > 3 * addr &&
	       strnlen(d + 3 * addr, nh->n_descsz - 3 * addr) < nh->n_descsz - 3 * addr &&
	       !strcmp(d + 3 * addr, provider);
}

int elf_count_notes(Elf *e, const char *provider)
{
	size_t shstrndx, addr;
	Elf_Scn *scn = NULL;
	int count = 0;

	if (elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx))
		return -ENOEXEC;
	addr = gelf_getclass(e) == ELFCLASS32 ? 4 : 8;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		const char *name;
		size_t off = 0, next, name_off, desc_off;
		GElf_Nhdr nh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".note.stapsdt"))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			count += is_provider_note(data, &nh, name_off, desc_off, addr, provider);
			off = next;
		}
	}
	return count;
}
