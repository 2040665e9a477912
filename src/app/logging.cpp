// setup_logging: stderr sink, text or JSON lines.
#include "ratelimitd/app/logging.hpp"

#include "ratelimitd/core/hex.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace ratelimitd::app {

namespace {

/// %j: the message with JSON string escaping, so a quote in a message cannot break a line.
class JsonEscapedMessage final : public spdlog::custom_flag_formatter {
public:
    void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
        for (char c : std::string_view(msg.payload.data(), msg.payload.size())) {
            switch (c) {
            case '"': dest.append(std::string_view("\\\"")); break;
            case '\\': dest.append(std::string_view("\\\\")); break;
            case '\n': dest.append(std::string_view("\\n")); break;
            case '\r': dest.append(std::string_view("\\r")); break;
            case '\t': dest.append(std::string_view("\\t")); break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    const char esc[] = {'\\', 'u', '0', '0', hex_digit(c >> 4), hex_digit(c)};
                    dest.append(esc, esc + sizeof esc);
                } else {
                    dest.push_back(c);
                }
            }
        }
    }
    std::unique_ptr<custom_flag_formatter> clone() const override {
        return std::make_unique<JsonEscapedMessage>();
    }
};

}  // namespace

void setup_logging(std::string_view level, std::string_view format) {
    auto logger = std::make_shared<spdlog::logger>("ratelimitd",
                                                   std::make_shared<spdlog::sinks::stderr_sink_mt>());
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    if (format == "json") {
        formatter->add_flag<JsonEscapedMessage>('j').set_pattern(
            R"({"ts":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","msg":"%j"})");
    } else {
        formatter->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %l %v");
    }
    logger->set_formatter(std::move(formatter));
    logger->set_level(spdlog::level::from_str(std::string(level)));
    logger->flush_on(spdlog::level::trace);  // a line must be visible as soon as it is logged
    spdlog::set_default_logger(std::move(logger));
}

}  // namespace ratelimitd::app
