// Which window a verdict reports in its single-valued fields.
#include "ratelimitd/check/verdict.hpp"

#include <algorithm>

namespace ratelimitd::check {

const WindowState& Verdict::reported() const {
    auto denied = std::find_if(windows.begin(), windows.end(),
                               [](const WindowState& w) { return !w.allowed; });
    if (denied != windows.end()) return *denied;
    return *std::min_element(windows.begin(), windows.end(),
                             [](const WindowState& a, const WindowState& b) {
                                 return a.remaining < b.remaining;
                             });
}

}  // namespace ratelimitd::check
