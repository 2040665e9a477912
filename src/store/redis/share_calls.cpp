// share_call, grant_of and open_share_client: lua/rlqs_share.lua as the ledgers send it.
#include "share_calls.hpp"

#include "ratelimitd/store/redis/scripts.hpp"

#include <stdexcept>

namespace ratelimitd::store::redis {

namespace {

const Script& share_script() {
    static const Script& script = [] () -> const Script& {
        for (const auto& s : scripts()) {
            if (s.name == "rlqs_share") return s;
        }
        throw std::logic_error("no embedded script lua/rlqs_share.lua");  // a build defect
    }();
    return script;
}

bool error_starts(const Value& reply, std::string_view word) {
    return reply.is_error() && reply.str.rfind(word, 0) == 0;
}

}  // namespace

std::vector<std::string> share_call(const ShareAsk& ask, bool load) {
    const Script& script = share_script();
    return {load ? "EVAL" : "EVALSHA",
            load ? std::string(script.text) : script.sha1,
            "1",
            ask.key,
            ask.envoy,
            std::to_string(ask.allowed),
            std::to_string(ask.denied),
            std::to_string(ask.elapsed.count()),
            std::to_string(ask.limit),
            std::to_string(ask.window.count()),
            std::to_string(ask.ttl.count()),
            std::to_string(ask.interval.count()),
            std::to_string(max_live_envoys)};
}

bool is_noscript(const Value& reply) { return error_starts(reply, "NOSCRIPT"); }

bool is_readonly(const Value& reply) { return error_starts(reply, "READONLY"); }

std::optional<ShareGrant> grant_of(const Value& reply) {
    if (reply.type != Value::Type::array || reply.elements.size() != 3) return std::nullopt;
    for (const auto& e : reply.elements) {
        if (e.type != Value::Type::integer || e.integer < 0) return std::nullopt;
    }
    return ShareGrant{static_cast<std::uint64_t>(reply.elements[0].integer),
                      static_cast<std::uint64_t>(reply.elements[1].integer),
                      static_cast<std::uint64_t>(reply.elements[2].integer)};
}

std::unique_ptr<BlockingClient> open_share_client(const Endpoint& endpoint, std::chrono::milliseconds timeout,
                                                  std::string& why) {
    auto client = std::make_unique<BlockingClient>(endpoint, timeout);
    if (why = client->connect(); !why.empty()) return nullptr;
    if (endpoint.password) {
        auto auth = endpoint.username ? client->command({"AUTH", *endpoint.username, *endpoint.password}, why)
                                      : client->command({"AUTH", *endpoint.password}, why);
        if (!auth || auth->is_error()) {
            if (auth) why = "AUTH refused";
            return nullptr;
        }
    }
    if (endpoint.db != 0) {
        auto select = client->command({"SELECT", std::to_string(endpoint.db)}, why);
        if (!select || select->is_error()) {
            if (select) why = "SELECT refused: " + select->str;
            return nullptr;
        }
    }
    return client;
}

}  // namespace ratelimitd::store::redis
