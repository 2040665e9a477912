// The runtime directory as envoyproxy/ratelimit's file provider reads it, into
// a config tree.
#include "ratelimitd/erl/runtime_directory.hpp"

#include "ratelimitd/core/log_value.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/erl/erl_notify_file.hpp"
#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/envoy_config_section.hpp"
#include "ratelimitd/policy/registry_loader.hpp"
#include "ratelimitd/policy/rls_domain.hpp"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace ratelimitd::erl {
namespace {

namespace fs = std::filesystem;

bool is_dot_name(const fs::path& p) {
    const std::string name = p.filename().string();
    return !name.empty() && name.front() == '.';
}

// The runtime key of a file: its path below the loaded directory with '/' read
// as '.'.
std::string runtime_key(const fs::path& base, const fs::path& file) {
    std::string key = file.lexically_relative(base).generic_string();
    std::replace(key.begin(), key.end(), '/', '.');
    return key;
}

[[noreturn]] void cannot_read(const fs::path& dir, const std::string& why) {
    throw policy::ConfigError("RUNTIME_ROOT: cannot read " + quote(dir.string(), 256) + ": " + why);
}

// What envoyproxy/ratelimit says as it loads its runtime directory: each file and each
// domain, so an operator sees which of the mounted files took effect (at info: a load
// happens at start and on each change, never per request).
void log_loaded(const std::vector<std::string>& files, const policy::Registry& registry) {
    for (const auto& file : files) spdlog::info("erl: runtime file loaded file={}", log_value(file));
    if (!registry.domains) return;
    for (const auto& [name, domain] : registry.domains->by_name) {
        spdlog::info("erl: domain loaded domain={} file={}", log_value(name), log_value(domain.source_file));
    }
}

}  // namespace

std::vector<std::string> runtime_config_files(const RuntimeLayout& layout) {
    const fs::path base =
        layout.watch_root ? fs::path(layout.root) / layout.subdirectory : fs::path(layout.config_directory());
    const std::string wanted_prefix = layout.app_directory + ".";
    std::error_code ec;
    if (!fs::is_directory(base, ec)) cannot_read(base, "no such directory");
    std::vector<std::string> files;
    fs::recursive_directory_iterator it(base, fs::directory_options::none, ec);
    for (const fs::recursive_directory_iterator end; !ec && it != end; it.increment(ec)) {
        const fs::path& p = it->path();
        if (layout.ignore_dot_files && is_dot_name(p)) {
            if (it->is_directory(ec) && !it->is_symlink(ec)) it.disable_recursion_pending();
            continue;
        }
        // A symlink to a directory is not entered (recursive_directory_iterator
        // does not follow it) and is not a file: ConfigMap mounts reach ..data
        // through their file links.
        if (!it->is_regular_file(ec)) continue;
        if (layout.watch_root && !runtime_key(base, p).starts_with(wanted_prefix)) continue;
        files.push_back(p.lexically_normal().string());
        if (files.size() > policy::envoy_bounds::max_files) {
            cannot_read(base, "more than " + std::to_string(policy::envoy_bounds::max_files) + " files");
        }
    }
    if (ec) cannot_read(base, ec.message());
    std::sort(files.begin(), files.end());
    return files;
}

std::string erl_config_text(const ErlMode& mode, const std::vector<std::string>& files) {
    nlohmann::json tree = nlohmann::json::object();
    if (mode.runtime) {
        tree["envoy_config"] = files;
        tree["envoy_merge_domains"] = mode.runtime->merge_domains;
    }  // else the domains come from the xDS client (CONFIG_TYPE=GRPC_XDS_SOTW)
    tree["envoy_denied_calls"] = mode.charge_denied ? "charge" : "refuse";
    return tree.dump(2);
}

policy::Config load_erl_config(const ErlMode& mode) {
    const auto files = mode.runtime ? runtime_config_files(*mode.runtime) : std::vector<std::string>{};
    const policy::LoadOptions options{.envoy_rules_from_xds = !mode.runtime.has_value()};
    auto config = mode.notify_file.empty()
                      ? policy::parse_config(erl_config_text(mode, files), erl_config_name, options)
                      : said_of_notify_file(
                            [&] {
                                return policy::parse_config(with_notify_file(erl_config_text(mode, files), mode.notify_file),
                                                            erl_config_name, options);
                            },
                            mode.notify_file, erl_config_name);
    if (mode.runtime) log_loaded(files, config.registry);
    return config;
}

std::string watched_directory(const RuntimeLayout& layout) {
    if (layout.watch_root) return fs::path(layout.root).lexically_normal().parent_path().string();
    return layout.config_directory();
}

}  // namespace ratelimitd::erl
