// option_overrides.cc — settings made by a call before initialisation.
#include "option_overrides.h"

#include <atomic>

#include "options.h"

namespace arenalloc {

namespace {

// 0 means "not set"; a value is stored plus one.  Every access is
// sequentially consistent: an override stored before the caller sees the
// overrides open is one that option_overrides_apply() (which closes them
// before reading) will see.
std::atomic<unsigned> g_narenas_plus_one{0};
std::atomic<unsigned> g_junk_plus_one{0};
std::atomic<bool> g_closed{false};

bool store(std::atomic<unsigned> &slot, unsigned value) {
    if (g_closed.load())
        return false;
    slot.store(value + 1);
    return !g_closed.load();
}

}  // namespace

bool option_override_narenas(unsigned n) {
    if (n < 1)
        n = 1;
    if (n > kMaxArenas)
        n = kMaxArenas;
    return store(g_narenas_plus_one, n);
}

bool option_override_junk(bool on) { return store(g_junk_plus_one, on ? 1 : 0); }

void option_overrides_apply() {
    g_closed.store(true);
    if (unsigned n = g_narenas_plus_one.load())
        g_options.narenas = static_cast<int>(n - 1);
    if (unsigned j = g_junk_plus_one.load())
        g_options.junk = j - 1 != 0;
}

}  // namespace arenalloc
