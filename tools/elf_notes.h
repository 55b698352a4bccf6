/* SPDX-License-Identifier: MIT */
/*
 * tools/elf_notes.h - counting a provider's USDT notes (.note.stapsdt) in
 * an ELF image: how a tool checks that the binary it was given carries
 * blitz probes.
 */
#ifndef BLITZ_TOOLS_ELF_NOTES_H
#define BLITZ_TOOLS_ELF_NOTES_H

#include <libelf.h>

/*
 * elf_count_notes - how many USDT notes of @provider the image @e has
 * (>= 0), or -ENOEXEC if @e is not an ELF file with section names.  Any
 * bytes may be in the image (a -b path names whatever the user chose).
 */
int elf_count_notes(Elf *e, const char *provider);

#endif
