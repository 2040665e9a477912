// parse_config against hostile syntax: whatever the text, a ConfigError naming the file, never
// another exception and never the text itself.
#include "ratelimitd/policy/registry_loader.hpp"

#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using ratelimitd::policy::ConfigError;

/// Whatever the text, parse_config refuses it with a ConfigError or loads it: nothing else.
std::string refusal_of(std::string_view text, const std::string& name) {
    try {
        ratelimitd::policy::parse_config(text, name);
    } catch (const ConfigError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("ESCAPED: ") + e.what();
    }
    return "(loaded without error)";
}

TEST(ParseConfigSyntax, MalformedLinesNeverEchoTheirText) {
    const std::string policy = R"("policies": {"p": {"algorithm": "fixed_window", "limit": 1, "window": "1s"}})";
    for (const std::string& text : {
             "{" + policy + ", \"admin_token\": hunter2-secret-token}",
             "{" + policy + ", \"hash_secret\": \"hunter2-secret\x01token\"}",
             "{" + policy + ", \"redis\": \"redis://:hunter2-secret@db:6379\\x\"}",
             "{" + policy + ", \"admin_token\": 1e999999hunter2}",
             "{" + policy + ", \"admin_token\" \"hunter2-secret-token\"}",
         }) {
        const std::string msg = refusal_of(text, "s.json");
        EXPECT_EQ(msg.find("hunter2"), std::string::npos) << msg;
        EXPECT_TRUE(msg.starts_with("s.json: line 1, column ")) << msg;
    }
    const std::string yaml = refusal_of("policies: {p: 1}\nhash_secret: \"hunter2-\\q-secret\"\n", "s.yaml");
    EXPECT_EQ(yaml.find("hunter2"), std::string::npos) << yaml;
    EXPECT_TRUE(yaml.starts_with("s.yaml: line 2, column ")) << yaml;
}

TEST(ParseConfigSyntax, HostileDocumentsAreRefusedNotThrown) {
    const std::string deep_json(200'000, '[');
    const std::string deep_yaml = "x: " + std::string(200'000, '[');
    const std::string wide_json = "[" + [] {
        std::string s;
        for (int i = 0; i < 1'000'001; ++i) s += "1,";
        return s;
    }() + "1]";
    for (const auto& [text, name] : std::vector<std::pair<std::string, std::string>>{
             {R"({"policies": {"p": {"limit": -1e400}}})", "n.json"},
             {"\"\\ud800\"", "u.json"},
             {"policies: \"\xff\xfe\"\n", "u.yaml"},
             {std::string("policies:\0\n", 11), "z.yaml"},
             {deep_json, "d.json"},
             {deep_yaml, "d.yaml"},
             {wide_json, "w.json"},
             {"a: &a [1, 2]\nb: *a\nc: *unknown\n", "a.yaml"},
         }) {
        const std::string msg = refusal_of(text, name);
        EXPECT_TRUE(msg.starts_with(name + ": ")) << msg;
    }
    EXPECT_EQ(refusal_of(wide_json, "w.json"),
              "w.json: [999999]: more than 1000000 values (the bound of a config file, YAML aliases expanded)");
}

TEST(ParseConfigSyntax, DocumentSizeIsBounded) {
    const std::string big(16 * 1024 * 1024 + 1, ' ');
    EXPECT_EQ(refusal_of(big, "big.yaml"), "big.yaml: larger than 16 MiB (the bound of a config file)");
}

TEST(ParseConfigSyntax, DepthUpToTheBoundIsRead) {
    const std::string policy = R"("policies": {"p": {"algorithm": "fixed_window", "limit": 1, "window": "1s"}})";
    // 64 levels: the top-level map and 63 lists; refused by the schema (unknown key), not the bound.
    const std::string text = "{" + policy + ", \"x\": " + std::string(63, '[') + std::string(63, ']') + "}";
    EXPECT_EQ(refusal_of(text, "d.json").find("nested deeper"), std::string::npos) << refusal_of(text, "d.json");
}

}  // namespace
