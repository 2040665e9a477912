// RATELIMITD_ERL_NOTIFY_FILE's section, into ERL mode's config tree (erl_notify_file.hpp).
#include "ratelimitd/erl/erl_notify_file.hpp"

#include "ratelimitd/config/tree_values.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/registry_reader.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>

namespace ratelimitd::erl {
namespace {

std::string named(const std::string& path) { return std::string(notify_file_variable) + " " + quote(path, 256); }

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
    throw policy::ConfigError(named(path) + ": " + why);
}

}  // namespace

result<std::string> notify_file_path(const config::EnvLookup& env, const std::string& cwd) {
    const char* value = env(std::string(notify_file_variable).c_str());
    if (value == nullptr) return std::string();
    if (*value == '\0') {
        return Problem{errc::invalid_request, std::string(notify_file_variable) +
                                                  ": expected a file holding a notify: section, got an empty value"};
    }
    const std::filesystem::path p(value);
    return (p.is_relative() ? std::filesystem::path(cwd) / p : p).lexically_normal().string();
}

std::string with_notify_file(const std::string& config_text, const std::string& path) {
    std::string text;
    policy::ConfigTree file;
    // The reader's own messages name the path already (what it could not read, or where the
    // syntax broke): said of the variable too.
    const auto of_variable = [](const policy::ConfigError& e) {
        return policy::ConfigError(std::string(notify_file_variable) + ": " + e.what());
    };
    try {
        text = policy::read_config_file(path);
    } catch (const policy::ConfigError& e) {
        throw of_variable(e);
    }
    if (text.size() > max_notify_file_bytes) {
        refuse(path, "larger than " + std::to_string(max_notify_file_bytes / 1024) + " KiB");
    }
    try {
        file = policy::read_config_tree(text, path);
    } catch (const policy::ConfigError& e) {
        throw of_variable(e);
    }
    if (!file.is_object() || file.size() != 1 || !file.contains("notify")) {
        // Only the shape is named, never a value: the section holds the targets' secrets.
        refuse(path, "expected a map with the one key notify (the section of a native config file), got " +
                         config::type_name(file) + (file.is_object() ? " of " + std::to_string(file.size()) + " keys" : ""));
    }
    policy::ConfigTree tree = policy::ConfigTree::parse(config_text);
    tree["notify"] = std::move(file["notify"]);
    return tree.dump();
}

policy::Config said_of_notify_file(const std::function<policy::Config()>& load, const std::string& path,
                                   std::string_view tree_name) {
    try {
        return load();
    } catch (const policy::ConfigError& e) {
        const std::string what = e.what();
        const std::string ours = std::string(tree_name) + ": notify";
        if (!what.starts_with(ours)) throw;
        throw policy::ConfigError(named(path) + what.substr(tree_name.size()));
    }
}

}  // namespace ratelimitd::erl
