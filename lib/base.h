// base.h — the metadata allocator.  Arena structures, run and huge
// descriptors and registry leaves are carved from blocks the allocator maps
// for itself; nothing here is ever returned to the OS, and recycling of
// descriptors happens in the typed lists of their owners.
#ifndef ARENALLOC_BASE_H
#define ARENALLOC_BASE_H

#include <cstddef>
#include <cstdint>

#include "util.h"

namespace arenalloc {

// Zeroed memory of at least size bytes aligned to 64, or nullptr when the
// kernel refuses.  Thread-safe.
void *base_alloc(size_t size);

// Bytes of metadata mapped so far (the variable is under the base lock;
// named for the debug descriptor).
extern AA_HIDDEN uint64_t g_base_mapped;
uint64_t base_mapped();

void base_prefork();
void base_postfork_parent();
void base_postfork_child();

}  // namespace arenalloc

#endif
