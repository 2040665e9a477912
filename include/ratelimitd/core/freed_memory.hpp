// Handing memory a large, short-lived parse freed back to the operating system.
#pragma once

namespace ratelimitd {

/// Returns the heap's free pages to the kernel (glibc's malloc_trim). A refused 15 MiB config
/// parses into about 1 GB of YAML nodes spread over the threads' arenas; freed, that memory
/// stayed in the process (RSS never came back down) until this is called. Costs milliseconds:
/// for after a config load or refusal, never on a request's path.
void return_freed_memory();

}  // namespace ratelimitd
