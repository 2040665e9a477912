// return_freed_memory: glibc's malloc_trim, which also releases free pages inside every arena
// (not only the top of the main heap, which free() trims by itself).
#include "ratelimitd/core/freed_memory.hpp"

#include <malloc.h>

namespace ratelimitd {

void return_freed_memory() { ::malloc_trim(0); }

}  // namespace ratelimitd
