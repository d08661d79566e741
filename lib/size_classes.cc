// size_classes.cc — the single instance of the size-class table.  It is
// constant-initialized, so no constructor runs before main.
#include "size_classes.h"

namespace arenalloc {

const SizeClassTable kSizeClasses = make_size_class_table();

}  // namespace arenalloc
