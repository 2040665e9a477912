// The value rules of the config file's tree, shared by the registry and the process settings.
#include "ratelimitd/config/tree_values.hpp"

#include "ratelimitd/core/duration.hpp"
#include "ratelimitd/core/quote.hpp"

#include <nlohmann/json.hpp>

namespace ratelimitd::config {
namespace {

constexpr const char* duration_example = "a duration such as \"500ms\", \"60s\" or \"1m\"";


}  // namespace

std::string describe(const ConfigTree& v) {
    switch (v.type()) {
    case ConfigTree::value_t::string: return quote(v.get_ref<const std::string&>());
    case ConfigTree::value_t::number_integer: return std::to_string(v.get<std::int64_t>());
    case ConfigTree::value_t::number_unsigned: return std::to_string(v.get<std::uint64_t>());
    case ConfigTree::value_t::number_float: return v.dump();
    case ConfigTree::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case ConfigTree::value_t::null: return "null";
    case ConfigTree::value_t::object: return "a map";
    case ConfigTree::value_t::array: return "a list";
    default: return "an unsupported value";
    }
}

std::string type_name(const ConfigTree& v) {
    switch (v.type()) {
    case ConfigTree::value_t::string: return "a string";
    case ConfigTree::value_t::number_integer:
    case ConfigTree::value_t::number_unsigned: return "an integer";
    case ConfigTree::value_t::number_float: return "a number";
    case ConfigTree::value_t::boolean: return "a boolean";
    case ConfigTree::value_t::null: return "null";
    case ConfigTree::value_t::object: return "a map";
    case ConfigTree::value_t::array: return "a list";
    default: return "an unsupported value";
    }
}

std::string join_words(std::span<const std::string_view> words, std::string_view sep) {
    std::string out;
    for (const auto w : words) {
        if (!out.empty()) out += sep;
        out += w;
    }
    return out;
}

result<std::int64_t> integer_in(const ConfigTree& v, std::int64_t lo, std::int64_t hi) {
    const bool in_range = (v.is_number_integer() && !v.is_number_unsigned() &&
                           v.get<std::int64_t>() >= lo && v.get<std::int64_t>() <= hi) ||
                          (v.is_number_unsigned() && hi >= 0 &&
                           v.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi) &&
                           static_cast<std::int64_t>(v.get<std::uint64_t>()) >= lo);
    if (!in_range) {
        return invalid_request("expected an integer " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " +
                   describe(v));
    }
    return v.is_number_unsigned() ? static_cast<std::int64_t>(v.get<std::uint64_t>()) : v.get<std::int64_t>();
}

result<bool> boolean_of(const ConfigTree& v) {
    if (!v.is_boolean()) return invalid_request("expected true or false, got " + describe(v));
    return v.get<bool>();
}

result<std::string> one_of(const ConfigTree& v, std::span<const std::string_view> options) {
    if (v.is_string()) {
        for (const auto o : options) {
            if (o == v.get_ref<const std::string&>()) return std::string(o);
        }
    }
    return invalid_request("expected one of " + join_words(options, ", ") + ", got " + describe(v));
}

result<std::chrono::milliseconds> duration_of(const ConfigTree& v) {
    // `window: 60` arrives as an integer; parse its text so the message shows the missing unit.
    std::string text;
    if (v.is_string()) {
        text = v.get<std::string>();
    } else if (v.is_number_integer()) {
        text = describe(v);
    } else {
        return invalid_request(std::string("expected ") + duration_example + ", got " + describe(v));
    }
    auto d = parse_duration(text);
    if (!d) return invalid_request(d.error().detail);
    return *d;
}

}  // namespace ratelimitd::config
