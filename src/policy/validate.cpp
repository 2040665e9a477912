// Character-set and length rules for tenant, scope, cost and policy names.
#include "ratelimitd/policy/validate.hpp"

#include "ratelimitd/check/check_request.hpp"
#include "ratelimitd/core/byte_table.hpp"
#include "ratelimitd/core/hex.hpp"

#include <array>
#include <string>

namespace ratelimitd::policy {
namespace {

constexpr std::size_t max_policy_name_bytes = 64;

constexpr bool is_alnum(unsigned char c) noexcept {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// A tenant's bytes, one look-up each (a tenant is judged on every check).
constexpr auto tenant_bytes = byte_table(
    [](unsigned char c) { return is_alnum(c) || c == '.' || c == '_' || c == ':' || c == '@' || c == '-'; });

bool is_tenant_byte(unsigned char c) noexcept { return tenant_bytes[c]; }

// ':' separates the parts of a Redis key; a scope without it keeps keys unambiguous (key.hpp).
bool is_scope_byte(unsigned char c) noexcept { return c >= 0x21 && c <= 0x7e && c != ':'; }

/// "(0x3a ':')" for a visible byte, "(0x0a)" for anything else: details end up in logs and
/// JSON bodies, where a raw control byte would do harm.
std::string describe_byte(unsigned char c) {
    std::string out = "(0x";
    append_hex(out, c);
    if (c >= 0x21 && c <= 0x7e) {
        out += " '";
        out += static_cast<char>(c);
        out += '\'';
    }
    out += ')';
    return out;
}

template <class IsAllowed>
result<void> validate_text(std::string_view field, std::string_view text, std::size_t max_bytes,
                           IsAllowed is_allowed, std::string_view allowed_hint) {
    // The field's name is made a string only for an error's sentence: never on the way through.
    const auto name = [field] { return std::string(field); };
    if (text.empty()) return Problem{errc::invalid_request, name() + ": must not be empty"};
    if (text.size() > max_bytes) {
        return Problem{errc::invalid_request, name() + ": " + std::to_string(text.size()) +
                                                  " bytes, at most " + std::to_string(max_bytes) +
                                                  " allowed"};
    }
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (!is_allowed(c, i)) {
            // 1-based, as a person counts characters in what they sent.
            return Problem{errc::invalid_request, name() + ": byte " + std::to_string(i + 1) + " " +
                                                      describe_byte(c) + " is not allowed; " +
                                                      std::string(allowed_hint)};
        }
    }
    return {};
}

}  // namespace

result<void> validate_tenant(std::string_view tenant) {
    // A client network ("ip:2001:db8:1:2::/64", policy/identity.hpp) is the one tenant with a
    // '/': one, followed by its prefix length, so /v1/peek and /v1/reset can name it.
    std::size_t slash = std::string_view::npos;
    if (tenant.starts_with("ip:")) {
        const auto at = tenant.find('/');
        const auto digits = at == std::string_view::npos ? std::string_view{} : tenant.substr(at + 1);
        if (!digits.empty() && digits.size() <= 3 &&
            digits.find_first_not_of("0123456789") == std::string_view::npos) {
            slash = at;
        }
    }
    return validate_text(
        "tenant", tenant, max_tenant_bytes,
        [slash](unsigned char c, std::size_t i) { return is_tenant_byte(c) || (c == '/' && i == slash); },
        "use A-Z, a-z, 0-9 and . _ : @ -");
}

result<void> validate_scope(std::string_view scope) {
    return validate_text(
        "scope", scope, max_scope_bytes, [](unsigned char c, std::size_t) { return is_scope_byte(c); },
        "use printable ASCII without spaces or ':'");
}

result<void> validate_cost(std::int64_t cost) {
    if (cost < 1 || cost > static_cast<std::int64_t>(check::max_cost)) {
        return Problem{errc::invalid_cost, "cost: " + std::to_string(cost) + " is outside 1.." +
                                               std::to_string(check::max_cost)};
    }
    return {};
}

bool is_valid_policy_name(std::string_view name) noexcept {
    if (name.empty() || name.size() > max_policy_name_bytes) return false;
    for (const char ch : name) {
        const auto c = static_cast<unsigned char>(ch);
        if (!is_alnum(c) && c != '.' && c != '_' && c != '-') return false;
    }
    return true;
}

}  // namespace ratelimitd::policy
