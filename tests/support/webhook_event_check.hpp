// What every quota webhook event a test receives must be: a signed JSON POST to /hook with the
// documented fields and no secret. Header-only: used by the webhook suites' translation units.
#pragma once

#include "support/webhook_receiver.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace ratelimitd::test {

/// HMAC-SHA256 in hex, straight from OpenSSL: the test does not trust ratelimitd's own.
inline std::string hmac_hex(const std::string& key, const std::string& message) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
         message.size(), digest, &n);
    std::string hex;
    for (unsigned int i = 0; i < n; ++i) {
        char two[3];
        std::snprintf(two, sizeof two, "%02x", digest[i]);
        hex += two;
    }
    return hex;
}

/// Checks what every event must be: a signed JSON POST with the documented fields (or a debt
/// event's, when `type` is "debt") and no secret; returns its body.
inline nlohmann::json verified_event(const ReceivedRequest& r, const std::string& secret, std::int64_t unix_now,
                                     const std::string& type = "threshold") {
    using json = nlohmann::json;
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.target, "/hook");
    EXPECT_EQ(r.headers.at("content-type"), "application/json");
    const std::string sig = r.headers.count("ratelimit-signature") ? r.headers.at("ratelimit-signature") : "";
    const auto comma = sig.find(",v1=");
    EXPECT_EQ(sig.rfind("t=", 0), 0u) << sig;
    EXPECT_NE(comma, std::string::npos) << sig;
    if (comma == std::string::npos) return {};
    const std::string t = sig.substr(2, comma - 2);
    EXPECT_EQ(sig.substr(comma + 4), hmac_hex(secret, t + "." + r.body)) << "a valid signature";
    EXPECT_LE(std::abs(std::stoll(t) - unix_now), 30) << "signed now";
    for (const auto& [name, value] : r.headers) EXPECT_EQ(value.find(secret), std::string::npos) << name;
    EXPECT_EQ(r.body.find(secret), std::string::npos);
    const json body = json::parse(r.body);
    std::vector<std::string> keys;
    for (const auto& [k, v] : body.items()) keys.push_back(k);
    // nlohmann's json sorts keys; the order on the wire is checked by the unit test.
    const std::vector<std::string> every{"crossed_at", "id", "limit", "plan", "policy", "scope", "tenant", "type",
                                         "window", "window_end", "window_start"};
    std::vector<std::string> expected = every;
    for (const char* k : type == "debt" ? std::vector<const char*>{"bound", "debt"}
                                        : std::vector<const char*>{"threshold", "used"}) {
        expected.push_back(k);
    }
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(keys, expected);
    EXPECT_EQ(body["type"], type);
    EXPECT_EQ(body["id"].get<std::string>().rfind("evt_", 0), 0u);
    return body;
}

}  // namespace ratelimitd::test
