// elf_layout.cc — ELF records of either class and byte order (see
// elf_layout.h).  <elf.h>'s Elf32_* and Elf64_* structures give each
// field's place and width; the bytes are decoded by the file's own order.
#include "elf_layout.h"

#include <elf.h>

#include <cstring>

namespace aastat {

namespace {

// Field m of record kind T (Ehdr, Phdr, ...) at p, in h's class and order.
#define ELF_FIELD(h, p, T, m)                                                           \
    ((h).is64 ? (h).fmt.load((p) + offsetof(Elf64_##T, m), sizeof(Elf64_##T::m))       \
              : (h).fmt.load((p) + offsetof(Elf32_##T, m), sizeof(Elf32_##T::m)))

}  // namespace

bool decode_elf_header(const uint8_t *p, size_t len, ElfHeader *out, std::string *why) {
    if (len < EI_NIDENT || memcmp(p, ELFMAG, SELFMAG) != 0) {
        *why = "not ELF";
        return false;
    }
    ElfHeader h;
    uint8_t cls = p[EI_CLASS], data = p[EI_DATA];
    if ((cls != ELFCLASS32 && cls != ELFCLASS64) || (data != ELFDATA2LSB && data != ELFDATA2MSB)) {
        *why = "an ELF file of unknown class or byte order";
        return false;
    }
    h.is64 = cls == ELFCLASS64;
    h.fmt.word_size = h.is64 ? 8 : 4;
    h.fmt.big_endian = data == ELFDATA2MSB;
    if (len < (h.is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr))) {
        *why = "a truncated ELF header";
        return false;
    }
    h.type = static_cast<uint16_t>(ELF_FIELD(h, p, Ehdr, e_type));
    h.phoff = ELF_FIELD(h, p, Ehdr, e_phoff);
    h.shoff = ELF_FIELD(h, p, Ehdr, e_shoff);
    h.phentsize = static_cast<uint16_t>(ELF_FIELD(h, p, Ehdr, e_phentsize));
    h.phnum = static_cast<uint16_t>(ELF_FIELD(h, p, Ehdr, e_phnum));
    h.shentsize = static_cast<uint16_t>(ELF_FIELD(h, p, Ehdr, e_shentsize));
    h.shnum = static_cast<uint16_t>(ELF_FIELD(h, p, Ehdr, e_shnum));
    *out = h;
    return true;
}

size_t elf_segment_size(const ElfHeader &h) {
    return h.is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
}

size_t elf_section_size(const ElfHeader &h) {
    return h.is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
}

size_t elf_symbol_size(const ElfHeader &h) { return h.is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym); }

ElfSegment decode_elf_segment(const ElfHeader &h, const uint8_t *p) {
    return {static_cast<uint32_t>(ELF_FIELD(h, p, Phdr, p_type)), ELF_FIELD(h, p, Phdr, p_offset),
            ELF_FIELD(h, p, Phdr, p_vaddr), ELF_FIELD(h, p, Phdr, p_filesz),
            ELF_FIELD(h, p, Phdr, p_memsz)};
}

ElfSection decode_elf_section(const ElfHeader &h, const uint8_t *p) {
    return {static_cast<uint32_t>(ELF_FIELD(h, p, Shdr, sh_type)),
            static_cast<uint32_t>(ELF_FIELD(h, p, Shdr, sh_link)), ELF_FIELD(h, p, Shdr, sh_offset),
            ELF_FIELD(h, p, Shdr, sh_size), ELF_FIELD(h, p, Shdr, sh_entsize)};
}

ElfSymbol decode_elf_symbol(const ElfHeader &h, const uint8_t *p) {
    return {static_cast<uint32_t>(ELF_FIELD(h, p, Sym, st_name)),
            static_cast<uint16_t>(ELF_FIELD(h, p, Sym, st_shndx)), ELF_FIELD(h, p, Sym, st_value)};
}

}  // namespace aastat
