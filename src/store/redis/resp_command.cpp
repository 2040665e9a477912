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

// Bytes of the command, within a few per argument: enough to grow `out` once.
std::size_t estimate(std::initializer_list<std::string_view> head, std::span<const std::string> tail) {
    constexpr std::size_t framing = 16;  // "$", the length's digits, two "\r\n"
    std::size_t bytes = framing;
    for (const auto arg : head) bytes += arg.size() + framing;
    for (const auto& arg : tail) bytes += arg.size() + framing;
    return bytes;
}

}  // namespace

void append_array_header(std::string& out, std::size_t n) { append_header(out, '*', n); }

void append_bulk(std::string& out, std::string_view arg) {
    append_header(out, '$', arg.size());
    out.append(arg);
    out.append("\r\n", 2);
}

void append_bulk(std::string& out, std::int64_t n) {
    // "$<1 or 2 digits>\r\n<up to 20 characters>\r\n" in one buffer, appended once.
    char wire[32];
    char digits[24];
    const auto digits_end = std::to_chars(digits, digits + sizeof digits, n).ptr;
    const auto length = static_cast<std::size_t>(digits_end - digits);
    char* at = wire;
    *at++ = '$';
    at = std::to_chars(at, wire + sizeof wire, length).ptr;
    *at++ = '\r';
    *at++ = '\n';
    for (const char* d = digits; d != digits_end; ++d) *at++ = *d;
    *at++ = '\r';
    *at++ = '\n';
    out.append(wire, static_cast<std::size_t>(at - wire));
}

void append_command(std::string& out, std::initializer_list<std::string_view> head,
                    std::span<const std::string> tail) {
    out.reserve(out.size() + estimate(head, tail));
    append_header(out, '*', head.size() + tail.size());
    for (const auto arg : head) append_bulk(out, arg);
    for (const auto& arg : tail) append_bulk(out, std::string_view(arg));
}

}  // namespace ratelimitd::store::redis
