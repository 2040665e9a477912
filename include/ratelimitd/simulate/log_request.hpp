// One access-log line as the request it stands for: what /v1/auth would have been asked.
#pragma once

#include <cstdint>
#include <string_view>

#include <boost/container/small_vector.hpp>

namespace ratelimitd::simulate {

/// A request header the log kept (nginx's $http_x_tenant_id, a JSON tenant field).
struct LoggedHeader {
    std::string_view name;   ///< as the identity sources name it ("X-Tenant-Id"); compared without case
    std::string_view value;
};

/// What a log line holds about the request it records. Borrows the line (and the parser's
/// names): valid until the next line is read.
struct LogRequest {
    std::int64_t time_ms = 0;   ///< when it was logged, Unix epoch milliseconds
    std::string_view method;    ///< the original method
    std::string_view uri;       ///< the original path and query
    std::string_view client;    ///< the client address: stands for /v1/auth's peer
    boost::container::small_vector<LoggedHeader, 2> headers;
};

}  // namespace ratelimitd::simulate
