// Event bodies: nlohmann's ordered_json keeps the documented key order.
#include "ratelimitd/notify/event_body.hpp"

#include "ratelimitd/core/hex.hpp"

#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <random>
#include <span>

namespace ratelimitd::notify {

namespace {

using Json = nlohmann::ordered_json;

std::int64_t seconds_up(std::int64_t ms) { return (ms + 999) / 1000; }

/// The fields every event has, in order, up to what its type adds: who, which window, when.
Json common_fields(const std::string& id, const char* type, const service::Crossing& c) {
    Json j;
    j["id"] = id;
    j["type"] = type;
    j["policy"] = c.rule ? c.rule->policy : std::string();
    j["plan"] = c.plan.empty() ? Json(nullptr) : Json(c.plan);
    j["tenant"] = c.tenant;
    j["scope"] = c.scope;
    j["window"] = Json{{"name", c.window_name}, {"seconds", c.window_s}};
    // The start rounded down and the end up, so that window_start <= crossed_at < window_end.
    j["window_start"] = std::max<std::int64_t>(0, (c.window_end_ms - c.window_s * 1000) / 1000);
    j["window_end"] = seconds_up(c.window_end_ms);
    j["crossed_at"] = c.crossed_at_ms / 1000;
    return j;
}

std::string dump(const Json& j) {
    // Tenants and scopes are checked text, but replace rather than throw on any invalid UTF-8.
    return j.dump(-1, ' ', false, Json::error_handler_t::replace);
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

std::string event_id(const service::Crossing& c) {
    // What the event is about, each part ended by a NUL (none holds one), so that no two
    // different events share the text hashed.
    std::string what;
    for (const std::string& part :
         {c.rule ? c.rule->policy : std::string(), c.window_name, c.tenant, c.scope, std::to_string(c.window_end_ms),
          c.debt > 0 ? "debt:" + std::to_string(c.rule ? c.rule->debt : 0) : std::to_string(c.threshold)}) {
        what += part;
        what += '\0';
    }
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int n = 0;
    if (EVP_Digest(what.data(), what.size(), digest.data(), &n, EVP_sha256(), nullptr) != 1 || n < 16) {
        return new_event_id();  // no SHA-256 (it does not happen): a unique id still
    }
    return "evt_" + to_hex(std::span<const unsigned char>(digest.data(), 16));
}

std::string event_body(const service::Crossing& c, const std::string& id) {
    if (c.debt > 0) {
        Json j = common_fields(id, "debt", c);
        j["bound"] = c.rule ? c.rule->debt : 0;
        j["debt"] = c.debt;
        j["limit"] = c.limit;
        return dump(j);
    }
    Json j = common_fields(id, "threshold", c);
    j["threshold"] = c.threshold;
    j["limit"] = c.limit;
    j["used"] = c.used;
    return dump(j);
}

std::string sample_body(const std::string& id, std::int64_t now_ms) {
    auto rule = std::make_shared<policy::NotifyRule>();
    rule->policy = "sample";
    service::Crossing c{rule, 0.8, "sample", "global", 100, 80, now_ms + 60'000};
    c.plan = "sample";
    c.window_name = "sample";
    c.window_s = 60;
    c.crossed_at_ms = now_ms;
    return event_body(c, id);
}

}  // namespace ratelimitd::notify
