// NginxFormat: a log_format compiled into literals and variables; a line is matched by
// finding each literal after the variable before it (nginx escapes '"' in variables as \x22,
// so a quoted field cannot end early).
#include "ratelimitd/simulate/nginx_format.hpp"

#include "ratelimitd/simulate/log_time.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace ratelimitd::simulate {
namespace {

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// "x_tenant_id" -> "x-tenant-id" (nginx's $http_ names: lower case, '-' written '_').
std::string header_name(std::string_view var) {
    std::string out(var);
    for (char& c : out) c = c == '_' ? '-' : c;
    return out;
}

/// Whether [at, end) starts with `lit`. Literals are a few bytes: compared in place.
bool starts_with(const char* at, const char* end, std::string_view lit) noexcept {
    if (static_cast<std::size_t>(end - at) < lit.size()) return false;
    for (std::size_t k = 0; k < lit.size(); ++k) {
        if (at[k] != lit[k]) return false;
    }
    return true;
}

/// The first `lit` (not empty) in [at, end), or nullptr: what string_view::find answers, with
/// memchr for its first byte and the few others compared in place.
const char* find_literal(const char* at, const char* end, std::string_view lit) noexcept {
    while (static_cast<std::size_t>(end - at) >= lit.size()) {
        const auto* hit = static_cast<const char*>(
            std::memchr(at, lit.front(), static_cast<std::size_t>(end - at) - lit.size() + 1));
        if (hit == nullptr) return nullptr;
        if (starts_with(hit + 1, end, lit.substr(1))) return hit;
        at = hit + 1;
    }
    return nullptr;
}

/// The name of the variable whose '$' is at format[i], written `$name` or `${name}`; moves i
/// past it. Throws std::invalid_argument for an unclosed `${` or a '$' without a name.
std::string_view variable_name(std::string_view format, std::size_t& i) {
    std::string_view name;
    if (i + 1 < format.size() && format[i + 1] == '{') {
        const std::size_t close = format.find('}', i + 2);
        if (close == std::string_view::npos) throw std::invalid_argument("--nginx-format: unclosed ${ at " + std::to_string(i));
        name = format.substr(i + 2, close - i - 2);
        i = close + 1;
    } else {
        std::size_t end = i + 1;
        while (end < format.size() && name_char(format[end])) ++end;
        name = format.substr(i + 1, end - i - 1);
        i = end;
    }
    if (name.empty()) throw std::invalid_argument("--nginx-format: a '$' without a variable name");
    return name;
}

}  // namespace

NginxFormat::NginxFormat(std::string_view format) {
    for (std::size_t i = 0; i < format.size();) {
        if (format[i] != '$') {
            const std::size_t end = std::min(format.find('$', i), format.size());
            tokens_.push_back({Var::literal, std::string(format.substr(i, end - i))});
            i = end;
            continue;
        }
        const std::string_view name = variable_name(format, i);
        if (!tokens_.empty() && tokens_.back().kind != Var::literal) {
            throw std::invalid_argument("--nginx-format: $" + std::string(name) +
                                        " follows another variable with no text between them: cannot tell where "
                                        "one ends");
        }
        tokens_.push_back(token_named(name));
    }
    require_request_fields();
}

NginxFormat::Token NginxFormat::token_named(std::string_view name) {
    if (name == "binary_remote_addr") {
        throw std::invalid_argument("--nginx-format: $binary_remote_addr is not text; log $remote_addr");
    }
    static constexpr std::pair<std::string_view, Var> read[] = {
        {"remote_addr", Var::client},     {"realip_remote_addr", Var::client}, {"time_local", Var::time_local},
        {"time_iso8601", Var::time_iso8601}, {"msec", Var::msec},              {"request", Var::request},
        {"request_method", Var::method},  {"request_uri", Var::request_uri},  {"uri", Var::uri},
        {"document_uri", Var::uri},       {"args", Var::args},                {"query_string", Var::args},
    };
    for (const auto& [read_name, kind] : read) {
        if (name == read_name) return {kind, {}};
    }
    if (name.substr(0, 5) == "http_" && name.size() > 5) return {Var::header, header_name(name.substr(5))};
    return {Var::ignored, {}};
}

void NginxFormat::require_request_fields() {
    const auto has = [this](std::initializer_list<Var> kinds) {
        return std::any_of(tokens_.begin(), tokens_.end(), [&kinds](const Token& t) {
            return std::find(kinds.begin(), kinds.end(), t.kind) != kinds.end();
        });
    };
    has_request_uri_ = has({Var::request_uri});
    if (!has({Var::client})) throw std::invalid_argument("--nginx-format: no $remote_addr (the client address stands for the peer)");
    if (!has({Var::time_local, Var::time_iso8601, Var::msec})) {
        throw std::invalid_argument("--nginx-format: no $time_local, $time_iso8601 or $msec");
    }
    if (!has({Var::request}) && !(has({Var::method}) && has({Var::request_uri, Var::uri}))) {
        throw std::invalid_argument("--nginx-format: no $request (or $request_method with $request_uri)");
    }
}

const char* NginxFormat::store(const Token& t, std::string_view value, LogRequest& out) {
    switch (t.kind) {
    case Var::client:
        out.client = value;
        return nullptr;
    case Var::time_local:
    case Var::time_iso8601:
    case Var::msec: {
        if (value != last_time_text_ || last_time_text_.empty()) {
            const auto ms = t.kind == Var::time_local     ? parse_time_local(value)
                            : t.kind == Var::time_iso8601 ? parse_iso8601(value)
                                                          : parse_epoch_seconds(value);
            if (!ms) return "bad time";
            last_time_text_.assign(value);
            last_time_ms_ = *ms;
        }
        out.time_ms = last_time_ms_;
        return nullptr;
    }
    case Var::request: {
        // "GET /path?q HTTP/1.1" (HTTP/0.9 lines have no protocol).
        const auto sp = value.find(' ');
        if (sp == std::string_view::npos || sp == 0) return "request is not \"METHOD URI PROTOCOL\"";
        out.method = value.substr(0, sp);
        std::string_view rest = value.substr(sp + 1);
        if (const auto last = rest.rfind(' '); last != std::string_view::npos) rest = rest.substr(0, last);
        if (rest.empty() || rest.front() != '/') return "request URI does not start with '/'";
        out.uri = rest;
        return nullptr;
    }
    case Var::method:
        out.method = value;
        return nullptr;
    case Var::request_uri:
        out.uri = value;
        return nullptr;
    case Var::uri:
        path_ = value;
        return nullptr;
    case Var::args:
        args_ = value == "-" ? std::string_view() : value;
        return nullptr;
    case Var::header:
        if (!value.empty() && value != "-") out.headers.push_back({t.text, value});
        return nullptr;
    case Var::literal:
    case Var::ignored:
        return nullptr;
    }
    return nullptr;
}

const char* NginxFormat::parse(std::string_view line, LogRequest& out) {
    out.method = {};
    out.uri = {};
    out.client = {};
    out.headers.clear();
    path_ = {};
    args_ = {};
    const char* at = line.data();
    const char* const line_end = at + line.size();
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
        const Token& t = tokens_[i];
        if (t.kind == Var::literal) {
            if (!starts_with(at, line_end, t.text)) return "does not match the log format";
            at += t.text.size();
            continue;
        }
        const char* end = line_end;
        if (i + 1 < tokens_.size()) {
            end = find_literal(at, line_end, tokens_[i + 1].text);
            if (end == nullptr) return "does not match the log format";
        }
        if (const char* bad = store(t, std::string_view(at, static_cast<std::size_t>(end - at)), out)) return bad;
        at = end;
    }
    if (!has_request_uri_ && out.uri.empty() && !path_.empty()) {
        uri_scratch_.assign(path_);
        if (!args_.empty()) uri_scratch_.append("?").append(args_);
        out.uri = uri_scratch_;
    }
    if (out.client.empty() || out.client == "-") return "no client address";
    if (out.method.empty() || out.uri.empty()) return "no request method and URI";
    return nullptr;
}

}  // namespace ratelimitd::simulate
