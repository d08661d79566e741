// trace.h — the U option: one record per allocator call.  On systems with
// utrace(2) the records go to ktrace as (pointer, size, result) triples, as
// BSD malloc does; elsewhere one text line per call,
//   arenalloc-trace <pid> <tid> <call> <arg> <size> <result>
// appended to the file named by ARENALLOC_TRACE_FILE, or to standard error.
// tools/trace-decode reads the text form.
#ifndef ARENALLOC_TRACE_H
#define ARENALLOC_TRACE_H

#include <cstddef>

namespace arenalloc {

// Opens the trace destination when U is in force (initialization).
void trace_init();

// Records one call when U is in force; never allocates.
void trace_call(const char *call, const void *arg, size_t size, const void *result);

}  // namespace arenalloc

#endif
