// The HTTP message types every handler uses.
#pragma once

#include "ratelimitd/http/field_allocator.hpp"

#include <boost/beast/http/fields.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <string>

namespace ratelimitd::http {

namespace bhttp = boost::beast::http;

/// Header fields of every request and answer: their blocks are recycled per thread (see
/// FieldAllocator), so a check does not allocate one per header line.
using Fields = bhttp::basic_fields<FieldAllocator<char>>;

using Request = bhttp::request<bhttp::string_body, Fields>;
using Response = bhttp::response<bhttp::string_body, Fields>;

/// What the connection knows about a request that the message itself does not carry.
struct RequestContext {
    std::string peer;  ///< the direct peer's address ("127.0.0.1", "::1"), empty when unknown
};

}  // namespace ratelimitd::http
