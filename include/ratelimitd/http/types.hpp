// The HTTP message types every handler uses.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <string>

namespace ratelimitd::http {

namespace bhttp = boost::beast::http;

using Request = bhttp::request<bhttp::string_body>;
using Response = bhttp::response<bhttp::string_body>;

/// What the connection knows about a request that the message itself does not carry.
struct RequestContext {
    std::string peer;  ///< the direct peer's address ("127.0.0.1", "::1"), empty when unknown
};

}  // namespace ratelimitd::http
