// Parsing redis:// and rediss:// URLs.
#include "ratelimitd/store/redis/endpoint.hpp"

#include "ratelimitd/core/percent.hpp"

#include <charconv>

namespace ratelimitd::store::redis {

namespace {

// The URL itself is left out of messages: it may hold a password.
Problem bad(std::string_view, std::string why) {
    return Problem{errc::invalid_request, "redis: not a valid redis[s]://[:password@]host:port[/db] URL: " + why};
}

}  // namespace

std::string Endpoint::describe() const {
    const bool v6 = host.find(':') != std::string::npos;
    return (tls ? "rediss://" : "redis://") + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + "/" +
           std::to_string(db);
}

std::optional<UserInfo> take_userinfo(std::string_view& rest) {
    UserInfo out;
    const auto at = rest.rfind('@');
    if (at == std::string_view::npos) return out;
    const std::string_view userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
    const auto colon = userinfo.find(':');
    const std::string_view user = colon == std::string_view::npos ? std::string_view{} : userinfo.substr(0, colon);
    const std::string_view pass = colon == std::string_view::npos ? userinfo : userinfo.substr(colon + 1);
    auto decoded = percent_decode(pass);
    if (!decoded) return std::nullopt;
    if (!decoded->empty()) out.password = std::move(*decoded);
    if (!user.empty()) out.username = std::string(user);
    return out;
}

result<Endpoint> parse_redis_url(std::string_view url) {
    constexpr std::string_view plain = "redis://";
    constexpr std::string_view tls = "rediss://";
    Endpoint ep;
    ep.tls = url.substr(0, tls.size()) == tls;
    if (!ep.tls && url.substr(0, plain.size()) != plain) {
        return bad(url, "expected it to start with redis:// or rediss://");
    }
    std::string_view rest = url.substr(ep.tls ? tls.size() : plain.size());

    auto credentials = take_userinfo(rest);
    if (!credentials) return bad(url, "bad percent-escape in the password");
    ep.username = std::move(credentials->username);
    ep.password = std::move(credentials->password);

    std::string_view hostport = rest;
    if (auto slash = rest.find('/'); slash != std::string_view::npos) {
        hostport = rest.substr(0, slash);
        std::string_view db = rest.substr(slash + 1);
        if (!db.empty()) {
            auto [p, ec] = std::from_chars(db.data(), db.data() + db.size(), ep.db);
            if (ec != std::errc{} || p != db.data() + db.size() || ep.db < 0) {
                return bad(url, "the database after '/' must be a number");
            }
        }
    }

    std::string_view port;
    if (!hostport.empty() && hostport.front() == '[') {
        auto close = hostport.find(']');
        if (close == std::string_view::npos) return bad(url, "unclosed '[' in the host");
        ep.host = std::string(hostport.substr(1, close - 1));
        std::string_view after = hostport.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') return bad(url, "expected ':' after ']'");
            port = after.substr(1);
        }
    } else if (auto colon = hostport.rfind(':'); colon != std::string_view::npos) {
        ep.host = std::string(hostport.substr(0, colon));
        port = hostport.substr(colon + 1);
    } else {
        ep.host = std::string(hostport);
    }
    if (ep.host.empty()) return bad(url, "the host is empty");
    if (!port.empty()) {
        auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), ep.port);
        if (ec != std::errc{} || p != port.data() + port.size() || ep.port < 1 || ep.port > 65535) {
            return bad(url, "the port must be a number 1..65535");
        }
    }
    return ep;
}

}  // namespace ratelimitd::store::redis
