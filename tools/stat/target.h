// target.h — where arenalloc-stat reads memory from: a live process
// (stopped with ptrace, read through /proc/PID/mem) or an ELF core file
// (its PT_LOAD segments, and for file-backed memory the core left out,
// the mapped files themselves); and how it finds the debug descriptor in
// either (the library's mapping, its dynamic symbol table, its load base).
#ifndef ARENALLOC_STAT_TARGET_H
#define ARENALLOC_STAT_TARGET_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace aastat {

// A file mapped into the target.
struct Mapping {
    uint64_t start, end, file_offset;
    std::string path;   // as the target names it
    std::string open_path;  // where to open it here (may differ for a live process)
};

class Target {
  public:
    virtual ~Target() = default;
    // 0 when all len bytes at addr were read.
    virtual int read(uint64_t addr, void *buf, size_t len) = 0;
    virtual const std::vector<Mapping> &mappings() const = 0;
    virtual std::string describe() const = 0;
    // For a core that names no mapped files: where the debug descriptor
    // lies, found by its contents in the memory the core holds (0: none),
    // and a file mapped there, named by the user.
    virtual uint64_t find_descriptor_in_memory() { return 0; }
    virtual void add_mapping(const Mapping &) {}
};

// Attaches to every thread of pid (each stopped until the object is
// destroyed).  nullptr with a reason in err.
Target *open_process(int pid, std::string *err);

// nullptr with a reason in err (not a core file, unreadable).
Target *open_core(const std::string &path, std::string *err);

// The address of arenalloc_debug_descriptor in the target: looked up in
// library (when not empty) or in each mapped file, in the dynamic symbol
// table (or the full one), relocated by the file's load base.  In a core
// that names no mapped file, library must be given: the descriptor is
// found in memory, and library is taken as mapped where it lies.  0 with
// a reason in err.
uint64_t find_descriptor(Target &t, const std::string &library, std::string *err,
                         std::string *found_in);

}  // namespace aastat

#endif
