// JSON-lines access logs: one object per line, its members mapped to the request by name.
#pragma once

#include "ratelimitd/simulate/line_parser.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace ratelimitd::simulate {

/// Which members of a JSON line hold what (the --*-field flags).
struct JsonFields {
    std::string time = "time";        ///< RFC 3339, nginx's $time_local, or epoch seconds (string or number)
    std::string method = "method";
    std::string uri = "uri";          ///< path and query
    std::string client = "client";    ///< the client address
    std::optional<std::string> tenant;  ///< the member holding the tenant header's value
    std::string tenant_header;        ///< the header that value stands for (an identity source's)
};

/// Reads JSON lines by `JsonFields`. A member may be nested: "request.method" reads
/// {"request": {"method": ...}}.
class JsonFormat final : public LineParser {
public:
    explicit JsonFormat(JsonFields fields);

    const char* parse(std::string_view line, LogRequest& out) override;

private:
    const nlohmann::json* member(const std::string& path) const;

    JsonFields fields_;
    nlohmann::json current_;  ///< the last line: the request borrows its strings
};

}  // namespace ratelimitd::simulate
