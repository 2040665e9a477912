// The HTTP message types every handler uses.
#pragma once

#include "ratelimitd/http/field_allocator.hpp"

#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace ratelimitd::http {

namespace bhttp = boost::beast::http;

/// Header fields of every request and answer: their blocks are recycled per thread (see
/// FieldAllocator), so a check does not allocate one per header line.
using Fields = bhttp::basic_fields<FieldAllocator<char>>;

/// Text from the same per-thread recycling allocator: the request and answer bodies, and the
/// JSON a check answer is written into. A steady request loop then calls malloc for neither
/// (a check's body is a few hundred bytes, inside the allocator's size classes).
using PooledString = std::basic_string<char, std::char_traits<char>, FieldAllocator<char>>;
using Body = bhttp::basic_string_body<char, std::char_traits<char>, FieldAllocator<char>>;

using Request = bhttp::request<Body, Fields>;
using Response = bhttp::response<Body, Fields>;

/// What the connection knows about a request that the message itself does not carry.
struct RequestContext {
    std::string peer;  ///< the direct peer's address ("127.0.0.1", "::1"), empty when unknown
    /// The paths the listener that took the request serves (ServerLimits::routes); null: every
    /// endpoint. A path outside them is answered 404, as if it did not exist.
    const std::vector<std::string>* routes = nullptr;
    /// When the request was read whole: the session's one clock read for it. The answer time
    /// is measured from it and a check is decided at it (heavy hitters, the embedded store's
    /// time). Unset (the clock's epoch): RoutedCall reads the clock itself.
    std::chrono::steady_clock::time_point arrived{};
};

}  // namespace ratelimitd::http
