// base.cc — bump allocation from metadata blocks.
#include "base.h"

#include "mutex.h"
#include "platform.h"
#include "util.h"

namespace arenalloc {

namespace {

constexpr size_t kBaseBlock = size_t{2} << 20;
constexpr size_t kBaseAlign = 64;  // a cache line: metadata of different arenas never shares one

Mutex g_base_mutex;
uintptr_t g_base_next = 0;  // next free byte of the current block
uintptr_t g_base_end = 0;   // end of the current block
}  // namespace

uint64_t g_base_mapped = 0;

void *base_alloc(size_t size) {
    size = align_up(size, kBaseAlign);
    MutexGuard guard(g_base_mutex);
    if (g_base_end - g_base_next < size) {
        size_t block = size > kBaseBlock ? align_up(size, kPage) : kBaseBlock;
        void *p = pages_map(block, kPage);
        if (p == nullptr)
            return nullptr;
        // The tail of the old block is abandoned: it is small, and keeping
        // a list of fragments is not worth the code.
        g_base_next = reinterpret_cast<uintptr_t>(p);
        g_base_end = g_base_next + block;
        g_base_mapped += block;
    }
    void *result = reinterpret_cast<void *>(g_base_next);
    g_base_next += size;
    return result;
}

uint64_t base_mapped() {
    MutexGuard guard(g_base_mutex);
    return g_base_mapped;
}

void base_prefork() { g_base_mutex.lock(); }
void base_postfork_parent() { g_base_mutex.unlock(); }
void base_postfork_child() { g_base_mutex.reinit_in_child(); }

}  // namespace arenalloc
