// make_key: the Redis key layout, and why two different checks never share a key.
#include "ratelimitd/policy/key.hpp"
#include "ratelimitd/policy/validate.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>

namespace {

using namespace ratelimitd::policy;

TEST(MakeKey, JoinsPrefixPolicyTenantScope) {
    EXPECT_EQ(make_key("rl", "api-default", "tenant_8231", "global"),
              "rl:api-default:tenant_8231:global");
    EXPECT_EQ(make_key("rl", "exports", "t1", "POST_/v1/exports"),
              "rl:exports:t1:POST_/v1/exports");
}

TEST(MakeKey, KeepsColonsInsideTheTenant) {
    EXPECT_EQ(make_key("rl", "login", "ip:2001:db8::1", "global"),
              "rl:login:ip:2001:db8::1:global");
}

// Tenant "a:b" + scope "c" and tenant "a" + scope "b:c" would both spell "rl:p:a:b:c".
// The second pair can never reach make_key: validate_scope forbids ':'.
TEST(MakeKey, AmbiguousSplitCannotPassValidation) {
    EXPECT_EQ(make_key("rl", "p", "a:b", "c"),
              make_key("rl", "p", "a", "b:c"));  // why the rule exists
    EXPECT_TRUE(validate_tenant("a:b").has_value());
    EXPECT_TRUE(validate_scope("c").has_value());
    EXPECT_TRUE(validate_tenant("a").has_value());
    EXPECT_FALSE(validate_scope("b:c").has_value());
}

/// Reads a key back: policy ends at the first ':' after the prefix, scope starts after the last.
std::tuple<std::string, std::string, std::string> split_key(const std::string& key,
                                                            std::string_view prefix) {
    const std::string rest = key.substr(prefix.size() + 1);
    const auto first = rest.find(':');
    const auto last = rest.rfind(':');
    return {rest.substr(0, first), rest.substr(first + 1, last - first - 1), rest.substr(last + 1)};
}

TEST(MakeKey, EveryValidTripleHasItsOwnKey) {
    const char* policies[] = {"p", "api-default", "a.b"};
    const char* tenants[] = {"a", "a:b", "b", "ip:2001:db8::1", "ip:2001:db8:", "x:", ":x", ":"};
    const char* scopes[] = {"c", "b", "global", "POST_/v1/x", "1"};
    std::set<std::string> keys;
    std::size_t triples = 0;
    for (const char* p : policies) {
        for (const char* t : tenants) {
            for (const char* s : scopes) {
                ASSERT_TRUE(is_valid_policy_name(p) && validate_tenant(t).has_value() &&
                            validate_scope(s).has_value());
                const std::string key = make_key("rl", p, t, s);
                EXPECT_EQ(split_key(key, "rl"),
                          std::make_tuple(std::string(p), std::string(t), std::string(s)));
                keys.insert(key);
                ++triples;
            }
        }
    }
    EXPECT_EQ(keys.size(), triples);
}

TEST(MakeKey, ABraceInTheScopeIsNeverAHashTag) {
    EXPECT_EQ(make_key("rl", "p", "t1", "{x}"), "rl:p:t1:%7Bx%7D");
    EXPECT_EQ(make_key("rl", "p", "t1", "a{b"), "rl:p:t1:a%7Bb");
    EXPECT_EQ(make_key("rl", "p", "t1", "100%"), "rl:p:t1:100%25");
    EXPECT_EQ(make_key("rl", "p", "t1", "global"), "rl:p:t1:global");  // the usual scopes unchanged
    // Without the escape every tenant's key of scope "{x}" would hash by "x" alone.
    EXPECT_EQ(make_key("rl", "p", "t1", "{x}").find('{'), std::string::npos);
    EXPECT_EQ(make_window_key("rl", "p", "t1", "{x}", "1m"), "rl:p:{t1:%7Bx%7D}:1m");
}

TEST(MakeKey, EscapedScopesStayDistinct) {
    std::set<std::string> keys;
    const char* scopes[] = {"{", "}", "%7B", "%7D", "%", "%25", "%257B", "{}", "%7B%7D", "a{b}c"};
    for (const char* s : scopes) {
        ASSERT_TRUE(validate_scope(s).has_value()) << s;
        keys.insert(make_key("rl", "p", "t", s));
        keys.insert(make_window_key("rl", "p", "t", s, "1m"));
    }
    EXPECT_EQ(keys.size(), 2 * std::size(scopes));
}

TEST(WindowKey, TagsTenantAndScopeForRedisClusterAndEndsWithTheSpan) {
    EXPECT_EQ(make_window_key("rl", "api-tiered", "tenant_8231", "global", "1m"), "rl:api-tiered:{tenant_8231:global}:1m");
    EXPECT_EQ(make_window_key("rl", "api@pro", "ip:2001:db8::1", "POST_/x", "1d"), "rl:api@pro:{ip:2001:db8::1:POST_/x}:1d");
    // The hash tag is the text between the first '{' and the next '}': the same for every
    // window of one (policy, tenant, scope), whatever the span.
    const auto tag = [](const std::string& key) {
        const auto open = key.find('{');
        return key.substr(open + 1, key.find('}', open + 1) - open - 1);
    };
    EXPECT_EQ(tag(make_window_key("rl", "p", "t", "s", "1m")), tag(make_window_key("rl", "p", "t", "s", "1d")));
    // A scope holding '}' still gives every window of that check one tag.
    EXPECT_EQ(tag(make_window_key("rl", "p", "t", "a}b", "1m")), tag(make_window_key("rl", "p", "t", "a}b", "1h")));
}

}  // namespace
