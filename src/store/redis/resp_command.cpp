// RESP encoding: "*<n>\r\n", then "$<length>\r\n<bytes>\r\n" per argument.
#include "ratelimitd/store/redis/resp_command.hpp"

#include <charconv>

namespace ratelimitd::store::redis {

namespace {

// "<marker><n>\r\n"; 20 digits hold any size_t.
void append_header(std::string& out, char marker, std::size_t n) {
    char digits[24];
    digits[0] = marker;
    const auto end = std::to_chars(digits + 1, digits + sizeof digits - 2, n).ptr;
    end[0] = '\r';
    end[1] = '\n';
    out.append(digits, static_cast<std::size_t>(end + 2 - digits));
}

void append_bulk(std::string& out, std::string_view arg) {
    append_header(out, '$', arg.size());
    out.append(arg);
    out.append("\r\n", 2);
}

// Bytes of the command, within a few per argument: enough to grow `out` once.
std::size_t estimate(std::initializer_list<std::string_view> head, std::span<const std::string> tail) {
    constexpr std::size_t framing = 16;  // "$", the length's digits, two "\r\n"
    std::size_t bytes = framing;
    for (const auto arg : head) bytes += arg.size() + framing;
    for (const auto& arg : tail) bytes += arg.size() + framing;
    return bytes;
}

}  // namespace

void append_command(std::string& out, std::initializer_list<std::string_view> head,
                    std::span<const std::string> tail) {
    out.reserve(out.size() + estimate(head, tail));
    append_header(out, '*', head.size() + tail.size());
    for (const auto arg : head) append_bulk(out, arg);
    for (const auto& arg : tail) append_bulk(out, arg);
}

}  // namespace ratelimitd::store::redis
