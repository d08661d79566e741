// target.cc — live processes, core files, and the descriptor's address.
// Offsets into /proc/PID/mem are addresses, past 2 GiB in a 32-bit
// process: off_t must be 64 bits even where the tool itself is 32-bit.
#define _FILE_OFFSET_BITS 64
#include "target.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "debug_descriptor.h"
#include "elf_layout.h"

namespace aastat {

namespace {

const char kSymbol[] = "arenalloc_debug_descriptor";

bool pread_all(int fd, void *buf, size_t len, uint64_t off) {
    char *p = static_cast<char *>(buf);
    while (len != 0) {
        ssize_t n = pread(fd, p, len, static_cast<off_t>(off));
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return false;
        }
        p += n;
        len -= static_cast<size_t>(n);
        off += static_cast<uint64_t>(n);
    }
    return true;
}

bool read_file(const std::string &path, std::vector<uint8_t> *out) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && st.st_size > 0;
    if (ok) {
        out->resize(static_cast<size_t>(st.st_size));
        ok = pread_all(fd, out->data(), out->size(), 0);
    }
    close(fd);
    return ok;
}

// An ELF file (a library or program) in memory, of either class and
// byte order.
struct Elf {
    std::vector<uint8_t> data;
    ElfHeader h;

    bool load(const std::string &path, std::string *err) {
        if (!read_file(path, &data)) {
            *err = "cannot read " + path + ": " + strerror(errno);
            return false;
        }
        std::string why;
        if (!decode_elf_header(data.data(), data.size(), &h, &why)) {
            *err = path + (why == "not ELF" ? " is not an ELF file" : " is " + why);
            return false;
        }
        return true;
    }
    // count records of size bytes at file offset off, or nullptr.
    const uint8_t *at(uint64_t off, uint64_t count, size_t size) const {
        if (off > data.size() || count > (data.size() - off) / size)
            return nullptr;
        return data.data() + off;
    }
    const uint8_t *phdrs() const {
        return h.phentsize == elf_segment_size(h) ? at(h.phoff, h.phnum, h.phentsize) : nullptr;
    }
    const uint8_t *shdrs() const {
        return h.shentsize == elf_section_size(h) ? at(h.shoff, h.shnum, h.shentsize) : nullptr;
    }
    ElfSection section(const uint8_t *sh, unsigned i) const {
        return decode_elf_section(h, sh + size_t{i} * h.shentsize);
    }

    // The symbol's value in the file's address space, or 0.
    uint64_t symbol(const char *name) const {
        const uint8_t *sh = shdrs();
        if (sh == nullptr)
            return 0;
        size_t sym_size = elf_symbol_size(h);
        for (unsigned pass = 0; pass < 2; pass++) {
            uint32_t want = pass == 0 ? SHT_DYNSYM : SHT_SYMTAB;
            for (unsigned i = 0; i < h.shnum; i++) {
                ElfSection table = section(sh, i);
                if (table.type != want || table.entsize != sym_size || table.link >= h.shnum)
                    continue;
                ElfSection strs = section(sh, table.link);
                uint64_t n = table.size / sym_size;
                const uint8_t *syms = at(table.offset, n, sym_size);
                if (syms == nullptr)
                    continue;
                for (uint64_t k = 0; k < n; k++) {
                    ElfSymbol sym = decode_elf_symbol(h, syms + k * sym_size);
                    if (sym.name >= strs.size || sym.shndx == SHN_UNDEF)
                        continue;
                    const char *s = reinterpret_cast<const char *>(at(strs.offset + sym.name, 1, 1));
                    size_t room = strs.size - sym.name;
                    if (s != nullptr && strnlen(s, room) < room && strcmp(s, name) == 0)
                        return sym.value;
                }
            }
        }
        return 0;
    }

    std::vector<ElfSegment> loads() const {
        std::vector<ElfSegment> out;
        const uint8_t *ph = phdrs();
        for (unsigned i = 0; ph != nullptr && i < h.phnum; i++) {
            ElfSegment seg = decode_elf_segment(h, ph + size_t{i} * h.phentsize);
            if (seg.type == PT_LOAD)
                out.push_back(seg);
        }
        return out;
    }

    // Virtual address that file offset 0 is loaded at, relative to the
    // load base (the first PT_LOAD's page-aligned address).
    uint64_t first_load_vaddr() const {
        std::vector<ElfSegment> l = loads();
        return l.empty() ? 0 : l[0].vaddr - l[0].offset;
    }
};

std::string base_name(const std::string &p) {
    size_t s = p.rfind('/');
    return s == std::string::npos ? p : p.substr(s + 1);
}

// ---- live process -----------------------------------------------------------

class Process : public Target {
  public:
    explicit Process(int pid) : pid_(pid) {}
    ~Process() override {
        if (mem_ >= 0)
            close(mem_);
        for (int tid : stopped_)
            ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
    }

    bool open(std::string *err) {
        // Stop every thread, again until no new one appears, so nothing
        // changes the heap while it is read.
        for (bool more = true; more;) {
            more = false;
            std::string dir = "/proc/" + std::to_string(pid_) + "/task";
            DIR *d = opendir(dir.c_str());
            if (d == nullptr) {
                *err = "no process " + std::to_string(pid_) + ": " + strerror(errno);
                return false;
            }
            while (struct dirent *e = readdir(d)) {
                int tid = atoi(e->d_name);
                if (tid <= 0 || stopped_.count(tid) != 0)
                    continue;
                if (ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
                    if (errno == ESRCH || task_exiting(tid))
                        continue;  // the thread exited (a zombie leader, too)
                    *err = "cannot attach to process " + std::to_string(pid_) + " (thread " +
                           std::to_string(tid) + "): " + strerror(errno) +
                           (errno == EPERM ? " (ptrace not permitted: see "
                                             "/proc/sys/kernel/yama/ptrace_scope, or run as "
                                             "the process's owner)" : "");
                    closedir(d);
                    return false;
                }
                stopped_.insert(tid);
                more = true;
                if (ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0)
                    continue;
                int status;
                while (waitpid(tid, &status, __WALL) < 0 && errno == EINTR) {
                }
            }
            closedir(d);
        }
        std::string mem = "/proc/" + std::to_string(pid_) + "/mem";
        mem_ = stopped_.empty() ? -1 : ::open(mem.c_str(), O_RDONLY | O_CLOEXEC);
        if (mem_ < 0) {
            *err = stopped_.empty() || errno == ESRCH
                       ? "process " + std::to_string(pid_) + " is exiting"
                       : "cannot open " + mem + ": " + strerror(errno);
            return false;
        }
        std::ifstream maps("/proc/" + std::to_string(pid_) + "/maps");
        std::string line;
        while (std::getline(maps, line)) {
            std::istringstream ss(line);
            std::string range, perms, off, dev, inode, path;
            ss >> range >> perms >> off >> dev >> inode;
            std::getline(ss, path);
            path.erase(0, path.find_first_not_of(' '));
            if (path.empty() || path[0] != '/')
                continue;
            Mapping m;
            m.start = strtoull(range.c_str(), nullptr, 16);
            m.end = strtoull(range.c_str() + range.find('-') + 1, nullptr, 16);
            m.file_offset = strtoull(off.c_str(), nullptr, 16);
            m.path = path;
            // A file deleted since it was mapped is still reachable
            // through map_files (where permitted).
            m.open_path = path;
            const char deleted[] = " (deleted)";
            if (path.size() > sizeof(deleted) &&
                path.compare(path.size() - sizeof(deleted) + 1, std::string::npos, deleted) == 0)
                m.open_path = "/proc/" + std::to_string(pid_) + "/map_files/" + range;
            maps_.push_back(m);
        }
        return true;
    }

    int read(uint64_t addr, void *buf, size_t len) override {
        return pread_all(mem_, buf, len, addr) ? 0 : -1;
    }
    const std::vector<Mapping> &mappings() const override { return maps_; }
    std::string describe() const override {
        return "process " + std::to_string(pid_) + " (" + std::to_string(stopped_.size()) +
               " thread" + (stopped_.size() == 1 ? "" : "s") + " stopped)";
    }

  private:
    // Whether thread tid is gone or a zombie (it cannot be attached, and
    // needs not be stopped).
    bool task_exiting(int tid) const {
        std::ifstream st("/proc/" + std::to_string(pid_) + "/task/" + std::to_string(tid) +
                         "/status");
        std::string line;
        while (std::getline(st, line))
            if (line.compare(0, 6, "State:") == 0)
                return line.find('Z') != std::string::npos || line.find('X') != std::string::npos;
        return true;
    }

    int pid_;
    int mem_ = -1;
    std::set<int> stopped_;
    std::vector<Mapping> maps_;
};

// ---- core file -------------------------------------------------------------------

class Core : public Target {
  public:
    ~Core() override {
        if (fd_ >= 0)
            close(fd_);
        for (auto &f : files_)
            if (f.second >= 0)
                close(f.second);
    }

    bool open(const std::string &path, std::string *err) {
        path_ = path;
        fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0) {
            *err = "cannot open " + path + ": " + strerror(errno);
            return false;
        }
        struct stat st;
        fstat(fd_, &st);
        size_ = static_cast<uint64_t>(st.st_size);
        uint8_t head[kElfHeaderMax];
        size_t head_len = static_cast<size_t>(std::min<uint64_t>(size_, sizeof(head)));
        std::string why;
        if (!pread_all(fd_, head, head_len, 0) ||
            !decode_elf_header(head, head_len, &eh_, &why)) {
            *err = why.empty() || why == "not ELF"
                       ? path + " is neither a process id nor an ELF core file"
                       : path + " is " + why;
            return false;
        }
        if (eh_.type != ET_CORE) {
            *err = path + " is not an ELF core file";
            return false;
        }
        size_t ph_size = elf_segment_size(eh_);
        std::vector<uint8_t> raw(size_t{eh_.phnum} * ph_size);
        if (eh_.phentsize != ph_size || !pread_all(fd_, raw.data(), raw.size(), eh_.phoff)) {
            *err = path + ": truncated program headers";
            return false;
        }
        std::vector<ElfSegment> ph;
        for (unsigned i = 0; i < eh_.phnum; i++)
            ph.push_back(decode_elf_segment(eh_, raw.data() + size_t{i} * ph_size));
        uint64_t needed = 0;
        for (const ElfSegment &p : ph)
            needed = std::max<uint64_t>(needed, p.offset + p.filesz);
        for (const ElfSegment &p : ph) {
            if (p.type == PT_LOAD)
                loads_.push_back(p);
            else if (p.type == PT_NOTE)
                read_notes(p);
        }
        if (maps_.empty() && needed > size_) {
            *err = path + " is truncated (" + std::to_string(size_) + " of " +
                   std::to_string(needed) + " bytes): its notes, which say where the "
                   "library was mapped, are lost";
            return false;
        }
        return true;
    }

    void add_mapping(const Mapping &m) override { maps_.push_back(m); }

    // A core without NT_FILE (qemu-user writes none) does not say where
    // the library was mapped, but holds its data: the descriptor is found
    // by its head (the magic, then at 16 the byte order mark, in the
    // core's order) at a 4-byte boundary of a segment the core holds.
    uint64_t find_descriptor_in_memory() override {
        const size_t kBlock = size_t{1} << 20;
        std::vector<uint8_t> buf;
        for (const ElfSegment &p : loads_) {
            if (p.offset + p.filesz > size_)
                continue;
            // Blocks overlap by a head's length, so no head is cut.
            for (uint64_t at = 0; at + 24 <= p.filesz; at += kBlock) {
                size_t n = static_cast<size_t>(std::min<uint64_t>(kBlock + 24, p.filesz - at));
                buf.resize(n);
                if (!pread_all(fd_, buf.data(), n, p.offset + at))
                    break;
                for (size_t i = 0; i + 24 <= n && i < kBlock; i += 4)
                    if (eh_.fmt.load(buf.data() + i, 8) == ARENALLOC_DEBUG_MAGIC &&
                        eh_.fmt.load(buf.data() + i + 16, 4) == ARENALLOC_DEBUG_BYTE_ORDER)
                        return p.vaddr + at + i;
            }
        }
        return 0;
    }

    int read(uint64_t addr, void *buf, size_t len) override {
        char *out = static_cast<char *>(buf);
        while (len != 0) {
            size_t got = read_some(addr, out, len);
            if (got == 0)
                return -1;
            addr += got;
            out += got;
            len -= got;
        }
        return 0;
    }
    const std::vector<Mapping> &mappings() const override { return maps_; }
    std::string describe() const override { return "core file " + path_; }

  private:
    void read_notes(const ElfSegment &p) {
        if (p.filesz > (64u << 20))
            return;
        std::vector<uint8_t> n(p.filesz);
        if (!pread_all(fd_, n.data(), n.size(), p.offset))
            return;
        // A note's header is three 4-byte words in either class.
        size_t off = 0;
        while (off + 12 <= n.size()) {
            uint32_t namesz = static_cast<uint32_t>(eh_.fmt.load(n.data() + off, 4));
            uint32_t descsz = static_cast<uint32_t>(eh_.fmt.load(n.data() + off + 4, 4));
            uint32_t type = static_cast<uint32_t>(eh_.fmt.load(n.data() + off + 8, 4));
            size_t name_off = off + 12;
            size_t desc_off = name_off + ((uint64_t{namesz} + 3) & ~uint64_t{3});
            size_t next = desc_off + ((uint64_t{descsz} + 3) & ~uint64_t{3});
            if (next > n.size() || desc_off > n.size())
                break;
            if (type == NT_FILE && descsz >= 2 * eh_.fmt.word_size)
                parse_nt_file(n.data() + desc_off, descsz);
            off = next;
        }
    }

    // NT_FILE, in words of the core's class: count, page size, count x
    // (start, end, page offset), names.
    void parse_nt_file(const uint8_t *p, size_t len) {
        uint32_t w = eh_.fmt.word_size;
        uint64_t count = eh_.fmt.load_word(p);
        uint64_t page = eh_.fmt.load_word(p + w);
        if (count > len / (3 * w))
            return;
        const uint8_t *entries = p + 2 * w;
        const uint8_t *names = entries + count * 3 * w;
        const uint8_t *end = p + len;
        for (uint64_t i = 0; i < count && names < end; i++) {
            const uint8_t *e = entries + i * 3 * w;
            size_t nl = strnlen(reinterpret_cast<const char *>(names), end - names);
            Mapping m{eh_.fmt.load_word(e), eh_.fmt.load_word(e + w),
                      eh_.fmt.load_word(e + 2 * w) * page,
                      std::string(reinterpret_cast<const char *>(names), nl), ""};
            m.open_path = m.path;
            maps_.push_back(m);
            names += nl + 1;
        }
    }

    size_t read_some(uint64_t addr, char *out, size_t len) {
        for (const ElfSegment &p : loads_) {
            if (addr < p.vaddr || addr - p.vaddr >= p.memsz)
                continue;
            uint64_t rel = addr - p.vaddr;
            if (rel < p.filesz && p.offset + p.filesz <= size_) {
                size_t n = static_cast<size_t>(std::min<uint64_t>(len, p.filesz - rel));
                return pread_all(fd_, out, n, p.offset + rel) ? n : 0;
            }
            break;  // in a segment whose contents the core left out
        }
        // Memory the core does not hold: file-backed pages come from the file.
        for (const Mapping &m : maps_) {
            if (addr < m.start || addr >= m.end)
                continue;
            int fd = file_fd(m.open_path);
            size_t n = static_cast<size_t>(std::min<uint64_t>(len, m.end - addr));
            if (fd >= 0 && pread_all(fd, out, n, m.file_offset + (addr - m.start)))
                return n;
            return 0;
        }
        return 0;
    }

    int file_fd(const std::string &path) {
        auto it = files_.find(path);
        if (it != files_.end())
            return it->second;
        int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        files_[path] = fd;
        return fd;
    }

    std::string path_;
    int fd_ = -1;
    uint64_t size_ = 0;
    ElfHeader eh_;
    std::vector<ElfSegment> loads_;
    std::vector<Mapping> maps_;
    std::map<std::string, int> files_;
};

}  // namespace

Target *open_process(int pid, std::string *err) {
    Process *p = new Process(pid);
    if (!p->open(err)) {
        delete p;
        return nullptr;
    }
    return p;
}

Target *open_core(const std::string &path, std::string *err) {
    Core *c = new Core;
    if (!c->open(path, err)) {
        delete c;
        return nullptr;
    }
    return c;
}

namespace {

// A core that names no mapped file: the library, named by --lib, gives the
// descriptor's place in the file, and the descriptor found in memory where
// the file was loaded; the file then stands in for the memory the core
// left out (its read-only segments).
uint64_t find_descriptor_unnamed(Target &t, const std::string &library, std::string *err,
                                 std::string *found_in) {
    if (library.empty()) {
        *err = "the core names no mapped file (no NT_FILE note: qemu-user writes none); "
               "name the library with --lib";
        return 0;
    }
    Elf elf;
    if (!elf.load(library, err))
        return 0;
    uint64_t value = elf.symbol(kSymbol);
    uint64_t at = t.find_descriptor_in_memory();
    if (value == 0 || at == 0) {
        *err = value == 0 ? library + " does not define " + kSymbol
                          : "no arenalloc debug descriptor in the core's memory";
        return 0;
    }
    uint64_t base = elf.h.type == ET_DYN ? at - value : 0;
    for (const ElfSegment &seg : elf.loads())
        t.add_mapping(Mapping{base + seg.vaddr, base + seg.vaddr + seg.filesz, seg.offset,
                              library, library});
    *found_in = library;
    return at;
}

}  // namespace

uint64_t find_descriptor(Target &t, const std::string &library, std::string *err,
                         std::string *found_in) {
    if (t.mappings().empty())
        return find_descriptor_unnamed(t, library, err, found_in);
    // Candidate files: the one named, else every mapped file, those whose
    // name mentions arenalloc first.
    std::vector<std::string> paths;
    for (const Mapping &m : t.mappings())
        if (std::find(paths.begin(), paths.end(), m.path) == paths.end())
            paths.push_back(m.path);
    std::stable_partition(paths.begin(), paths.end(), [](const std::string &p) {
        return base_name(p).find("arenalloc") != std::string::npos;
    });
    if (!library.empty()) {
        std::vector<std::string> named;
        for (const std::string &p : paths)
            if (base_name(p) == base_name(library) || p == library)
                named.push_back(p);
        if (named.empty()) {
            *err = "the target maps no file named " + base_name(library);
            return 0;
        }
        paths = named;
    }
    std::string reasons;
    for (const std::string &p : paths) {
        const Mapping *first = nullptr;
        for (const Mapping &m : t.mappings())
            if (m.path == p && m.file_offset == 0 && (first == nullptr || m.start < first->start))
                first = &m;
        if (first == nullptr)
            continue;
        Elf elf;
        std::string why;
        if (!elf.load(library.empty() ? first->open_path : library, &why)) {
            if (!library.empty() || base_name(p).find("arenalloc") != std::string::npos)
                reasons += "; " + why;
            continue;
        }
        uint64_t value = elf.symbol(kSymbol);
        if (value == 0)
            continue;
        uint64_t base = elf.h.type == ET_DYN ? first->start - elf.first_load_vaddr() : 0;
        *found_in = p;
        return base + value;
    }
    *err = "no arenalloc in the target: no mapped file defines " + std::string(kSymbol) +
           " (is the program using arenalloc?)" + reasons;
    return 0;
}

}  // namespace aastat
