// `ratelimitd simulate`: options, configs (validated before the log is opened), the replay
// loop and the outputs.
#include "ratelimitd/simulate/command.hpp"

#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/simulate/json_format.hpp"
#include "ratelimitd/simulate/line_source.hpp"
#include "ratelimitd/simulate/nginx_format.hpp"
#include "ratelimitd/simulate/options.hpp"
#include "ratelimitd/simulate/report.hpp"
#include "ratelimitd/simulate/simulation.hpp"
#include "ratelimitd/store/backend_factory.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <memory>
#include <stdexcept>

#include <unistd.h>

namespace ratelimitd::simulate {
namespace {

namespace net = boost::asio;
using steady = std::chrono::steady_clock;

// Unparseable lines shown on stderr; the rest are only counted.
constexpr std::uint64_t shown_unparsed = 5;

struct ConfigRefused : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A config as the server would take it with the embedded store, or ConfigRefused naming why.
std::shared_ptr<const policy::Registry> load_registry(const std::string& path) {
    policy::Config config;
    try {
        config = policy::load_config(path);
    } catch (const policy::ConfigError& e) {
        throw ConfigRefused(e.what());
    }
    if (auto refusal = store::registry_refusal(std::nullopt, config.registry)) throw ConfigRefused(path + ": " + *refusal);
    return std::make_shared<const policy::Registry>(std::move(config.registry));
}

// A line as it may be shown: at most 160 bytes, bytes that are not printable ASCII as \xNN.
std::string shown(std::string_view line) {
    std::string out;
    for (std::size_t i = 0; i < line.size() && i < 160; ++i) {
        const auto c = static_cast<unsigned char>(line[i]);
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            char hex[5];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        }
    }
    if (line.size() > 160) out += "...";
    return out;
}

// The progress line: rewritten every second on a terminal, else a line every 30 s (so that a
// short replay, and every test, prints none).
class Progress {
public:
    explicit Progress(bool on) : on_(on), tty_(::isatty(2) == 1), started_(steady::now()), last_(started_) {}

    void tick(std::uint64_t lines) {
        if (!on_ || (lines & 0xffff) != 0) return;
        const auto now = steady::now();
        if (now - last_ < (tty_ ? std::chrono::seconds(1) : std::chrono::seconds(30))) return;
        last_ = now;
        const double s = std::chrono::duration<double>(now - started_).count();
        std::fprintf(stderr, tty_ ? "\rsimulate: %llu lines, %.0f lines/s " : "simulate: %llu lines, %.0f lines/s\n",
                     static_cast<unsigned long long>(lines), static_cast<double>(lines) / s);
        shown_ = tty_;
    }

    void done() {
        if (shown_) std::fputs("\n", stderr);
    }

private:
    bool on_;
    bool tty_;
    bool shown_ = false;
    steady::time_point started_;
    steady::time_point last_;
};

struct Counts {
    std::uint64_t lines = 0;
    std::uint64_t unparsed = 0;
};

net::awaitable<void> replay(LineSource& source, LineParser& parser, Simulation& config, Simulation* baseline,
                            Progress& progress, Counts& counts) {
    std::string_view line;
    LogRequest req;
    while (source.next(line)) {
        ++counts.lines;
        progress.tick(counts.lines);
        const char* why = source.line_too_long() ? "longer than 64 KiB" : parser.parse(line, req);
        if (why != nullptr) {
            if (++counts.unparsed <= shown_unparsed) {
                std::fprintf(stderr, "simulate: line %llu unparsed (%s): %s\n",
                             static_cast<unsigned long long>(counts.lines), why, shown(line).c_str());
            }
            continue;
        }
        co_await config.decide(req);
        if (baseline != nullptr) co_await baseline->decide(req);
    }
}

// The tenant header a JSON tenant member stands for: the flag's, else the config's first
// header identity source.
std::optional<std::string> tenant_header(const Options& o, const policy::Registry& reg) {
    if (o.tenant_header_given) return o.json.tenant_header;
    for (const auto& source : reg.identity) {
        if (source.kind == policy::IdentitySource::Kind::header) return source.header;
    }
    return std::nullopt;
}

std::unique_ptr<LineParser> make_parser(const Options& o, const policy::Registry& reg) {
    if (o.format == LogFormat::nginx) return std::make_unique<NginxFormat>(o.nginx_format.value_or(std::string(nginx_combined)));
    JsonFields fields = o.json;
    if (fields.tenant) {
        auto header = tenant_header(o, reg);
        if (!header) {
            throw std::invalid_argument("--tenant-field needs --tenant-header NAME: the config has no header identity source");
        }
        fields.tenant_header = *header;
    }
    return std::make_unique<JsonFormat>(std::move(fields));
}

Summary finished(const Simulation& sim, const Counts& counts) {
    Summary s = sim.summary();
    s.lines = counts.lines;
    s.unparsed = counts.unparsed;
    return s;
}

// The report of a finished replay, as --json, text and --html ask: 0, or 2 when the HTML
// file cannot be written.
int write_report(const Options& o, const Simulation& sim, const Simulation* base, const Counts& counts) {
    Report report;
    report.config = finished(sim, counts);
    if (base != nullptr) report.baseline = finished(*base, counts);
    report.top = o.top;
    report.config_name = o.config;
    report.baseline_name = o.baseline.value_or("");
    report.log_name = o.log == "-" ? "stdin" : o.log;
    compare(report);
    if (report.config.late > 0) {
        std::fprintf(stderr, "simulate: %llu lines were logged more than %lld ms behind a line before them; each was "
                             "decided at the later time\n",
                     static_cast<unsigned long long>(report.config.late), static_cast<long long>(o.tolerance_ms));
    }
    if (o.html) {
        std::ofstream out(*o.html, std::ios::binary | std::ios::trunc);
        out << to_html(report);
        out.close();
        if (!out) {
            std::fprintf(stderr, "ratelimitd simulate: cannot write %s\n", o.html->c_str());
            return 2;
        }
    }
    const std::string text = o.json_output ? to_json(report).dump() + "\n" : to_text(report);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
}

int run(const Options& o, const std::optional<std::string>& secret) {
    std::shared_ptr<const policy::Registry> config;
    std::shared_ptr<const policy::Registry> baseline_registry;
    try {
        config = load_registry(o.config);
        if (o.baseline) baseline_registry = load_registry(*o.baseline);
    } catch (const ConfigRefused& e) {
        std::fprintf(stderr, "ratelimitd simulate: %s\n", e.what());
        return 1;
    }
    std::unique_ptr<LineParser> parser;
    try {
        parser = make_parser(o, *config);
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "ratelimitd simulate: %s\n", e.what());
        return 2;
    }
    Simulation sim(config, secret, o.tolerance_ms);
    std::unique_ptr<Simulation> base;
    if (baseline_registry) base = std::make_unique<Simulation>(baseline_registry, secret, o.tolerance_ms);

    Counts counts;
    try {
        LineSource source(o.log);
        Progress progress(o.progress);
        net::io_context io;
        std::exception_ptr failure;
        net::co_spawn(io, replay(source, *parser, sim, base.get(), progress, counts),
                      [&failure](std::exception_ptr e) { failure = e; });
        io.run();
        progress.done();
        if (failure) std::rethrow_exception(failure);
    } catch (const std::runtime_error& e) {
        std::fprintf(stderr, "ratelimitd simulate: %s\n", e.what());
        return 2;
    }
    if (counts.unparsed > shown_unparsed) {
        std::fprintf(stderr, "simulate: %llu lines unparsed in all (the first %llu shown)\n",
                     static_cast<unsigned long long>(counts.unparsed), static_cast<unsigned long long>(shown_unparsed));
    }

    return write_report(o, sim, base.get(), counts);
}

}  // namespace

int run_command(int argc, const char* const* argv, const config::EnvLookup& env) {
    auto options = parse_options(argc, argv);
    if (!options) {
        std::fprintf(stderr, "ratelimitd %s\n", options.error().detail.c_str());
        return 2;
    }
    if (options->help) {
        std::fputs(simulate_usage(), stdout);
        return 0;
    }
    // The key of hashed identities, as the server's settings read and check it.
    const auto secret = config::env_setting("RATELIMITD_HASH_SECRET", env);
    if (!secret) {
        std::fprintf(stderr, "ratelimitd simulate: %s\n", secret.error().detail.c_str());
        return 2;
    }
    return run(*options, *secret);
}

}  // namespace ratelimitd::simulate
