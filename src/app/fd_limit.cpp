// ensure_descriptors_for(): getrlimit/setrlimit on RLIMIT_NOFILE.
#include "ratelimitd/app/fd_limit.hpp"

#include <spdlog/spdlog.h>

#include <sys/resource.h>

#include <algorithm>

namespace ratelimitd::app {

void ensure_descriptors_for(std::size_t max_connections) {
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
    const auto needed = static_cast<rlim_t>(max_connections + reserved_descriptors);
    if (lim.rlim_cur >= needed) return;
    const rlim_t before = lim.rlim_cur;
    lim.rlim_cur = lim.rlim_max == RLIM_INFINITY ? needed : std::min(needed, lim.rlim_max);
    if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) lim.rlim_cur = before;
    if (lim.rlim_cur < needed) {
        // Fields last, so the sentence stays whole in a JSON line's msg (app/log_fields.hpp).
        spdlog::warn("open-file limit below max_connections plus reserved descriptors: connections beyond "
                     "accepted_up_to fail to be accepted instead of getting 503; raise the limit (ulimit -n, "
                     "LimitNOFILE=) or lower max_connections limit={} max_connections={} reserved={} "
                     "accepted_up_to={}",
                     static_cast<unsigned long long>(lim.rlim_cur), max_connections, reserved_descriptors,
                     lim.rlim_cur > reserved_descriptors ? static_cast<unsigned long long>(lim.rlim_cur - reserved_descriptors) : 0ULL);
    } else if (lim.rlim_cur != before) {
        spdlog::debug("open-file limit raised from={} to={} max_connections={}",
                      static_cast<unsigned long long>(before), static_cast<unsigned long long>(lim.rlim_cur),
                      max_connections);
    }
}

}  // namespace ratelimitd::app
