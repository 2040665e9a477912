// /v1/check on the wire, inbound: JSON bodies and query strings in (answers: check_answer.cpp).
#include "ratelimitd/http/check_codec.hpp"

#include "ratelimitd/core/percent.hpp"
#include "ratelimitd/core/query_string.hpp"
#include "ratelimitd/http/flat_json.hpp"

#include <boost/beast/http/field.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

namespace ratelimitd::http {

namespace {

using check::CheckRequest;

// ---------------------------------------------------------------------------------------
// The fields of a check, shared by the JSON and the query-string parser so that both
// accept the same names and fail with the same sentences.

enum class Field : unsigned { policy, tenant, scope, cost, method, path, plan, lease };

constexpr std::array<std::pair<std::string_view, Field>, 8> field_names{{
    {"policy", Field::policy},
    {"tenant", Field::tenant},
    {"scope", Field::scope},
    {"cost", Field::cost},
    {"method", Field::method},
    {"path", Field::path},
    {"plan", Field::plan},
    {"lease", Field::lease},  // BodyKind::release only
}};

// name_of() indexes the table by enumerator, so the table must stay in enum order.
static_assert([] {
    for (std::size_t i = 0; i < field_names.size(); ++i) {
        if (field_names[i].second != static_cast<Field>(i)) return false;
    }
    return true;
}());

// The fields of `kind`'s body: a check's, and the lease of a release. Others are ignored.
std::optional<Field> field_named(std::string_view name, BodyKind kind) noexcept {
    for (const auto& [n, f] : field_names) {
        if (n == name) return f != Field::lease || kind == BodyKind::release ? std::optional(f) : std::nullopt;
    }
    return std::nullopt;
}

std::string_view name_of(Field f) noexcept { return field_names[static_cast<unsigned>(f)].first; }

Problem invalid(Field f, std::string_view what) {
    std::string detail{name_of(f)};
    detail += ": ";
    detail += what;
    return Problem{errc::invalid_request, std::move(detail)};
}

// Caller text quoted into a detail sentence: short, and printable ASCII only, so that an
// error body or a log line never carries control bytes or half a UTF-8 sequence.
std::string excerpt(std::string_view s) {
    constexpr std::size_t max_shown = 32;
    std::string out = "\"";
    for (const char c : s.substr(0, max_shown)) {
        const auto u = static_cast<unsigned char>(c);
        out += (u < 0x20 || u > 0x7e) ? '?' : c;
    }
    if (s.size() > max_shown) out += "...";
    out += '"';
    return out;
}

Problem cost_out_of_range(std::string_view shown) {
    std::string detail = "cost: must be 1..";
    detail += std::to_string(check::max_cost);
    detail += ", got ";
    detail += shown;
    return Problem{errc::invalid_cost, std::move(detail)};
}

// A report's cost: signed, so a refund can be told from a charge, and never 0 (which would
// charge nothing and answer the tenant's state, what the admin-only peek guards).
constexpr std::string_view report_cost_range = "an integer -1000000..-1 (a refund) or 1..1000000";

Problem report_cost_problem(std::string_view what) {
    std::string detail = "cost: ";
    detail += what;
    return Problem{errc::invalid_cost, std::move(detail)};
}

// Collects fields in arrival order. A repeated field is an error rather than "last one
// wins": a proxy and the sidecar reading different tenants from one request would let a
// caller pick whose quota it spends, and "cost":1,"cost":-5 would be a refund to a reader
// that keeps the last.
class FieldSet {
public:
    explicit FieldSet(BodyKind kind = BodyKind::check) noexcept : kind_(kind) {}
    // A check's fields written straight into the caller's fresh request `into`: finish_check
    // then moves nothing (the request's move into the caller's and the reader's copy's
    // destruction: about 110 instructions of a check).
    FieldSet(BodyKind kind, CheckRequest& into) noexcept : kind_(kind), req_(&into) {}
    // req_ may point at own_.
    FieldSet(const FieldSet&) = delete;
    FieldSet& operator=(const FieldSet&) = delete;

    result<void> mark_seen(Field f) {
        const unsigned bit = 1u << static_cast<unsigned>(f);
        if (seen_ & bit) return invalid(f, "given more than once");
        seen_ |= bit;
        return {};
    }

    void set_string(Field f, std::string value) {
        switch (f) {
        case Field::policy: req_->policy = std::move(value); break;
        case Field::tenant: req_->tenant = std::move(value); break;
        case Field::scope: req_->scope = std::move(value); break;
        case Field::method: req_->method = std::move(value); break;
        case Field::path: req_->path = std::move(value); break;
        case Field::plan: req_->plan = std::move(value); break;
        case Field::lease: lease_ = std::move(value); break;
        case Field::cost: break;  // never a string; the parsers route it to set_cost
        }
    }

    // set_string of a view: each string made where it stays (the flat reader's values), not
    // made apart and moved in. The request is a fresh one, so its tenant is appended to (an
    // assign goes through std::string::_M_replace, about 40 instructions more).
    void set_text(Field f, std::string_view value) {
        switch (f) {
        case Field::policy: req_->policy.emplace(value); break;
        case Field::tenant: req_->tenant.append(value); break;  // empty: seen once (mark_seen)
        case Field::scope: req_->scope.emplace(value); break;
        case Field::method: req_->method.emplace(value); break;
        case Field::path: req_->path.emplace(value); break;
        case Field::plan: req_->plan.emplace(value); break;
        case Field::lease: lease_.assign(value); break;
        case Field::cost: break;  // never a string; the parsers route it to set_cost
        }
    }

    template <class Int>
    result<void> set_cost(Int n) {
        if (kind_ == BodyKind::report) return set_signed_cost(n);
        if (n < 1 || static_cast<std::uint64_t>(n) > check::max_cost) {
            return cost_out_of_range(std::to_string(n));
        }
        req_->cost = static_cast<std::uint32_t>(n);
        return {};
    }

    // The cost was not an integer (`got` names what it was).
    [[nodiscard]] Problem cost_not_an_integer(std::string_view got) const {
        if (kind_ == BodyKind::report) {
            return report_cost_problem("expected " + std::string(report_cost_range) + ", got " + std::string(got));
        }
        return invalid(Field::cost, "expected an integer, got " + std::string(got));
    }

    // The tenant is the only field without a default; an empty one given on purpose is
    // left for policy::validate_tenant to reject with its own sentence. A report's cost and
    // a release's lease are required.
    result<BodyFields> finish() && {
        if (!seen(Field::tenant)) return invalid(Field::tenant, "required");
        if (kind_ == BodyKind::report && !seen(Field::cost)) {
            return report_cost_problem("required, " + std::string(report_cost_range));
        }
        if (kind_ == BodyKind::release && !seen(Field::lease)) return invalid(Field::lease, "required");
        BodyFields out;
        out.cost = kind_ == BodyKind::report ? signed_cost_ : static_cast<std::int64_t>(req_->cost);
        out.check = std::move(*req_);
        out.lease = std::move(lease_);
        return out;
    }

    // finish() of a check's fields, the request moved once into the caller's `out` (not at
    // all when they were written there).
    result<void> finish_check(CheckRequest& out) && {
        if (!seen(Field::tenant)) return invalid(Field::tenant, "required");
        if (req_ != &out) out = std::move(*req_);
        return {};
    }

private:
    [[nodiscard]] bool seen(Field f) const noexcept { return (seen_ & (1u << static_cast<unsigned>(f))) != 0; }

    template <class Int>
    result<void> set_signed_cost(Int n) {
        const auto most = static_cast<std::int64_t>(check::max_cost);
        bool in_range = false;
        if constexpr (std::is_signed_v<Int>) {
            in_range = n >= -most && n <= most;
        } else {
            in_range = n <= check::max_cost;
        }
        if (!in_range) {
            return report_cost_problem("expected " + std::string(report_cost_range) + ", got " + std::to_string(n));
        }
        if (n == 0) return report_cost_problem("0 charges nothing; expected " + std::string(report_cost_range));
        signed_cost_ = static_cast<std::int64_t>(n);
        return {};
    }

    BodyKind kind_;
    unsigned seen_ = 0;
    CheckRequest own_;
    CheckRequest* req_ = &own_;
    std::int64_t signed_cost_ = 0;
    std::string lease_;
};

// ---------------------------------------------------------------------------------------
// JSON bodies. A SAX handler rather than a DOM: it sees duplicate keys (a DOM keeps only
// the last), it knows an integer from a float by the token, and nlohmann's parser calls it
// instead of throwing.

using sax_json = nlohmann::json;  // the SAX parser's value types

class CheckSax {
public:
    explicit CheckSax(BodyKind kind) noexcept : kind_(kind), fields_(kind) {}

    bool null() { return value("null"); }
    bool boolean(bool) { return value("boolean"); }
    bool binary(sax_json::binary_t&) { return value("binary"); }  // not produced by JSON text

    bool number_integer(sax_json::number_integer_t n) { return cost_value(n, "number"); }
    bool number_unsigned(sax_json::number_unsigned_t n) { return cost_value(n, "number"); }

    bool number_float(sax_json::number_float_t, const sax_json::string_t& text) {
        // 1e3 is a float token even though its value is whole: cost is an integer field.
        if (depth_ == 1 && current_ == Field::cost) {
            fail(fields_.cost_not_an_integer(excerpt(text)));
            return true;
        }
        return value("number");
    }

    bool string(sax_json::string_t& s) {
        if (depth_ == 1 && current_ && *current_ != Field::cost) {
            fields_.set_string(*current_, std::move(s));
            return true;
        }
        return value("string");
    }

    bool start_object(std::size_t) {
        if (depth_ > 0) value("object");
        ++depth_;
        return true;
    }
    bool end_object() {
        --depth_;
        return true;
    }
    bool start_array(std::size_t) {
        value("array");
        ++depth_;
        return true;
    }
    bool end_array() {
        --depth_;
        return true;
    }

    bool key(sax_json::string_t& k) {
        if (depth_ != 1) return true;  // keys of nested objects are nobody's business
        current_ = field_named(k, kind_);
        if (current_) {
            if (auto seen = fields_.mark_seen(*current_); !seen) fail(seen.error());
        }
        return true;
    }

    bool parse_error(std::size_t position, const std::string&, const sax_json::exception& ex) {
        syntax_ = Problem{errc::invalid_request,
                          "body: not valid JSON (" + where(position, ex) + ")"};
        return false;
    }

    // A syntax error outranks a field error: the field may only look wrong because the
    // text around it is broken.
    result<BodyFields> finish() && {
        if (syntax_) return std::move(*syntax_);
        if (problem_) return std::move(*problem_);
        return std::move(fields_).finish();
    }

private:
    // A non-string, non-object value (named by its JSON type) arrived. Parsing continues
    // after a field error so that a later syntax error can still take precedence.
    bool value(std::string_view type) {
        if (depth_ == 0) {
            fail(Problem{errc::invalid_request,
                         "body: expected a JSON object, got " + std::string(type)});
        } else if (depth_ == 1 && current_) {
            fail(*current_ == Field::cost ? fields_.cost_not_an_integer(type)
                                          : invalid(*current_, "expected a string, got " + std::string(type)));
        }
        return true;
    }

    template <class Int>
    bool cost_value(Int n, std::string_view type) {
        if (depth_ != 1 || current_ != Field::cost) return value(type);
        if (auto ok = fields_.set_cost(n); !ok) fail(ok.error());
        return true;
    }

    void fail(Problem p) {
        if (!problem_) problem_ = std::move(p);
    }

    // nlohmann says "[json.exception.parse_error.101] parse error at line 1, column 7:
    // syntax error ...; last read: '...'". Keep from "line" on, bounded and printable.
    static std::string where(std::size_t position, const sax_json::exception& ex) {
        constexpr std::string_view marker = "parse error at ";
        constexpr std::size_t max_where = 160;
        std::string_view what = ex.what();
        if (const auto at = what.find(marker); at != std::string_view::npos) {
            what.remove_prefix(at + marker.size());
        } else {
            return "at byte " + std::to_string(position);
        }
        std::string out;
        for (const char c : what.substr(0, max_where)) {
            const auto u = static_cast<unsigned char>(c);
            out += (u < 0x20 || u > 0x7e) ? '?' : c;
        }
        if (what.size() > max_where) out += "...";
        return out;
    }

    BodyKind kind_;
    FieldSet fields_;
    int depth_ = 0;
    std::optional<Field> current_;  // the known field whose value comes next (depth 1 only)
    std::optional<Problem> problem_;
    std::optional<Problem> syntax_;
};

// ---------------------------------------------------------------------------------------
// Query strings (application/x-www-form-urlencoded).

// '+' is a space and %XY a byte; a '%' without two hex digits makes the whole item invalid
// rather than being passed through, so no two spellings can mean different things.
constexpr PercentOptions form_encoding{.plus_is_space = true, .malformed = MalformedPercent::reject};

// cost from text: an optional '-' and at least one digit, so that "-1" is out of range
// (invalid_cost, as in JSON) while "1.5", "3x" or "" are not integers at all.
result<void> set_cost_text(FieldSet& fields, std::string_view text) {
    const std::string_view digits = text.starts_with('-') ? text.substr(1) : text;
    const bool all_digits =
        !digits.empty() &&
        std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!all_digits) {
        if (text.empty()) return invalid(Field::cost, "expected an integer, got an empty value");
        return invalid(Field::cost, "expected an integer, got " + excerpt(text));
    }
    if (digits.size() != text.size()) return cost_out_of_range(excerpt(text));
    // Saturate instead of overflowing: anything past max_cost is out of range anyway.
    std::uint64_t n = 0;
    for (const char c : digits) {
        n = std::min<std::uint64_t>(n * 10 + static_cast<std::uint64_t>(c - '0'),
                                    check::max_cost + 1ull);
    }
    if (n > check::max_cost) return cost_out_of_range(excerpt(text));
    return fields.set_cost(n);
}

// The body almost every check sends, read into `fields` without the general parser and its
// allocations. false for whatever read_flat_object does not take and for any field error:
// those go the general way, so every answer and error sentence stays the general parser's.
bool read_flat_body(std::string_view body, FieldSet& fields, BodyKind kind) {
    std::array<FlatMember, 16> members;
    // A report's refund is a negative cost: read here too, so a refund's body is read once.
    const auto n = read_flat_object(body, members, kind == BodyKind::report ? FlatSigns::allowed : FlatSigns::refused);
    if (!n) return false;
    for (const FlatMember& m : std::span(members).first(*n)) {
        const auto f = field_named(m.key, kind);
        if (!f) continue;  // unknown fields are ignored, as the general parser does
        if (!fields.mark_seen(*f) || (*f == Field::cost) == m.is_string) return false;
        if (*f != Field::cost) {
            fields.set_text(*f, m.value);
        } else if (!(m.negative ? fields.set_cost(-static_cast<std::int64_t>(m.number)) : fields.set_cost(m.number))) {
            return false;
        }
    }
    return true;
}

}  // namespace

// The flat body's fields are finished where they are returned (no optional and no second
// result to move them through: a check's request was moved six times on its way to the door).
result<BodyFields> parse_body_json(std::string_view body, BodyKind kind) {
    {
        FieldSet fields(kind);
        if (read_flat_body(body, fields, kind)) {
            auto flat = std::move(fields).finish();
            if (flat) return flat;
        }
    }
    CheckSax sax(kind);
    sax_json::sax_parse(body.data(), body.data() + body.size(), &sax);
    return std::move(sax).finish();
}

result<CheckRequest> parse_check_json(std::string_view body) {
    CheckRequest out;
    if (auto ok = parse_check_json_into(body, out); !ok) return ok.error();
    return out;
}

result<void> parse_check_json_into(std::string_view body, CheckRequest& out) {
    {
        FieldSet fields(BodyKind::check, out);
        if (read_flat_body(body, fields, BodyKind::check) && std::move(fields).finish_check(out)) return {};
    }
    // As parse_body_json: anything the flat reader did not take, every error among it (which
    // replaces whatever the flat reader wrote into `out`).
    auto general = parse_check_json_general(body);
    if (!general) return general.error();
    out = std::move(*general);
    return {};
}

result<CheckRequest> parse_check_json_general(std::string_view body) {
    CheckSax sax(BodyKind::check);
    sax_json::sax_parse(body.data(), body.data() + body.size(), &sax);
    auto fields = std::move(sax).finish();
    if (!fields) return fields.error();
    return std::move(fields->check);
}

result<CheckRequest> parse_check_query(std::string_view query) {
    FieldSet fields;
    while (const auto item = next_query_item(query)) {
        const auto name = percent_decode(item->name, form_encoding);
        if (!name) {
            return Problem{errc::invalid_request,
                           "query: malformed percent-encoding in parameter name " + excerpt(item->name)};
        }
        const auto field = field_named(*name, BodyKind::check);
        if (!field) continue;  // unknown parameters are ignored, as in JSON

        // "tenant" without '=' counts as given and empty, like "tenant=".
        auto value = percent_decode(item->value, form_encoding);
        if (!value) {
            return invalid(*field, "malformed percent-encoding (expected %XY with hex digits)");
        }
        if (auto seen = fields.mark_seen(*field); !seen) return seen.error();
        if (*field == Field::cost) {
            if (auto ok = set_cost_text(fields, *value); !ok) return ok.error();
        } else {
            fields.set_string(*field, std::move(*value));
        }
    }
    auto fields_read = std::move(fields).finish();
    if (!fields_read) return fields_read.error();
    return std::move(fields_read->check);
}

}  // namespace ratelimitd::http
