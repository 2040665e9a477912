// An HTTP answer's rate-limit headers: the transport-neutral values, in the answer's order.
#include "ratelimitd/http/rate_limit_headers.hpp"

#include "ratelimitd/headers/rate_limit_fields.hpp"

#include <array>

namespace ratelimitd::http {

namespace {

using headers::RateLimitHeader;

// Every line an HTTP answer carries, in the order it has always set them.
constexpr std::array http_lines{
    RateLimitHeader::x_limit,    RateLimitHeader::x_remaining, RateLimitHeader::x_reset,
    RateLimitHeader::policy,     RateLimitHeader::rate_limit,  RateLimitHeader::lease,
    RateLimitHeader::retry_after, RateLimitHeader::no_store,
};

// Both field types (the answer's pooled fields, and Beast's default) take the same lines.
template <class FieldsT>
class FieldsSink final : public headers::HeaderSink {
public:
    explicit FieldsSink(FieldsT& fields) : fields_(fields) {}
    void set(std::string_view name, std::string_view value) override { fields_.set(name, value); }

private:
    FieldsT& fields_;
};

// A rendered answer's lines: every rendered answer carries Cache-Control: no-store from the
// start (JSON answers are never cached), so a denial's copy of it is not added twice.
constexpr std::array rendered_lines{
    RateLimitHeader::x_limit,    RateLimitHeader::x_remaining, RateLimitHeader::x_reset,
    RateLimitHeader::policy,     RateLimitHeader::rate_limit,  RateLimitHeader::lease,
    RateLimitHeader::retry_after,
};

template <class FieldsT>
void set_headers(const check::Verdict& v, FieldsT& out) {
    FieldsSink<FieldsT> sink(out);
    headers::set_rate_limit_headers(v, http_lines, sink);
}

}  // namespace

void set_rate_limit_headers(const check::Verdict& v, bhttp::fields& out) { set_headers(v, out); }

void set_rate_limit_headers(const check::Verdict& v, Fields& out) { set_headers(v, out); }

void set_rate_limit_headers(const check::Verdict& v, RenderedAnswer& out) {
    out.add_field_lines(headers::http_field_lines(v, rendered_lines));
}

void set_rate_limit_headers(const check::Verdict& v, const headers::ShownCounts& shown, RenderedAnswer& out) {
    out.add_field_lines(headers::http_field_lines(v, rendered_lines, shown));
}

}  // namespace ratelimitd::http
