// Tenant, scope, cost and policy-name rules: the parts of a check that end up in a Redis key.
#include "ratelimitd/policy/validate.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using namespace ratelimitd::policy;
using ratelimitd::errc;

std::string tenant_error(std::string_view t) {
    const auto r = validate_tenant(t);
    EXPECT_FALSE(r.has_value()) << t;
    if (r.has_value()) return {};
    EXPECT_EQ(r.error().code, errc::invalid_request);
    return r.error().detail;
}

std::string scope_error(std::string_view s) {
    const auto r = validate_scope(s);
    EXPECT_FALSE(r.has_value()) << s;
    if (r.has_value()) return {};
    EXPECT_EQ(r.error().code, errc::invalid_request);
    return r.error().detail;
}

TEST(ValidateTenant, AcceptsIdsAddressesAndEmails) {
    for (const char* ok : {"tenant_8231", "ip:2001:db8::1", "ip:10.0.0.1", "user@example.com",
                           "a-b.c_d", "A", "0"}) {
        EXPECT_TRUE(validate_tenant(ok).has_value()) << ok;
    }
}

TEST(ValidateTenant, AcceptsClientNetworks) {
    for (const char* ok : {"ip:2001:db8:1:2::/64", "ip:10.1.0.0/16", "ip:::/64", "ip:2001:db8::1:2/127"}) {
        EXPECT_TRUE(validate_tenant(ok).has_value()) << ok;
    }
}

TEST(ValidateTenant, ASlashOnlyEndsAnIpNetwork) {
    const std::string hint = " is not allowed; use A-Z, a-z, 0-9 and . _ : @ -";
    EXPECT_EQ(tenant_error("user/64"), "tenant: byte 5 (0x2f '/')" + hint);
    EXPECT_EQ(tenant_error("ip:10.0.0.0/"), "tenant: byte 12 (0x2f '/')" + hint);
    EXPECT_EQ(tenant_error("ip:10.0.0.0/1234"), "tenant: byte 12 (0x2f '/')" + hint);
    EXPECT_EQ(tenant_error("ip:10.0.0.0/x"), "tenant: byte 12 (0x2f '/')" + hint);
    EXPECT_EQ(tenant_error("ip:a/b/16"), "tenant: byte 5 (0x2f '/')" + hint);
    EXPECT_EQ(tenant_error("ip:/16/16"), "tenant: byte 4 (0x2f '/')" + hint);
    EXPECT_EQ(tenant_error("key:ab/16"), "tenant: byte 7 (0x2f '/')" + hint);
}

TEST(ValidateScope, BracesAreAllowedTheKeyEscapesThem) {
    // docs/api.md allows every printable byte but ':' in a scope; policy/key.hpp escapes braces.
    EXPECT_TRUE(validate_scope("{x}").has_value());
}

TEST(ValidateTenant, RejectsEmpty) { EXPECT_EQ(tenant_error(""), "tenant: must not be empty"); }

TEST(ValidateTenant, AllowsAtMost128Bytes) {
    EXPECT_TRUE(validate_tenant(std::string(128, 'a')).has_value());
    EXPECT_EQ(tenant_error(std::string(129, 'a')), "tenant: 129 bytes, at most 128 allowed");
}

TEST(ValidateTenant, NamesTheFirstForbiddenByte) {
    EXPECT_EQ(tenant_error("abc/"),
              "tenant: byte 4 (0x2f '/') is not allowed; use A-Z, a-z, 0-9 and . _ : @ -");
    EXPECT_EQ(tenant_error("a b"),
              "tenant: byte 2 (0x20) is not allowed; use A-Z, a-z, 0-9 and . _ : @ -");
    EXPECT_FALSE(validate_tenant("a+b").has_value());
    EXPECT_FALSE(validate_tenant("a*").has_value());
    EXPECT_FALSE(validate_tenant("caf\xc3\xa9").has_value());
}

TEST(ValidateTenant, PrintsControlBytesAsHex) {
    const std::string detail = tenant_error(std::string("a\n\0", 3));
    EXPECT_EQ(detail, "tenant: byte 2 (0x0a) is not allowed; use A-Z, a-z, 0-9 and . _ : @ -");
    EXPECT_EQ(tenant_error("\x7f"),
              "tenant: byte 1 (0x7f) is not allowed; use A-Z, a-z, 0-9 and . _ : @ -");
    EXPECT_EQ(tenant_error("\xff"),
              "tenant: byte 1 (0xff) is not allowed; use A-Z, a-z, 0-9 and . _ : @ -");
}

TEST(ValidateScope, AcceptsPrintableAsciiWithoutColon) {
    for (const char* ok : {"global", "POST_/v1/exports", "!~#$%&'()*+,-./;<=>?@[\\]^_`{|}", "x"}) {
        EXPECT_TRUE(validate_scope(ok).has_value()) << ok;
    }
    EXPECT_TRUE(validate_scope(std::string(256, 's')).has_value());
}

TEST(ValidateScope, RejectsEmptyAndTooLong) {
    EXPECT_EQ(scope_error(""), "scope: must not be empty");
    EXPECT_EQ(scope_error(std::string(257, 's')), "scope: 257 bytes, at most 256 allowed");
}

TEST(ValidateScope, RejectsColonBecauseItSeparatesKeyParts) {
    EXPECT_EQ(scope_error("ab:c"),
              "scope: byte 3 (0x3a ':') is not allowed; use printable ASCII without spaces or ':'");
}

TEST(ValidateScope, RejectsSpacesAndControlBytes) {
    EXPECT_EQ(scope_error("a b"),
              "scope: byte 2 (0x20) is not allowed; use printable ASCII without spaces or ':'");
    EXPECT_EQ(scope_error("a\tb"),
              "scope: byte 2 (0x09) is not allowed; use printable ASCII without spaces or ':'");
    EXPECT_EQ(scope_error("\x7f"),
              "scope: byte 1 (0x7f) is not allowed; use printable ASCII without spaces or ':'");
    EXPECT_EQ(scope_error("\x80"),
              "scope: byte 1 (0x80) is not allowed; use printable ASCII without spaces or ':'");
}

TEST(ValidateCost, AcceptsOneToOneMillion) {
    EXPECT_TRUE(validate_cost(1).has_value());
    EXPECT_TRUE(validate_cost(1'000'000).has_value());
}

TEST(ValidateCost, RejectsOutOfRangeWithInvalidCost) {
    for (const std::int64_t bad : {std::int64_t{0}, std::int64_t{-1}, std::int64_t{1'000'001},
                                   std::int64_t{INT64_MIN}, std::int64_t{INT64_MAX}}) {
        const auto r = validate_cost(bad);
        ASSERT_FALSE(r.has_value()) << bad;
        EXPECT_EQ(r.error().code, errc::invalid_cost);
    }
    EXPECT_EQ(validate_cost(0).error().detail, "cost: 0 is outside 1..1000000");
    EXPECT_EQ(validate_cost(1'000'001).error().detail, "cost: 1000001 is outside 1..1000000");
}

TEST(IsValidPolicyName, AllowsLettersDigitsDotUnderscoreDash) {
    EXPECT_TRUE(is_valid_policy_name("api-default"));
    EXPECT_TRUE(is_valid_policy_name("v1.login_2"));
    EXPECT_TRUE(is_valid_policy_name(std::string(64, 'p')));
}

TEST(IsValidPolicyName, RejectsEverythingElse) {
    for (const char* bad : {"", "a:b", "a b", "a/b", "a\"b", "caf\xc3\xa9", "a*"}) {
        EXPECT_FALSE(is_valid_policy_name(bad)) << bad;
    }
    EXPECT_FALSE(is_valid_policy_name(std::string(65, 'p')));
}

}  // namespace
