// decode_request: field by field, with a Problem that says which field broke which limit; a
// long value bounded (rls_value.hpp), never refused.
#include "ratelimitd/grpc/request_codec.hpp"

#include "ratelimitd/policy/rls_value.hpp"

#include <string>

namespace ratelimitd::rls {

namespace {

Problem invalid(std::string detail) { return Problem{errc::invalid_request, std::move(detail)}; }

std::string too_long(const std::string& field, std::size_t max) {
    return field + ": longer than " + std::to_string(max) + " bytes";
}

using Descriptor = envoy::extensions::common::ratelimit::v3::RateLimitDescriptor;

result<policy::RlsDescriptor> decode_descriptor(const Descriptor& d, const std::string& where,
                                                const RequestLimits& limits) {
    if (d.entries_size() == 0) return invalid(where + ".entries: empty (a descriptor needs at least one entry)");
    // No bound on the number of entries or a value's length: a client shapes both (a header
    // a request_headers action maps), and the message's own size bounds them.
    policy::RlsDescriptor out;
    out.entries.reserve(static_cast<std::size_t>(d.entries_size()));
    for (int j = 0; j < d.entries_size(); ++j) {
        const auto& e = d.entries(j);
        const std::string at = where + ".entries[" + std::to_string(j) + "]";
        if (e.key().empty()) return invalid(at + ".key: empty");
        if (e.key().size() > limits.max_key_bytes) return invalid(too_long(at + ".key", limits.max_key_bytes));
        out.entries.push_back(policy::RlsEntry{e.key(), policy::bounded_value(e.value())});
    }
    // A wrapper, so "unset" (the request's hits_addend) differs from an explicit 0.
    if (d.has_hits_addend()) out.hits_addend = d.hits_addend().value();
    if (d.has_limit()) out.limit = policy::RlsLimitOverride{d.limit().requests_per_unit(), d.limit().unit()};
    return out;
}

}  // namespace

result<policy::RlsRequest> decode_request(const envoy::service::ratelimit::v3::RateLimitRequest& msg,
                                          const RequestLimits& limits) {
    if (msg.domain().empty()) return invalid("domain: empty");
    if (msg.domain().size() > limits.max_domain_bytes) return invalid(too_long("domain", limits.max_domain_bytes));
    if (msg.descriptors_size() == 0) return invalid("descriptors: empty (a call needs at least one)");
    if (static_cast<std::size_t>(msg.descriptors_size()) > limits.max_descriptors) {
        return invalid("descriptors: more than " + std::to_string(limits.max_descriptors));
    }
    policy::RlsRequest out;
    out.domain = msg.domain();
    out.hits_addend = msg.hits_addend();
    out.descriptors.reserve(static_cast<std::size_t>(msg.descriptors_size()));
    for (int i = 0; i < msg.descriptors_size(); ++i) {
        auto d = decode_descriptor(msg.descriptors(i), "descriptors[" + std::to_string(i) + "]", limits);
        if (!d) return d.error();
        out.descriptors.push_back(std::move(*d));
    }
    return out;
}

}  // namespace ratelimitd::rls
