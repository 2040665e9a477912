// Reads the settings table's rows from the file, the environment and the command line.
#include "ratelimitd/config/resolve.hpp"

#include "ratelimitd/config/setting_table.hpp"
#include "ratelimitd/config/setting_values.hpp"

#include <nlohmann/json.hpp>

namespace ratelimitd::config {
namespace {

// The row's text from its flag, else its variables (the alias first); empty counts as unset.
std::optional<std::string> text_of(const SettingRow& row, const CommandLine& cl, const EnvLookup& env) {
    if (!row.flag.empty()) {
        if (auto it = cl.flags.find(std::string(row.flag)); it != cl.flags.end()) return it->second;
    }
    for (const auto name : {row.env_alias, row.env}) {
        if (name.empty()) continue;
        if (const char* v = env(std::string(name).c_str()); v != nullptr && *v != '\0') return std::string(v);
    }
    return std::nullopt;
}

}  // namespace

result<FileSettings> read_file_settings(const ConfigTree& root) {
    FileSettings out;
    for (const auto& row : setting_table()) {
        if (row.file_key.empty() || row.field.keep == nullptr) continue;
        const auto it = root.find(std::string(row.file_key));
        if (it == root.end()) continue;
        auto value = file_value(row, *it);
        if (!value) return Problem{value.error().code, std::string(row.file_key) + ": " + value.error().detail};
        row.field.keep(out, *value);
    }
    return out;
}

std::vector<std::string_view> file_setting_keys() {
    std::vector<std::string_view> keys;
    for (const auto& row : setting_table()) {
        if (!row.file_key.empty()) keys.push_back(row.file_key);
    }
    return keys;
}

result<Settings> apply_precedence(const CommandLine& cl, const FileSettings& file, const EnvLookup& env,
                                  const Settings& defaults) {
    Settings s = defaults;
    for (const auto& row : setting_table()) {
        if (auto text = text_of(row, cl, env)) {
            auto value = text_value(row, *text);
            if (!value) return value.error();
            row.field.apply(s, *value);
        } else if (row.field.kept != nullptr) {
            auto value = row.field.kept(file);
            if (!value) continue;
            // Text from the file passes the text rule too: a FileSettings built in code was not read.
            if (const auto* text = std::get_if<std::string>(&*value)) {
                if (auto checked = text_value(row, *text); !checked) return checked.error();
            }
            row.field.apply(s, *value);
        }
    }
    if (cl.command == Command::check_config) s.config_path = cl.file;
    return s;
}

std::optional<std::string> setting_text(std::string_view flag, const CommandLine& cl, const EnvLookup& env) {
    const SettingRow* row = find_setting_by_flag(flag);
    if (row == nullptr) return std::nullopt;
    return text_of(*row, cl, env);
}

result<std::optional<std::string>> env_setting(std::string_view env_name, const EnvLookup& env) {
    for (const SettingRow& row : setting_table()) {
        if (row.env != env_name) continue;
        auto text = text_of(row, CommandLine{}, env);
        if (!text) return std::optional<std::string>{};
        if (auto checked = text_value(row, *text); !checked) return checked.error();
        return text;
    }
    return std::optional<std::string>{};
}

std::optional<std::string> config_path(const CommandLine& cl, const EnvLookup& env) {
    if (cl.command == Command::check_config) return cl.file;
    const SettingRow* row = find_setting_by_flag("config");
    return text_of(*row, cl, env);
}

}  // namespace ratelimitd::config
