// allocator.h — malloc semantics (errno, overflow, alignment rules, the
// routing between small, large and huge) as ordinary functions, so that
// api.cc is nothing but thin exports and the rules can be tested apart.
#ifndef ARENALLOC_ALLOCATOR_H
#define ARENALLOC_ALLOCATOR_H

#include <cstddef>

namespace arenalloc {

void *aa_malloc(size_t size);
void *aa_calloc(size_t n, size_t size);
void *aa_realloc(void *ptr, size_t size);
void *aa_reallocarray(void *ptr, size_t n, size_t size);
void aa_free(void *ptr);
int aa_posix_memalign(void **out, size_t align, size_t size);
void *aa_aligned_alloc(size_t align, size_t size);
void *aa_valloc(size_t size);
void *aa_pvalloc(size_t size);
size_t aa_usable_size(const void *ptr);

}  // namespace arenalloc

#endif
