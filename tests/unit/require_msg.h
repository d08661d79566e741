// require_msg.h — ATF_REQUIRE with a streamed failure message (atf-c++ has
// none), for checks inside loops where the failing value matters.
#ifndef ARENALLOC_TESTS_REQUIRE_MSG_H
#define ARENALLOC_TESTS_REQUIRE_MSG_H

#include <sstream>

#include <atf-c++.hpp>

// tests/standalone/atf.h (the cross builds' atf-c++.hpp) has one already.
#undef ATF_REQUIRE_MSG
#define ATF_REQUIRE_MSG(cond, msg)                                  \
    do {                                                            \
        if (!(cond)) {                                              \
            std::ostringstream require_msg_os_;                     \
            require_msg_os_ << #cond << " failed: " << msg;         \
            ATF_FAIL(require_msg_os_.str());                        \
        }                                                           \
    } while (0)

#endif
