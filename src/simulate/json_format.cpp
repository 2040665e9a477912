// JsonFormat: members looked up by (dotted) name; times in any of the forms log_time reads.
#include "ratelimitd/simulate/json_format.hpp"

#include "ratelimitd/simulate/log_time.hpp"

#include <cmath>

namespace ratelimitd::simulate {
namespace {

std::string_view text_of(const nlohmann::json* v) {
    if (v == nullptr || !v->is_string()) return {};
    return v->get_ref<const std::string&>();
}

}  // namespace

JsonFormat::JsonFormat(JsonFields fields) : fields_(std::move(fields)) {}

const nlohmann::json* JsonFormat::member(const std::string& path) const {
    const nlohmann::json* at = &current_;
    std::size_t start = 0;
    for (;;) {
        if (!at->is_object()) return nullptr;
        const std::size_t dot = path.find('.', start);
        const auto it = at->find(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (it == at->end()) return nullptr;
        at = &*it;
        if (dot == std::string::npos) return at;
        start = dot + 1;
    }
}

const char* JsonFormat::parse(std::string_view line, LogRequest& out) {
    current_ = nlohmann::json::parse(line, nullptr, false);
    if (current_.is_discarded() || !current_.is_object()) return "not a JSON object";
    out.headers.clear();
    const nlohmann::json* time = member(fields_.time);
    if (time == nullptr) return "no time member";
    if (time->is_number()) {
        // Epoch seconds, or milliseconds when too large to be seconds (after the year 5138).
        const double t = time->get<double>();
        if (!std::isfinite(t) || t < 0) return "bad time";
        out.time_ms = t >= 1e11 ? static_cast<std::int64_t>(t) : static_cast<std::int64_t>(std::llround(t * 1000));
    } else if (time->is_string()) {
        const auto ms = parse_any_time(time->get_ref<const std::string&>());
        if (!ms) return "bad time";
        out.time_ms = *ms;
    } else {
        return "bad time";
    }
    out.method = text_of(member(fields_.method));
    out.uri = text_of(member(fields_.uri));
    out.client = text_of(member(fields_.client));
    if (out.method.empty() || out.uri.empty()) return "no method or URI member";
    if (out.client.empty()) return "no client member";
    if (fields_.tenant) {
        const std::string_view tenant = text_of(member(*fields_.tenant));
        if (!tenant.empty() && tenant != "-") out.headers.push_back({fields_.tenant_header, tenant});
    }
    return nullptr;
}

}  // namespace ratelimitd::simulate
