// The seam between a log format and the replay: one line in, the request it records out.
#pragma once

#include "ratelimitd/simulate/log_request.hpp"

#include <string_view>

namespace ratelimitd::simulate {

/// Reads lines of one log format. Not thread-safe: a parser keeps the last line's scratch.
class LineParser {
public:
    virtual ~LineParser() = default;

    /// Fills `out` from `line` (which `out` may then borrow, as may the parser's scratch until
    /// the next call) and returns nullptr; or returns why the line is not a request of this
    /// format (a short static text), leaving `out` unspecified. Never throws but for bad_alloc.
    virtual const char* parse(std::string_view line, LogRequest& out) = 0;
};

}  // namespace ratelimitd::simulate
