// heap_fuzz.cc — libFuzzer target that drives the allocator with random
// sequences of calls and checks every result against a shadow model.
// Built and run by `tools/fuzz/run heap`, against a copy of lib/ compiled
// with the prefix arena_ (arena_malloc, arena_free, ...), so that it runs
// beside the fuzzer's own allocator instead of replacing it.
//
// The input is read as a program: each operation is one byte (the verb)
// and a few bytes of arguments.  The model holds up to kSlots live blocks,
// each with its requested size, alignment and a fill byte written over the
// whole block.  After every operation, beyond the memory errors
// AddressSanitizer catches in the allocator's own code:
//   - a block's contents are still its fill (first, last and sampled
//     bytes; all of it for small blocks): no two live blocks overlap and
//     nothing the allocator does writes into a live block;
//   - arena_malloc_usable_size() is at least the requested size and does
//     not change while the block lives;
//   - every pointer is aligned as asked (16 bytes at least for malloc);
//   - realloc keeps the first min(old, new) bytes; calloc's block reads
//     zero; failed calls leave the old block intact and set errno.
// At the end of each input every block is freed, so one input cannot
// leak into the next.
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arenalloc.h"

namespace {

constexpr unsigned kSlots = 64;
constexpr size_t kHugeBudget = size_t{64} << 20;  // live huge bytes at most

struct Block {
    unsigned char *p;
    size_t size;      // requested
    size_t usable;    // arena_malloc_usable_size() when allocated
    size_t align;     // asked for (0: malloc's own)
    unsigned char fill;
};

Block g_blocks[kSlots];
size_t g_live_bytes;

struct Reader {
    const uint8_t *data;
    size_t left;
    uint8_t byte() {
        if (left == 0)
            return 0;
        left--;
        return *data++;
    }
    uint32_t u16() { return static_cast<uint32_t>(byte()) | static_cast<uint32_t>(byte()) << 8; }
};

[[noreturn]] void fail(const char *what, const Block &b) {
    fprintf(stderr, "heap_fuzz: %s: block %p, size %zu, align %zu, usable %zu\n", what,
            static_cast<void *>(b.p), b.size, b.align, b.usable);
    abort();
}

// A size from one of four ranges: small classes, large runs, huge
// mappings, and the edges (0, 1, class boundaries).
size_t read_size(Reader &r) {
    uint8_t kind = r.byte();
    uint32_t v = r.u16();
    switch (kind & 3) {
    case 0:
        return 1 + v % 1024;
    case 1:
        return 1 + v % 16384;
    case 2:
        return 16384 + (static_cast<size_t>(v) * 37) % (2u << 20);  // up to just over a chunk
    default: {
        static const size_t kEdges[] = {0, 1, 8, 15, 16, 17, 4096, 14336, 14337,
                                        (1u << 20) - 4096, 1835008, 1835009,
                                        2u << 20, (2u << 20) + 1, 6u << 20};
        return kEdges[v % (sizeof(kEdges) / sizeof(kEdges[0]))];
    }
    }
}

void check_block(const Block &b) {
    if (b.p == nullptr)
        return;
    if (b.size != 0) {
        if (b.p[0] != b.fill || b.p[b.size - 1] != b.fill)
            fail("block contents changed at an end", b);
        if (b.size <= 4096) {
            for (size_t i = 0; i < b.size; i++)
                if (b.p[i] != b.fill)
                    fail("block contents changed", b);
        } else {
            for (size_t i = 0; i < b.size; i += 4093)
                if (b.p[i] != b.fill)
                    fail("block contents changed (sampled)", b);
        }
    }
    if (arena_malloc_usable_size(b.p) != b.usable)
        fail("usable size changed while the block lives", b);
}

bool huge_ok(size_t size) { return size < (2u << 20) || g_live_bytes + size <= kHugeBudget; }

// Takes a new block into slot s (which is free), checking what can be
// checked right away.
void adopt(unsigned s, void *p, size_t size, size_t align, unsigned char fill, bool zeroed) {
    Block &b = g_blocks[s];
    b.p = static_cast<unsigned char *>(p);
    b.size = size;
    b.align = align;
    b.fill = fill;
    b.usable = arena_malloc_usable_size(p);
    if (b.usable < size)
        fail("usable size below the request", b);
    size_t want = align != 0 ? align : (size >= 16 ? 16 : 8);
    if ((reinterpret_cast<uintptr_t>(p) & (want - 1)) != 0)
        fail("misaligned block", b);
    if (zeroed)
        for (size_t i = 0; i < size; i++)
            if (b.p[i] != 0)
                fail("calloc block not zero", b);
    // Whole usable size is the caller's to write.
    memset(b.p, fill, b.usable);
    g_live_bytes += b.usable;
}

void release(unsigned s) {
    Block &b = g_blocks[s];
    if (b.p == nullptr)
        return;
    check_block(b);
    g_live_bytes -= b.usable;
    arena_free(b.p);
    b.p = nullptr;
}

void run_op(Reader &r) {
    uint8_t verb = r.byte();
    unsigned s = r.byte() % kSlots;
    unsigned char fill = static_cast<unsigned char>(r.byte() | 1);
    Block &b = g_blocks[s];
    switch (verb % 8) {
    case 0:
    case 1: {  // malloc
        size_t size = read_size(r);
        if (!huge_ok(size))
            break;
        release(s);
        void *p = arena_malloc(size);
        if (p == nullptr)
            fail("malloc returned NULL", b);
        adopt(s, p, size, 0, fill, false);
        break;
    }
    case 2: {  // calloc, sometimes overflowing
        size_t n = 1 + r.byte() % 64;
        size_t size = read_size(r) / n;
        bool overflow = (r.byte() & 15) == 0;
        if (overflow) {
            errno = 0;
            if (arena_calloc(SIZE_MAX / 2 + n, 4) != nullptr || errno != ENOMEM)
                fail("calloc overflow not refused with ENOMEM", b);
            break;
        }
        if (!huge_ok(n * size))
            break;
        release(s);
        void *p = arena_calloc(n, size);
        if (p == nullptr)
            fail("calloc returned NULL", b);
        adopt(s, p, n * size, 0, fill, true);
        break;
    }
    case 3:
    case 4: {  // realloc, of a live block or of NULL
        size_t size = read_size(r);
        if (!huge_ok(size))
            break;
        if ((r.byte() & 31) == 0 && b.p != nullptr) {
            errno = 0;
            if (arena_realloc(b.p, SIZE_MAX - 4096) != nullptr || errno != ENOMEM)
                fail("realloc to SIZE_MAX not refused with ENOMEM", b);
            check_block(b);
            break;
        }
        size_t keep = b.p != nullptr ? (b.size < size ? b.size : size) : 0;
        unsigned char old_fill = b.fill;
        if (b.p != nullptr) {
            check_block(b);
            g_live_bytes -= b.usable;
        }
        void *p = arena_realloc(b.p, size);
        if (p == nullptr)
            fail("realloc returned NULL", b);
        unsigned char *q = static_cast<unsigned char *>(p);
        for (size_t i = 0; i < keep; i++)
            if (q[i] != old_fill)
                fail("realloc lost contents", b);
        b.p = nullptr;
        adopt(s, p, size, 0, fill, false);
        break;
    }
    case 5: {  // the aligned family
        size_t align = size_t{1} << (r.byte() % 22);  // 1 B .. 2 MiB
        size_t size = read_size(r);
        if (!huge_ok(size + align))
            break;
        release(s);
        void *p = nullptr;
        uint8_t how = r.byte() % 3;
        if (how == 0) {
            int rc = arena_posix_memalign(&p, align, size);
            bool bad = align < sizeof(void *);
            if (bad) {
                if (rc != EINVAL)
                    fail("posix_memalign accepted a bad alignment", b);
                break;
            }
            if (rc != 0)
                fail("posix_memalign failed", b);
        } else if (how == 1) {
            if (size % align != 0)
                size += align - size % align;  // C11 rule for aligned_alloc
            if (!huge_ok(size))
                break;
            p = arena_aligned_alloc(align, size);
        } else {
            p = arena_memalign(align, size);
        }
        if (p == nullptr)
            fail("aligned allocation returned NULL", b);
        adopt(s, p, size, align, fill, false);
        break;
    }
    case 6:  // free (also of an empty slot: free(NULL))
        if (b.p == nullptr)
            arena_free(nullptr);
        release(s);
        break;
    default:  // look at every live block
        for (const Block &x : g_blocks)
            check_block(x);
        break;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Reader r = {data, size};
    while (r.left != 0)
        run_op(r);
    for (unsigned s = 0; s < kSlots; s++)
        release(s);
    return 0;
}
