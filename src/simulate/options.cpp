// `ratelimitd simulate`'s flags: `--flag value` or `--flag=value`, each named in its error.
#include "ratelimitd/simulate/options.hpp"
#include "ratelimitd/core/error.hpp"

#include "ratelimitd/core/duration.hpp"

#include <charconv>
#include <functional>
#include <map>
#include <string_view>

namespace ratelimitd::simulate {
namespace {


using Setter = std::function<std::optional<std::string>(Options&, const std::string&)>;

// Each flag that takes a value, and what it sets; a returned text is the problem.
const std::map<std::string, Setter, std::less<>>& valued_flags() {
    static const std::map<std::string, Setter, std::less<>> flags = {
        {"config", [](Options& o, const std::string& v) { o.config = v; return std::optional<std::string>(); }},
        {"log", [](Options& o, const std::string& v) { o.log = v; return std::optional<std::string>(); }},
        {"format",
         [](Options& o, const std::string& v) -> std::optional<std::string> {
             if (v == "nginx") o.format = LogFormat::nginx;
             else if (v == "json") o.format = LogFormat::json;
             else return "--format: expected nginx or json, got \"" + v + "\"";
             return std::nullopt;
         }},
        {"nginx-format", [](Options& o, const std::string& v) { o.nginx_format = v; return std::optional<std::string>(); }},
        {"baseline", [](Options& o, const std::string& v) { o.baseline = v; return std::optional<std::string>(); }},
        {"html", [](Options& o, const std::string& v) { o.html = v; return std::optional<std::string>(); }},
        {"top",
         [](Options& o, const std::string& v) -> std::optional<std::string> {
             std::size_t n = 0;
             const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
             if (ec != std::errc{} || end != v.data() + v.size() || n > 100'000) {
                 return "--top: expected a number 0..100000, got \"" + v + "\"";
             }
             o.top = n;
             return std::nullopt;
         }},
        {"out-of-order",
         [](Options& o, const std::string& v) -> std::optional<std::string> {
             auto d = parse_duration(v);
             if (!d) return "--out-of-order: " + d.error().detail;
             o.tolerance_ms = d->count();
             return std::nullopt;
         }},
        {"time-field", [](Options& o, const std::string& v) { o.json.time = v; return std::optional<std::string>(); }},
        {"method-field", [](Options& o, const std::string& v) { o.json.method = v; return std::optional<std::string>(); }},
        {"uri-field", [](Options& o, const std::string& v) { o.json.uri = v; return std::optional<std::string>(); }},
        {"client-field", [](Options& o, const std::string& v) { o.json.client = v; return std::optional<std::string>(); }},
        {"tenant-field", [](Options& o, const std::string& v) { o.json.tenant = v; return std::optional<std::string>(); }},
        {"tenant-header",
         [](Options& o, const std::string& v) {
             o.json.tenant_header = v;
             o.tenant_header_given = true;
             return std::optional<std::string>();
         }},
    };
    return flags;
}

}  // namespace

result<Options> parse_options(int argc, const char* const* argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            o.help = true;
            continue;
        }
        if (arg == "--json") {
            o.json_output = true;
            continue;
        }
        if (arg == "--quiet") {
            o.progress = false;
            continue;
        }
        if (arg.substr(0, 2) != "--") return invalid_request("simulate: unexpected argument \"" + std::string(arg) + "\" (see --help)");
        std::string name(arg.substr(2));
        std::optional<std::string> value;
        if (const auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name.resize(eq);
        }
        const auto flag = valued_flags().find(name);
        if (flag == valued_flags().end()) return invalid_request("simulate: unknown flag --" + name + " (see --help)");
        if (!value) {
            if (i + 1 >= argc) return invalid_request("simulate: --" + name + " needs a value");
            value = argv[++i];
        }
        if (auto problem = flag->second(o, *value)) return invalid_request("simulate: " + *problem);
    }
    if (o.help) return o;
    if (o.config.empty()) return invalid_request("simulate: --config FILE is required");
    if (o.log.empty()) return invalid_request("simulate: --log FILE is required (\"-\" reads stdin)");
    if (o.nginx_format && o.format != LogFormat::nginx) return invalid_request("simulate: --nginx-format needs --format nginx");
    return o;
}

const char* simulate_usage() {
    return "usage: ratelimitd simulate --config FILE --log FILE|- [--format nginx|json] [--nginx-format FORMAT]\n"
           "                           [--baseline FILE] [--json] [--html FILE] [--top N] [--out-of-order DURATION]\n"
           "                           [--time-field F] [--method-field F] [--uri-field F] [--client-field F]\n"
           "                           [--tenant-field F] [--tenant-header NAME] [--quiet]\n"
           "\n"
           "Replays an access log through the config as /v1/auth would decide it, in the embedded store on\n"
           "the log's clock, and prints whom it would deny. Reads files only; opens no port.\n"
           "  --config FILE        the config to try (validated first: exit 1 naming the problem)\n"
           "  --log FILE|-         the access log; .gz read directly; - reads stdin\n"
           "  --format nginx|json  nginx (default: the combined log_format) or JSON lines\n"
           "  --nginx-format FMT   the log's log_format, in nginx's syntax ($remote_addr, $time_local,\n"
           "                       $request, $http_x_tenant_id, ...)\n"
           "  --baseline FILE      also replay FILE (the config in force) and list who is newly denied\n"
           "                       and who no longer is\n"
           "  --json               print the JSON summary (docs/simulate.md) instead of the text one\n"
           "  --html FILE          also write one self-contained HTML page with the chart and the tables\n"
           "  --top N              tenants listed as denied most (default 10)\n"
           "  --out-of-order D     how far behind the newest line a line may be before it is counted as\n"
           "                       late (default 5s); it is decided at the newest line's time either way\n"
           "  --time-field F, --method-field F, --uri-field F, --client-field F\n"
           "                       JSON members (defaults time, method, uri, client; a.b for nested)\n"
           "  --tenant-field F     JSON member holding the tenant header's value\n"
           "  --tenant-header NAME the header that value stands for (default: the config's first header\n"
           "                       identity source)\n"
           "  --quiet              no progress line on stderr\n"
           "Exit: 0 done, 1 the config (or baseline) fails validation, 2 a usage error or unreadable log.\n";
}

}  // namespace ratelimitd::simulate
