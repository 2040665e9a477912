// The HTTP message types every handler uses.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace ratelimitd::http {

namespace bhttp = boost::beast::http;

using Request = bhttp::request<bhttp::string_body>;
using Response = bhttp::response<bhttp::string_body>;

}  // namespace ratelimitd::http
