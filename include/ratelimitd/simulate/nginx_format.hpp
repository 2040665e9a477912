// nginx access logs in any log_format: the format, written in nginx's own syntax, compiled
// once into literals and variables, then matched against each line.
#pragma once

#include "ratelimitd/simulate/line_parser.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ratelimitd::simulate {

/// nginx's predefined `combined` format.
inline constexpr std::string_view nginx_combined =
    R"($remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent")";

/// A compiled log_format. The variables it reads: $remote_addr (also $realip_remote_addr,
/// $binary_remote_addr is not text and is refused) for the client; $time_local, $time_iso8601
/// or $msec for the time; $request, or $request_method with $request_uri (or $uri and
/// $args) for the request; each $http_NAME as the request header NAME ("_" read as "-", a
/// logged "-" as absent). Every other variable is matched and ignored.
class NginxFormat final : public LineParser {
public:
    /// Compiles `format`. Throws std::invalid_argument naming what is missing or ambiguous
    /// (no time, client or request variable; two variables with no text between them).
    explicit NginxFormat(std::string_view format);

    const char* parse(std::string_view line, LogRequest& out) override;

private:
    enum class Var : std::uint8_t {
        literal, ignored, client, time_local, time_iso8601, msec, request, method, request_uri, uri, args, header
    };
    struct Token {
        Var kind = Var::literal;
        std::string text;  ///< the literal, or a header's name
    };

    /// The token of variable `name`: one the simulator reads, a request header, or ignored.
    /// Throws std::invalid_argument for $binary_remote_addr (not text).
    static Token token_named(std::string_view name);
    /// Throws std::invalid_argument naming what a request needs and the format lacks: the
    /// client, the time, the request (or its method and path). Notes $request_uri's presence.
    void require_request_fields();
    const char* store(const Token& t, std::string_view value, LogRequest& out);

    std::vector<Token> tokens_;
    std::string uri_scratch_;
    // Lines of one second share their timestamp text: parsed once.
    std::string last_time_text_;
    std::int64_t last_time_ms_ = 0;
    std::string_view path_;
    std::string_view args_;
    bool has_request_uri_ = false;
};

}  // namespace ratelimitd::simulate
