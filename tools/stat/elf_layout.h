// elf_layout.h — the parts of an ELF file arenalloc-stat reads (the
// header, program and section headers, symbols, notes), decoded for
// either class (ELFCLASS32, ELFCLASS64) and either byte order
// (ELFDATA2LSB, ELFDATA2MSB): the core or library may be another
// architecture's.  Each field goes through walker::TargetFormat.
#ifndef ARENALLOC_STAT_ELF_LAYOUT_H
#define ARENALLOC_STAT_ELF_LAYOUT_H

#include <cstddef>
#include <cstdint>
#include <string>

#include "target_format.h"

namespace aastat {

struct ElfHeader {
    walker::TargetFormat fmt;  // word_size 4 (ELFCLASS32) or 8 (ELFCLASS64)
    bool is64 = true;
    uint16_t type = 0;         // ET_CORE, ET_DYN, ...
    uint64_t phoff = 0, shoff = 0;
    uint16_t phentsize = 0, phnum = 0, shentsize = 0, shnum = 0;
};

struct ElfSegment {
    uint32_t type;
    uint64_t offset, vaddr, filesz, memsz;
};

struct ElfSection {
    uint32_t type, link;
    uint64_t offset, size, entsize;
};

struct ElfSymbol {
    uint32_t name;
    uint16_t shndx;
    uint64_t value;
};

// The most bytes of a header, whatever the class.
constexpr size_t kElfHeaderMax = 64;

// Decodes the header at p (len bytes).  false with a reason in why when
// it is not ELF (why starts "not ELF") or not of a class and order known
// here.
bool decode_elf_header(const uint8_t *p, size_t len, ElfHeader *out, std::string *why);

// The size of one record of the header's class, as the file must give
// it in e_phentsize, e_shentsize or sh_entsize.
size_t elf_segment_size(const ElfHeader &h);
size_t elf_section_size(const ElfHeader &h);
size_t elf_symbol_size(const ElfHeader &h);

ElfSegment decode_elf_segment(const ElfHeader &h, const uint8_t *p);
ElfSection decode_elf_section(const ElfHeader &h, const uint8_t *p);
ElfSymbol decode_elf_symbol(const ElfHeader &h, const uint8_t *p);

}  // namespace aastat

#endif
