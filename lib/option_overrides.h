// option_overrides.h — settings a program makes with a call (glibc's
// mallopt) before the allocator has initialised.  They are kept here and
// laid over the parsed options once, during initialisation, so that they
// win over MALLOC_OPTIONS and the other sources, as the program's own call
// should.  After initialisation these settings are fixed: the calls fail.
#ifndef ARENALLOC_OPTION_OVERRIDES_H
#define ARENALLOC_OPTION_OVERRIDES_H

namespace arenalloc {

// Each returns false, leaving everything as it is, once initialisation has
// read the overrides (or may have).
bool option_override_narenas(unsigned n);
bool option_override_junk(bool on);

// Lays the overrides over g_options and closes them (initialisation, after
// options_init(), with the init lock held).
void option_overrides_apply();

}  // namespace arenalloc

#endif
