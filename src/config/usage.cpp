// --help: the commands and every row of the settings table (the app adds the store URL forms).
#include "ratelimitd/config/usage.hpp"

#include "ratelimitd/config/setting_table.hpp"
#include "ratelimitd/config/tree_values.hpp"

namespace ratelimitd::config {
namespace {

constexpr const char* commands =
    "usage: ratelimitd --config FILE [--SETTING VALUE]...\n"
    "       ratelimitd --check-config FILE   validate FILE, print what is wrong, exit 0 or 1\n"
    "       ratelimitd --erl-env             configured by envoyproxy/ratelimit's environment (as /bin/ratelimit)\n"
    "       ratelimitd simulate --config FILE --log FILE|- [--json] [--html FILE] [--baseline FILE] ...\n"
    "                                        replay an access log offline: whom would it deny (simulate --help)\n"
    "       ratelimitd --version | --help\n"
    "\n"
    "Settings: a flag wins over its RATELIMITD_* variable, the variable over the config file's\n"
    "key, the file over the default. Secrets have no flag, so they stay out of `ps`.\n"
    "\n";

std::string value_name(const SettingRow& row) {
    if (row.type == SettingType::on_off) return "on|off";
    if (row.type == SettingType::choice) return join_words(row.choices, "|");
    return std::string(row.value_name);
}

// "  --listen HOST:PORT" / "  RATELIMITD_ADMIN_TOKEN" / "  access_log_sample (file)".
std::string entry_head(const SettingRow& row) {
    if (!row.flag.empty()) return "  --" + std::string(row.flag) + " " + value_name(row);
    if (!row.env.empty()) return "  " + std::string(row.env) + " (no flag)";
    return "  " + std::string(row.file_key) + " (config file only)";
}

std::string entry_sources(const SettingRow& row) {
    std::string out;
    const auto add = [&out](std::string_view what, std::string_view name) {
        if (name.empty()) return;
        out += out.empty() ? "" : ", ";
        out += what;
        out += name;
    };
    if (!row.flag.empty()) add("", row.env);
    if (!row.flag.empty()) add("", row.env_alias);
    add("file: ", row.file_key);
    add("default: ", row.default_text);
    return out;
}

}  // namespace

const std::string& usage() {
    static const std::string text = [] {
        std::string out = commands;
        for (const auto& row : setting_table()) {
            out += entry_head(row) + "\n      " + std::string(row.help) + "\n      (" + entry_sources(row) + ")\n";
        }
        return out;
    }();
    return text;
}

}  // namespace ratelimitd::config
