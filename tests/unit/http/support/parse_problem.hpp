// The Problem of a failed parse, for the codec tests that assert a refusal's exact detail.
#pragma once

#include "ratelimitd/core/error.hpp"

namespace ratelimitd::test {

/// The Problem of a failed parse; a parse that succeeded shows as a failure here.
template <class R>
Problem problem_of(const R& r) {
    if (r.has_value()) return Problem{errc::bad_script_reply, "<parse succeeded>"};
    return r.error();
}

}  // namespace ratelimitd::test
