// A response as it goes on the wire, rendered into one contiguous buffer: written with one
// plain send instead of Beast's serializer, which walks one buffer per header field.
#pragma once

#include "ratelimitd/http/types.hpp"

#include <string>

namespace ratelimitd::http {

/// Appends `res` to `out` exactly as Beast's serializer would put it on the wire: the status
/// line (the message's reason, or the standard one), each field line in order, the empty
/// line, then the body as it is (a HEAD answer's body is empty; Content-Length is whatever
/// the message says). A chunked message is left to Beast's own serializer (none of ours is).
/// Does not clear `out`: the session reuses one buffer, so after the first answer this
/// allocates nothing.
void render_response(const Response& res, std::string& out);

}  // namespace ratelimitd::http
