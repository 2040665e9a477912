// Event bodies: nlohmann's ordered_json keeps the documented key order.
#include "ratelimitd/notify/event_body.hpp"

#include "ratelimitd/core/hex.hpp"

#include <nlohmann/json.hpp>
#include <openssl/rand.h>

#include <array>
#include <random>
#include <span>

namespace ratelimitd::notify {

namespace {

std::string body_of(const std::string& id, const std::string& policy, const std::string& tenant,
                    const std::string& scope, double threshold, std::int64_t limit, std::int64_t used,
                    std::int64_t window_end_ms) {
    nlohmann::ordered_json j;
    j["id"] = id;
    j["type"] = "threshold";
    j["policy"] = policy;
    j["tenant"] = tenant;
    j["scope"] = scope;
    j["threshold"] = threshold;
    j["limit"] = limit;
    j["used"] = used;
    j["window_end"] = (window_end_ms + 999) / 1000;
    // Tenants and scopes are checked text, but replace rather than throw on any invalid UTF-8.
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// The debt event: the threshold event's shape with the bound and the debt instead of the
// threshold and the units used.
std::string debt_body(const service::Crossing& c, const std::string& id) {
    nlohmann::ordered_json j;
    j["id"] = id;
    j["type"] = "debt";
    j["policy"] = c.rule ? c.rule->policy : std::string();
    j["tenant"] = c.tenant;
    j["scope"] = c.scope;
    j["bound"] = c.rule ? c.rule->debt : 0;
    j["debt"] = c.debt;
    j["limit"] = c.limit;
    j["window_end"] = (c.window_end_ms + 999) / 1000;
    return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace

std::string new_event_id() {
    std::array<unsigned char, 16> bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
        // No entropy from OpenSSL (it does not happen on Linux): the OS source instead.
        std::random_device os;
        for (auto& b : bytes) b = static_cast<unsigned char>(os());
    }
    return "evt_" + to_hex(std::span<const unsigned char>(bytes));
}

std::string event_body(const service::Crossing& c, const std::string& id) {
    if (c.debt > 0) return debt_body(c, id);
    return body_of(id, c.rule ? c.rule->policy : std::string(), c.tenant, c.scope, c.threshold, c.limit, c.used,
                   c.window_end_ms);
}

std::string sample_body(const std::string& id, std::int64_t now_ms) {
    return body_of(id, "sample", "sample", "global", 0.8, 100, 80, now_ms + 60'000);
}

}  // namespace ratelimitd::notify
