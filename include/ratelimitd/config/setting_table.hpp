// The one table of process settings: per row its file key, flag, environment variable, type,
// bounds, default and help line. The config-file reader, the flag and environment parser,
// `--help` and every message about a setting are driven by these rows (docs/design.md,
// "Adding a process setting").
#pragma once

#include "ratelimitd/config/settings.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

namespace ratelimitd::config {

/// What a row accepts; each type has one rule for text (flags, environment) and one for the
/// config file's value, with their messages (setting_values.hpp).
enum class SettingType {
    path,       ///< any text: a file path or a host name
    listen,     ///< HOST:PORT or [IPV6]:PORT, port 0..65535
    redis_url,  ///< a URL of one of store_url_schemes() (setting_values.hpp): file, flag and variable
    count,      ///< a whole number lo..hi, or also 0 with zero_allowed ("no cap")
    duration,   ///< a duration lo..hi milliseconds
    choice,     ///< one of `choices`
    on_off,     ///< on/off, yes/no, true/false in any case (the file: also a YAML boolean), a bool
    secret,     ///< at least lo bytes; the value is never echoed
    fraction,   ///< a number from 0 to 1 (file only)
    number,     ///< a decimal number lo..hi (whole-number bounds)
    key_values, ///< "KEY=VALUE,KEY=VALUE" (xDS node metadata, envoyproxy/ratelimit's format)
    headers,    ///< "NAME:VALUE,NAME:VALUE": gRPC metadata names and printable values
};

/// One setting's value once read: text, whole number, duration, number or switch.
using SettingValue = std::variant<std::string, std::int64_t, std::chrono::milliseconds, double, bool>;

/// Where a row's value goes; built from member pointers in setting_table.cpp.
struct SettingField {
    void (*apply)(Settings&, const SettingValue&) = nullptr;
    void (*keep)(FileSettings&, const SettingValue&) = nullptr;            ///< null: no file key
    std::optional<SettingValue> (*kept)(const FileSettings&) = nullptr;    ///< null: no file key
};

struct SettingRow {
    std::string_view file_key{};   ///< top-level key of the config file; empty: not in the file
    std::string_view flag{};       ///< "--<flag>"; empty: none (secrets stay out of `ps`)
    std::string_view env{};        ///< RATELIMITD_<FLAG>; empty: none
    std::string_view env_alias{};  ///< a second variable, read before `env`; usually empty
    SettingType type = SettingType::path;
    std::int64_t lo = 0;         ///< count: least; duration: least ms; secret: least bytes
    std::int64_t hi = 0;         ///< count: most; duration: most ms
    bool zero_allowed = false;   ///< count, duration: 0 is accepted besides lo..hi
    std::span<const std::string_view> choices{};  ///< choice: the accepted words
    std::string_view value_name{}; ///< for --help: "HOST:PORT", "N", "DURATION"; choices: derived
    std::string_view default_text{};
    std::string_view help{};
    SettingField field{};

    /// How text-sourced messages name the setting: the flag, else the variable.
    [[nodiscard]] std::string_view label() const noexcept { return flag.empty() ? env : flag; }
};

/// Every process setting, in the order they are read and reported.
std::span<const SettingRow> setting_table() noexcept;

/// The row of `--<flag>`, or nullptr.
const SettingRow* find_setting_by_flag(std::string_view flag) noexcept;

}  // namespace ratelimitd::config
