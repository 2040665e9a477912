// setup_logging: stderr sink, text or JSON lines.
#include "ratelimitd/app/logging.hpp"

#include "ratelimitd/app/log_fields.hpp"
#include "ratelimitd/core/hex.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace ratelimitd::app {

namespace {

/// `text` as the inside of a JSON string: a quote or a control byte in a message or a value
/// cannot break the line.
void append_json_escaped(std::string_view text, spdlog::memory_buf_t& dest) {
    for (char c : text) {
        switch (c) {
        case '"': dest.append(std::string_view("\\\"")); break;
        case '\\': dest.append(std::string_view("\\\\")); break;
        case '\n': dest.append(std::string_view("\\n")); break;
        case '\r': dest.append(std::string_view("\\r")); break;
        case '\t': dest.append(std::string_view("\\t")); break;
        default:
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                const char esc[] = {'\\', 'u', '0', '0', hex_digit(static_cast<unsigned char>(c) >> 4),
                                    hex_digit(static_cast<unsigned char>(c) & 0xf)};
                dest.append(esc, esc + sizeof esc);
            } else {
                dest.push_back(c);
            }
        }
    }
}

void append_json_member(std::string_view key, std::string_view value, spdlog::memory_buf_t& dest) {
    dest.push_back('"');
    append_json_escaped(key, dest);
    dest.append(std::string_view("\":\""));
    append_json_escaped(value, dest);
    dest.push_back('"');
}

/// %j: "msg":"<event text>" then one member per key=value field of the message, so a log
/// store can query `policy` or `outcome` without parsing msg (split_log_message).
class JsonMessageFields final : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
        const SplitMessage split = split_log_message(std::string_view(msg.payload.data(), msg.payload.size()));
        append_json_member("msg", split.text, dest);
        for (const LogField& field : split.fields) {
            dest.push_back(',');
            append_json_member(field.key, field.value, dest);
        }
    }
    std::unique_ptr<custom_flag_formatter> clone() const override {
        return std::make_unique<JsonMessageFields>();
    }
};

}  // namespace

std::unique_ptr<spdlog::formatter> make_log_formatter(std::string_view format) {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    if (format == "json") {
        formatter->add_flag<JsonMessageFields>('j').set_pattern(
            R"({"ts":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l",%j})");
    } else {
        formatter->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %l %v");
    }
    return formatter;
}

void setup_logging(std::string_view level, std::string_view format) {
    auto logger = std::make_shared<spdlog::logger>("ratelimitd",
                                                   std::make_shared<spdlog::sinks::stderr_sink_mt>());
    logger->set_formatter(make_log_formatter(format));
    logger->set_level(spdlog::level::from_str(std::string(level)));
    logger->flush_on(spdlog::level::trace);  // a line must be visible as soon as it is logged
    spdlog::set_default_logger(std::move(logger));
}

}  // namespace ratelimitd::app
