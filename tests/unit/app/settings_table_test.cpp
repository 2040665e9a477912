// The settings table: every row complete and consistent, its bounds enforced from flags, the
// environment and the file alike, flag > environment > file for every row, --help listing
// every row, and file errors naming the key.
#include "ratelimitd/config/resolve.hpp"
#include "ratelimitd/config/setting_table.hpp"
#include "ratelimitd/config/usage.hpp"

#include "unit/app/precedence.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace ratelimitd::config {
namespace {

using ratelimitd::test::precedence;


std::string env_rule(std::string_view flag) {
    std::string name = "RATELIMITD_";
    for (char c : flag) name.push_back(c == '-' ? '_' : static_cast<char>(std::toupper(c)));
    return name;
}

// Two different valid values of a row: `first` (never the default) as text and as the file's
// JSON value, and `second` as text.
struct Samples {
    std::string first_text, second_text;
    ConfigTree first_json;
};

Samples samples(const SettingRow& row) {
    switch (row.type) {
    case SettingType::listen: return {"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:1"};
    case SettingType::redis_url: return {"redis://a:1", "redis://b:2", "redis://a:1"};
    case SettingType::count: return {std::to_string(row.hi), std::to_string(row.lo + 1), row.hi};
    case SettingType::duration:
        return {std::to_string(row.hi) + "ms", std::to_string(row.lo + 1) + "ms", std::to_string(row.hi) + "ms"};
    case SettingType::choice:
        return {std::string(row.choices.back()), std::string(row.choices.front()), std::string(row.choices.back())};
    case SettingType::secret: return {std::string(16, 'a'), std::string(16, 'b'), std::string(16, 'a')};
    case SettingType::on_off:  // the file says true or false
        if (row.default_text == "off") return {"on", "off", true};
        return {"off", "on", false};
    case SettingType::fraction: return {"", "", 0.5};
    case SettingType::path: return {"/a.yaml", "/b.yaml", "/a.yaml"};
    case SettingType::number:  // within the row's bounds (trace_sampler_arg's are 0..1)
        if (row.hi <= 1) return {"0.75", "0.25", 0.75};
        return {"7.5", "2", 7.5};
    case SettingType::key_values: return {"a=1", "b=2", "a=1"};
    case SettingType::headers: return {"x-a:1", "x-b:2", "x-a:1"};
    }
    return {};
}

TEST(SettingsTable, EveryRowHasHelpADefaultAndASource) {
    for (const auto& row : setting_table()) {
        const std::string name(row.file_key.empty() ? row.label() : row.file_key);
        EXPECT_FALSE(row.help.empty()) << name;
        EXPECT_FALSE(row.default_text.empty()) << name;
        EXPECT_TRUE(!row.file_key.empty() || !row.env.empty()) << name;
        EXPECT_NE(row.field.apply, nullptr) << name;
        EXPECT_EQ(row.file_key.empty(), row.field.keep == nullptr) << name;
        if (!row.flag.empty()) {
            EXPECT_FALSE(row.env.empty()) << name << ": a flag has its variable";
        }
        if (row.type == SettingType::choice) {
            EXPECT_FALSE(row.choices.empty()) << name;
        }
    }
}

TEST(SettingsTable, FlagsVariablesAndFileKeysAreUnique) {
    std::set<std::string_view> flags, envs, keys;
    for (const auto& row : setting_table()) {
        if (!row.flag.empty()) {
            EXPECT_TRUE(flags.insert(row.flag).second) << row.flag;
        }
        if (!row.env.empty()) {
            EXPECT_TRUE(envs.insert(row.env).second) << row.env;
        }
        if (!row.file_key.empty()) {
            EXPECT_TRUE(keys.insert(row.file_key).second) << row.file_key;
        }
        // RATELIMITD_<FLAG>, or an alias of that name read first (RATELIMITD_REDIS).
        if (!row.flag.empty()) {
            EXPECT_TRUE(row.env == env_rule(row.flag) || row.env_alias == env_rule(row.flag)) << row.flag;
        }
    }
    EXPECT_FALSE(flags.contains("check-config"));
}

TEST(SettingsTable, SecretsHaveNoFlag) {
    int secrets = 0;
    for (const auto& row : setting_table()) {
        if (row.type != SettingType::secret) continue;
        ++secrets;
        EXPECT_TRUE(row.flag.empty()) << row.env;
        EXPECT_EQ(find_setting_by_flag(row.file_key), nullptr) << row.env;
    }
    EXPECT_EQ(secrets, 3);  // admin token, hash secret, the trace export's headers
}

TEST(SettingsTable, BoundsAreEnforcedForEveryCountAndDuration) {
    for (const auto& row : setting_table()) {
        if (row.flag.empty() || (row.type != SettingType::count && row.type != SettingType::duration)) continue;
        const std::string unit = row.type == SettingType::duration ? "ms" : "";
        const std::string flag = "--" + std::string(row.flag);
        EXPECT_TRUE(precedence({flag, std::to_string(row.lo) + unit}, {})) << flag;
        EXPECT_TRUE(precedence({flag, std::to_string(row.hi) + unit}, {})) << flag;
        EXPECT_FALSE(precedence({flag, std::to_string(row.hi + 1) + unit}, {})) << flag;
        if (row.lo > 1) {
            EXPECT_FALSE(precedence({flag, std::to_string(row.lo - 1) + unit}, {})) << flag;
        }
        EXPECT_FALSE(precedence({}, {{std::string(row.env), std::to_string(row.hi + 1) + unit}})) << row.env;
        if (!row.file_key.empty()) {
            const ConfigTree too_big = {{std::string(row.file_key), row.type == SettingType::duration
                                                                        ? ConfigTree(std::to_string(row.hi + 1) + "ms")
                                                                        : ConfigTree(row.hi + 1)}};
            const auto file = read_file_settings(too_big);
            ASSERT_FALSE(file) << row.file_key;
            EXPECT_TRUE(file.error().detail.starts_with(std::string(row.file_key) + ": expected ")) << file.error().detail;
        }
    }
}

TEST(SettingsTable, FlagBeatsEnvironmentBeatsFileForEveryRow) {
    for (const auto& row : setting_table()) {
        const Samples s = samples(row);
        FileSettings file;
        if (!row.file_key.empty()) {
            auto read = read_file_settings(ConfigTree{{std::string(row.file_key), s.first_json}});
            ASSERT_TRUE(read) << read.error().detail;
            file = *read;
            EXPECT_NE(file, FileSettings{}) << row.file_key << " lands in FileSettings";
            EXPECT_NE(*precedence({}, {}, file), *precedence({}, {})) << row.file_key << " reaches Settings";
        }
        if (row.env.empty()) continue;
        const auto env_only = precedence({}, {{std::string(row.env), s.second_text}});
        ASSERT_TRUE(env_only) << env_only.error().detail;
        const auto first_only = precedence({}, {{std::string(row.env), s.first_text}});
        ASSERT_TRUE(first_only) << first_only.error().detail;
        EXPECT_NE(*env_only, *first_only) << row.env << " reaches Settings";
        const auto env_and_file = precedence({}, {{std::string(row.env), s.second_text}}, file);
        ASSERT_TRUE(env_and_file) << env_and_file.error().detail;
        EXPECT_EQ(*env_and_file, *env_only) << row.env << " beats the file";
        if (row.flag.empty()) continue;
        const std::string flag = "--" + std::string(row.flag);
        const auto all = precedence({flag, s.first_text}, {{std::string(row.env), s.second_text}}, file);
        ASSERT_TRUE(all) << all.error().detail;
        EXPECT_EQ(*all, *first_only) << row.flag << " beats the environment";
    }
}

TEST(SettingsTable, AnEmptyVariableCountsAsUnset) {
    FileSettings file;
    file.max_connections = 7;
    EXPECT_EQ(precedence({}, {{"RATELIMITD_MAX_CONNECTIONS", ""}}, file)->max_connections, 7u);
}

TEST(SettingsTable, HelpListsEveryRow) {
    const std::string& help = usage();
    for (const auto& row : setting_table()) {
        if (!row.flag.empty()) {
            EXPECT_NE(help.find("--" + std::string(row.flag) + " "), std::string::npos) << row.flag;
        }
        if (!row.env.empty()) {
            EXPECT_NE(help.find(row.env), std::string::npos) << row.env;
        }
        if (!row.file_key.empty()) {
            EXPECT_NE(help.find(row.file_key), std::string::npos) << row.file_key;
        }
        EXPECT_NE(help.find(row.help), std::string::npos) << row.help;
        EXPECT_NE(help.find(row.default_text), std::string::npos) << row.default_text;
    }
    EXPECT_NE(help.find("--log-level trace|debug|info|warn|error"), std::string::npos) << help;
}

TEST(SettingsTable, FileErrorsNameTheKeyAndNeverASecret) {
    auto threads = read_file_settings(ConfigTree{{"threads", 0}});
    ASSERT_FALSE(threads);
    EXPECT_EQ(threads.error().detail, "threads: expected an integer 1..256, got 0");
    auto token = read_file_settings(ConfigTree{{"admin_token", "hunter2"}});
    ASSERT_FALSE(token);
    EXPECT_EQ(token.error().detail, "admin_token: expected a string of at least 16 bytes");
    EXPECT_EQ(read_file_settings(ConfigTree{{"policies", 1}, {"prefix", "x"}})->threads, std::nullopt);
}

TEST(SettingsTable, HeavyHitterSettingsHaveTheirBounds) {
    auto ok = read_file_settings(ConfigTree{{"top_k", 0}, {"top_window", "10m"}});
    ASSERT_TRUE(ok) << ok.error().detail;
    EXPECT_EQ(ok->top_k, 0);
    EXPECT_EQ(ok->top_window, std::chrono::minutes(10));
    auto k = read_file_settings(ConfigTree{{"top_k", 501}});
    ASSERT_FALSE(k);
    EXPECT_EQ(k.error().detail.rfind("top_k: ", 0), 0u) << k.error().detail;
    auto window = read_file_settings(ConfigTree{{"top_window", "1s"}});
    ASSERT_FALSE(window);
    EXPECT_EQ(window.error().detail.rfind("top_window: ", 0), 0u) << window.error().detail;
}

// The list is derived, not kept: the file keys are every row's key in the table's order, and
// docs/configuration.md's settings table documents exactly those keys (a row
// added to one and not the other fails here).
TEST(SettingsTable, FileKeysAreTheTableRowsInOrder) {
    std::vector<std::string_view> rows;
    for (const auto& row : setting_table()) {
        if (!row.file_key.empty()) rows.push_back(row.file_key);
    }
    EXPECT_EQ(file_setting_keys(), rows);
    ASSERT_FALSE(rows.empty());

    std::ifstream doc(std::string(RATELIMITD_TEST_DATA_DIR) + "/../../docs/configuration.md");
    ASSERT_TRUE(doc) << "docs/configuration.md";
    // A settings row: | `key` | `--flag` | `RATELIMITD_...` | ... (a dash where a row has none)
    const std::regex settings_row(R"(^\| `([a-z_]+)` \| (`--[a-z-]+`|—) \| (`RATELIMITD_[A-Z_]+`|—) \|)");
    std::vector<std::string> documented;
    std::smatch m;
    for (std::string line; std::getline(doc, line);) {
        if (std::regex_search(line, m, settings_row)) documented.push_back(m[1]);
    }
    const std::set<std::string> keys(rows.begin(), rows.end());
    std::vector<std::string> documented_keys;  // the doc's rows for settings that have a file key
    for (const auto& key : documented) {
        if (keys.contains(key)) documented_keys.push_back(key);
    }
    EXPECT_EQ(std::set<std::string>(documented_keys.begin(), documented_keys.end()), keys)
        << "docs/configuration.md's settings table and the settings table's file keys differ";
}

// The gRPC answer's fields: ietf by default (today's), none, or envoyproxy/ratelimit's three by
// the names its LIMIT_*_HEADER variables give; anything else is refused naming the setting.
TEST(SettingsTable, GrpcResponseHeadersAreIetfNoneOrErlsWithItsNames) {
    auto defaults = precedence({}, {});
    ASSERT_TRUE(defaults) << defaults.error().detail;
    EXPECT_EQ(defaults->grpc_response_headers, "ietf");
    EXPECT_EQ(defaults->grpc_limit_header, "RateLimit-Limit");
    EXPECT_EQ(defaults->grpc_remaining_header, "RateLimit-Remaining");
    EXPECT_EQ(defaults->grpc_reset_header, "RateLimit-Reset");
    EXPECT_FALSE(defaults->envoy_quota_mode);
    auto file = read_file_settings(ConfigTree{{"grpc_response_headers", "erl"}, {"grpc_limit_header", "X-Limit"},
                                              {"envoy_quota_mode", true}});
    ASSERT_TRUE(file) << file.error().detail;
    auto s = precedence({"--grpc-reset-header", "X-Reset"}, {{"RATELIMITD_GRPC_REMAINING_HEADER", "X-Left"}}, *file);
    ASSERT_TRUE(s) << s.error().detail;
    EXPECT_EQ(s->grpc_response_headers, "erl");
    EXPECT_EQ(s->grpc_limit_header, "X-Limit");
    EXPECT_EQ(s->grpc_remaining_header, "X-Left");
    EXPECT_EQ(s->grpc_reset_header, "X-Reset");
    EXPECT_TRUE(s->envoy_quota_mode);
    auto none = precedence({"--grpc-response-headers", "none"}, {});
    ASSERT_TRUE(none) << none.error().detail;
    EXPECT_EQ(none->grpc_response_headers, "none");
    auto bad = precedence({"--grpc-response-headers", "x"}, {});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().detail, "grpc-response-headers: expected ietf, none or erl, got \"x\"");
}

// One row per variable of envoyproxy/ratelimit's gRPC TLS (GRPC_SERVER_USE_TLS, _TLS_CERT,
// _TLS_KEY, GRPC_CLIENT_TLS_CACERT, _SAN), so its environment maps onto them one to one.
TEST(SettingsTable, GrpcTlsSettingsAreOffByDefaultAndReadFromEverySource) {
    auto defaults = precedence({}, {});
    ASSERT_TRUE(defaults) << defaults.error().detail;
    EXPECT_FALSE(defaults->grpc_tls);
    EXPECT_EQ(defaults->grpc_tls_cert, "");
    EXPECT_EQ(defaults->grpc_tls_client_san, "");
    EXPECT_EQ(defaults->grpc_tls_reload_interval, std::chrono::seconds(10));
    auto file = read_file_settings(ConfigTree{{"grpc_tls", true}, {"grpc_tls_cert", "/f/tls.crt"},
                                              {"grpc_tls_key", "/f/tls.key"}, {"grpc_tls_client_ca", "/f/ca.crt"},
                                              {"grpc_tls_client_san", "envoy.test"}, {"grpc_tls_reload_interval", "2s"}});
    ASSERT_TRUE(file) << file.error().detail;
    auto s = precedence({"--grpc-tls-key", "/flag/tls.key"}, {{"RATELIMITD_GRPC_TLS_CLIENT_SAN", "spiffe://x/envoy"}}, *file);
    ASSERT_TRUE(s) << s.error().detail;
    EXPECT_TRUE(s->grpc_tls);
    EXPECT_EQ(s->grpc_tls_cert, "/f/tls.crt");
    EXPECT_EQ(s->grpc_tls_key, "/flag/tls.key");
    EXPECT_EQ(s->grpc_tls_client_ca, "/f/ca.crt");
    EXPECT_EQ(s->grpc_tls_client_san, "spiffe://x/envoy");
    EXPECT_EQ(s->grpc_tls_reload_interval, std::chrono::seconds(2));
    auto interval = precedence({"--grpc-tls-reload-interval", "100ms"}, {});
    ASSERT_FALSE(interval);
    EXPECT_EQ(interval.error().detail.rfind("grpc-tls-reload-interval: expected", 0), 0u) << interval.error().detail;
}

// One row per variable of envoyproxy/ratelimit's xDS client (CONFIG_GRPC_XDS_*, XDS_CLIENT_*), with
// its defaults, so its environment maps onto them one to one.
TEST(SettingsTable, XdsSettingsHaveEnvoyRatelimitsDefaults) {
    auto s = precedence({}, {});
    ASSERT_TRUE(s) << s.error().detail;
    EXPECT_EQ(s->xds_server, std::nullopt);
    EXPECT_EQ(s->xds_node_id, "default");
    EXPECT_EQ(s->xds_retry_interval, std::chrono::seconds(3));
    EXPECT_EQ(s->xds_backoff_initial, std::chrono::seconds(10));
    EXPECT_EQ(s->xds_backoff_max, std::chrono::seconds(60));
    EXPECT_EQ(s->xds_backoff_random_factor, 0.5);
    EXPECT_TRUE(s->xds_backoff_jitter);
    EXPECT_FALSE(s->xds_tls);
    EXPECT_FALSE(s->xds_force_start);
    EXPECT_EQ(s->xds_max_message_bytes, 4u * 1024 * 1024);
}

TEST(SettingsTable, XdsSettingsAreReadFromEverySource) {
    const std::map<std::string, std::string> env{
        {"RATELIMITD_XDS_SERVER", "xds.example:18000"}, {"RATELIMITD_XDS_NODE_ID", "rl-1"},
        {"RATELIMITD_XDS_NODE_METADATA", "zone=a,team=edge"}, {"RATELIMITD_XDS_TLS", "true"},
        {"RATELIMITD_XDS_TLS_CA", "/ca.pem"}, {"RATELIMITD_XDS_TLS_CERT", "/c.pem"}, {"RATELIMITD_XDS_TLS_KEY", "/k.pem"},
        {"RATELIMITD_XDS_TLS_SERVER_SAN", "cp.test"}, {"RATELIMITD_XDS_RETRY_INTERVAL", "1s"},
        {"RATELIMITD_XDS_BACKOFF_INITIAL", "200ms"}, {"RATELIMITD_XDS_BACKOFF_MAX", "2s"},
        {"RATELIMITD_XDS_BACKOFF_RANDOM_FACTOR", "2"}, {"RATELIMITD_XDS_BACKOFF_JITTER", "false"},
        {"RATELIMITD_XDS_MAX_MESSAGE_BYTES", "65536"}, {"RATELIMITD_XDS_HEADERS", "Authorization:Bearer x,x-a:b"},
        {"RATELIMITD_XDS_FORCE_START", "on"}};
    auto s = precedence({}, {env.begin(), env.end()});
    ASSERT_TRUE(s) << s.error().detail;
    EXPECT_EQ(s->xds_server, "xds.example:18000");
    EXPECT_EQ(s->xds_node_id, "rl-1");
    EXPECT_EQ(s->xds_node_metadata, "zone=a,team=edge");
    EXPECT_TRUE(s->xds_tls);
    EXPECT_EQ(s->xds_tls_server_san, "cp.test");
    EXPECT_EQ(s->xds_backoff_initial, std::chrono::milliseconds(200));
    EXPECT_EQ(s->xds_backoff_random_factor, 2.0);
    EXPECT_FALSE(s->xds_backoff_jitter);
    EXPECT_EQ(s->xds_max_message_bytes, 65536u);
    EXPECT_EQ(s->xds_headers, "Authorization:Bearer x,x-a:b");
    EXPECT_TRUE(s->xds_force_start);
    auto file = read_file_settings(ConfigTree{{"xds_server", "127.0.0.1:18000"}, {"xds_backoff_random_factor", 1.5},
                                              {"xds_headers", "x-a:b"}});
    ASSERT_TRUE(file) << file.error().detail;
    EXPECT_EQ(precedence({}, {}, *file)->xds_backoff_random_factor, 1.5);
}

TEST(SettingsTable, BadXdsValuesAreRefusedNamingTheSetting) {
    const std::vector<std::pair<std::string, std::string>> bad{
        {"RATELIMITD_XDS_SERVER", "no-port"},
        {"RATELIMITD_XDS_NODE_METADATA", "zone:a"},
        {"RATELIMITD_XDS_NODE_METADATA", "=a"},
        {"RATELIMITD_XDS_HEADERS", "x-a=b"},
        {"RATELIMITD_XDS_HEADERS", "bad header:b"},
        {"RATELIMITD_XDS_HEADERS", "grpc-timeout:1S"},
        {"RATELIMITD_XDS_HEADERS", "x-a:line\nbreak"},
        {"RATELIMITD_XDS_BACKOFF_RANDOM_FACTOR", "-1"},
        {"RATELIMITD_XDS_BACKOFF_RANDOM_FACTOR", "x"},
        {"RATELIMITD_XDS_MAX_MESSAGE_BYTES", "10"},
        {"RATELIMITD_XDS_TLS", "maybe"},
    };
    for (const auto& [name, value] : bad) {
        const auto s = precedence({}, {{name, value}});
        ASSERT_FALSE(s) << name << "=" << value;
        // Text is named by its flag: RATELIMITD_XDS_NODE_ID -> xds-node-id.
        std::string flag;
        for (const char c : name.substr(std::string("RATELIMITD_").size())) {
            flag.push_back(c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
        }
        EXPECT_EQ(s.error().detail.rfind(flag + ": ", 0), 0u) << s.error().detail;
    }
    // A header value may be a token: the message never echoes it.
    const auto token = precedence({}, {{"RATELIMITD_XDS_HEADERS", "x-a:secret\x01"}});
    ASSERT_FALSE(token);
    EXPECT_EQ(token.error().detail.find("secret"), std::string::npos) << token.error().detail;
    const auto file = read_file_settings(ConfigTree{{"xds_node_metadata", "zone"}});
    ASSERT_FALSE(file);
    EXPECT_EQ(file.error().detail.rfind("xds_node_metadata: item 1: expected KEY=VALUE", 0), 0u) << file.error().detail;
}

}  // namespace
}  // namespace ratelimitd::config

namespace ratelimitd::config {
namespace {

// Tracing is off unless an endpoint is set; the OpenTelemetry variables are read as the SDKs
// read them, and win over their RATELIMITD_* twins.
TEST(SettingsTable, TraceSettingsReadTheOtelVariables) {
    auto defaults = precedence({}, {});
    ASSERT_TRUE(defaults) << defaults.error().detail;
    EXPECT_EQ(defaults->trace_endpoint, std::nullopt);
    EXPECT_EQ(defaults->trace_sampler, "parentbased_traceidratio");
    EXPECT_EQ(defaults->trace_sampler_arg, 1.0);
    EXPECT_EQ(defaults->trace_service_name, "ratelimitd");
    const std::map<std::string, std::string> env{
        {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://otel:4318"}, {"RATELIMITD_TRACE_ENDPOINT", "http://other:4318"},
        {"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"}, {"OTEL_EXPORTER_OTLP_HEADERS", "api-key=k"},
        {"OTEL_EXPORTER_OTLP_INSECURE", "true"}, {"OTEL_TRACES_SAMPLER", "traceidratio"},
        {"OTEL_TRACES_SAMPLER_ARG", "0.01"}, {"OTEL_SERVICE_NAME", "edge-rl"}};
    auto s = precedence({}, {env.begin(), env.end()});
    ASSERT_TRUE(s) << s.error().detail;
    EXPECT_EQ(s->trace_endpoint, "http://otel:4318");
    EXPECT_EQ(s->trace_protocol, "grpc");
    EXPECT_EQ(s->trace_headers, "api-key=k");
    EXPECT_TRUE(s->trace_insecure);
    EXPECT_EQ(s->trace_sampler, "traceidratio");
    EXPECT_EQ(s->trace_sampler_arg, 0.01);
    EXPECT_EQ(s->trace_service_name, "edge-rl");
    const std::map<std::string, std::string> bad{{"OTEL_TRACES_SAMPLER", "jaeger_remote"}};
    EXPECT_FALSE(precedence({}, {bad.begin(), bad.end()}).has_value());
    const std::map<std::string, std::string> over{{"OTEL_TRACES_SAMPLER_ARG", "1.5"}};
    EXPECT_FALSE(precedence({}, {over.begin(), over.end()}).has_value());
}

}  // namespace
}  // namespace ratelimitd::config
