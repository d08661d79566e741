// atf-c++.hpp for the cross builds (tools/cross-check): the tests'
// #include <atf-c++.hpp> finds this file first (-I tests/cross), which
// gives them tests/standalone/atf.h's implementation of the interface.
// Why not Debian's atf-c++: its libraries for arm64, i386 and s390x cannot
// be installed beside the host's (the packages are not multi-arch).
#include "../standalone/atf.h"
