// The rules of each SettingType: one for text (a flag or a RATELIMITD_* variable) and one for
// the config file's value. Text messages name the setting by its label ("max-connections:
// expected a whole number 1..1000000, got \"0\""); file messages leave the key to the caller,
// which names file and key. A secret's value is never echoed. Never throws.
#pragma once

#include "ratelimitd/config/setting_table.hpp"
#include "ratelimitd/config/tree_values.hpp"
#include "ratelimitd/core/error.hpp"

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ratelimitd::config {

/// `text` from a flag or the environment, checked against `row`.
result<SettingValue> text_value(const SettingRow& row, const std::string& text);

/// `v` from the config file under row.file_key, checked against `row`.
result<SettingValue> file_value(const SettingRow& row, const ConfigTree& v);

/// The store URL schemes a `redis` value may start with (file, flag and variable alike): every
/// backend's, generated from their sources by cmake/store_url_schemes.cmake.
std::span<const std::string_view> store_url_schemes() noexcept;

/// Splits "HOST:PORT" or "[V6]:PORT". Fails naming the setting (`name`). Never throws.
result<std::pair<std::string, unsigned short>> parse_listen(std::string_view text,
                                                         std::string_view name = "listen");

/// "K=V,K2=V2" (separator '=') or "NAME:VALUE,..." (':'): the pairs in order, blank items
/// skipped, each split at its first separator. A header name (':') is lower-cased and must be
/// 1..64 bytes of a-z, 0-9, '-', '_', '.' and not start with "grpc-"; a metadata key (=) 1..256
/// bytes; every value printable ASCII, at most 4096 bytes. Fails naming `name` and the item
/// (its value never echoed: it may be a token). Never throws.
result<std::vector<std::pair<std::string, std::string>>> parse_pairs(std::string_view text, char separator,
                                                                     std::string_view name);

/// The config file's stricter form: an IPv6 host in brackets, no blanks, port 0..65535.
bool is_host_port(std::string_view s);

}  // namespace ratelimitd::config
