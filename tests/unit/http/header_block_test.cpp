// The header block before Beast: where it ends, and what proxies forward but Beast refuses.
#include "ratelimitd/http/header_block.hpp"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace ratelimitd::http {
namespace {

namespace bhttp = boost::beast::http;
using State = HeaderScan::State;

// What Beast makes of a whole request: the parse error, and the request when it parsed.
struct Parsed {
    boost::beast::error_code ec;
    bhttp::request<bhttp::string_body> req;
};

Parsed beast_parse(std::string_view wire) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.eager(true);
    Parsed out;
    parser.put(boost::asio::buffer(wire.data(), wire.size()), out.ec);
    if (!out.ec) out.req = parser.release();
    return out;
}

std::string cleaned(std::string_view block) { return sanitize_header_block(block).value_or(std::string(block)); }

TEST(HeaderScan, FindsTheEmptyLineOrSaysWhatIsMissing) {
    EXPECT_EQ(scan_header_block("GET / HTTP/1.1\r\nHost: a\r\n").state, State::incomplete);
    EXPECT_EQ(scan_header_block("").state, State::incomplete);
    const auto done = scan_header_block("GET / HTTP/1.1\r\nHost: a\r\n\r\nbody");
    EXPECT_EQ(done.state, State::complete);
    EXPECT_EQ(done.end, std::strlen("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
    EXPECT_EQ(scan_header_block("GET / HTTP/1.1\r\nHost: a\n\n").state, State::bare_lf);
    EXPECT_EQ(scan_header_block("\n").state, State::bare_lf);
    // Resuming after bytes already scanned still sees an empty line that straddles them.
    const std::string split = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
    EXPECT_EQ(scan_header_block(split, split.size() - 2).end, split.size());
    EXPECT_EQ(scan_header_block(split, split.size() - 1).end, split.size());
}

TEST(HeaderSanitizer, ACleanBlockIsLeftAlone) {
    EXPECT_EQ(sanitize_header_block("GET / HTTP/1.1\r\nHost: a\r\nX-Api-Key: k\xc3\xa9y\t1\r\n\r\n"), std::nullopt);
    EXPECT_EQ(sanitize_header_block("GET / HTTP/1.1\r\n\r\n"), std::nullopt);
}

TEST(HeaderSanitizer, ControlBytesInValuesBecomeSpaces) {
    EXPECT_EQ(cleaned("GET / HTTP/1.1\r\nX-Junk: a\x01" "b\x7f\x1b[\r\nHost: a\r\n\r\n"),
              "GET / HTTP/1.1\r\nX-Junk: a b  [\r\nHost: a\r\n\r\n");
    static constexpr char with_nul[] = "GET / HTTP/1.1\r\nX-Junk: a\0b\rc\nd\r\n\r\n";
    EXPECT_EQ(cleaned(std::string(with_nul, sizeof with_nul - 1)),
              "GET / HTTP/1.1\r\nX-Junk: a b c d\r\n\r\n");
}

TEST(HeaderSanitizer, LinesWithInvalidNamesAreDroppedWithTheirContinuations) {
    EXPECT_EQ(cleaned("GET / HTTP/1.1\r\nX Junk: 1\r\n  folded\r\nX(\xc3\xa9): 2\r\nno colon\r\n: empty\r\n"
                      "Host: a\r\n\tfolded too\r\n\r\n"),
              "GET / HTTP/1.1\r\nHost: a\r\n\tfolded too\r\n\r\n");
    // A continuation right after the request line belongs to no field.
    EXPECT_EQ(cleaned("GET / HTTP/1.1\r\n bad\r\nHost: a\r\n\r\n"), "GET / HTTP/1.1\r\nHost: a\r\n\r\n");
}

TEST(HeaderSanitizer, TheRequestLineIsNotTouched) {
    const std::string block = "GET /\x01 HTTP/1.1\r\nX-Junk: \x01\r\n\r\n";
    EXPECT_EQ(cleaned(block), "GET /\x01 HTTP/1.1\r\nX-Junk:  \r\n\r\n");
}

TEST(HeaderSanitizer, WhatBeastRefusesItParsesAfterwardsWithTheHeadersItReads) {
    const std::string wire = "GET /v1/auth HTTP/1.1\r\nHost: a\r\nX-Junk: a\x01" "b\r\nX(Junk): 1\r\n"
                             "X-Api-Key: key\x01" "end\r\nX-Original-URI: /api/caf\xc3\xa9\r\n\r\n";
    EXPECT_TRUE(beast_parse(wire).ec);  // what ratelimitd answered 400 to, before
    const auto end = scan_header_block(wire).end;
    const auto after = beast_parse(cleaned(wire.substr(0, end)) + wire.substr(end));
    ASSERT_FALSE(after.ec) << after.ec.message();
    EXPECT_EQ(after.req["X-Api-Key"], "key end");
    EXPECT_EQ(after.req["X-Original-URI"], "/api/caf\xc3\xa9");
    EXPECT_EQ(after.req["X-Junk"], "a b");
    EXPECT_EQ(after.req.count("X(Junk)"), 0u);
}

TEST(HeaderSanitizer, EveryByteInAnyValueParses) {
    for (int c = 0; c < 256; ++c) {
        std::string block = "GET / HTTP/1.1\r\nX-Byte: a";
        block.push_back(static_cast<char>(c));
        block += "b\r\n\r\n";
        const auto parsed = beast_parse(cleaned(block));
        EXPECT_FALSE(parsed.ec) << "byte " << c << ": " << parsed.ec.message();
    }
}

TEST(HeaderSanitizer, RandomFieldLinesAlwaysParseAfterwards) {
    // Whatever bytes a client puts in its field lines (framing aside), the parser accepts the
    // cleaned block: it can no longer be made to answer an error for them.
    std::mt19937 rng(20261201);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_int_distribution<int> length(0, 40);
    for (int round = 0; round < 20000; ++round) {
        std::string block = "GET /v1/auth HTTP/1.1\r\n";
        const int lines = length(rng) % 6;
        for (int l = 0; l < lines; ++l) {
            std::string line;
            for (int i = length(rng); i > 0; --i) line.push_back(static_cast<char>(byte(rng)));
            if (round % 2 == 0) line = "X-Api-Key: " + line;  // half with a valid name
            // CRLF only as framing: a CR or LF inside a line stays a byte of the line.
            if (line == "" || line.find("\r\n") != std::string::npos) continue;
            block += line + "\r\n";
        }
        block += "\r\n";
        if (scan_header_block(block).end != block.size()) continue;  // framing of its own
        const auto parsed = beast_parse(cleaned(block));
        ASSERT_FALSE(parsed.ec) << parsed.ec.message() << " for round " << round;
    }
}

TEST(HeaderScan, JudgesTheFieldLinesInOnePassAsTheSanitizerDoes) {
    // The session sends a block the scan called clean straight to the parser, so "clean" must
    // be exactly "the sanitizer changes nothing", however the bytes arrived: whole, or in two
    // reads split at any byte (the second scan resuming the first).
    std::mt19937 rng(20261206);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_int_distribution<int> length(0, 12);
    int clean = 0;
    int dirty = 0;
    for (int round = 0; round < 3000; ++round) {
        std::string block = "GET /v1/auth HTTP/1.1\r\n";
        for (int l = length(rng) % 5; l > 0; --l) {
            std::string line = round % 3 == 0 ? "X-Key: " : (round % 3 == 1 ? " folded " : "");
            // Mostly plain bytes, so that clean blocks are common too.
            for (int i = length(rng); i > 0; --i) {
                const int b = byte(rng);
                line.push_back(b < 200 ? static_cast<char>('a' + b % 26) : static_cast<char>(b));
            }
            if (line.empty() || line.find('\n') != std::string::npos) continue;
            block += line + "\r\n";
        }
        block += "\r\n";
        const HeaderScan whole = scan_header_block(block);
        if (whole.state != State::complete || whole.end != block.size()) continue;
        const bool sanitizer_changes_nothing = !sanitize_header_block(block).has_value();
        EXPECT_EQ(whole.clean, sanitizer_changes_nothing) << "round " << round;
        (whole.clean ? clean : dirty) += 1;
        const std::size_t split = static_cast<std::size_t>(byte(rng)) % block.size();
        const HeaderScan first = scan_header_block(std::string_view(block).substr(0, split));
        ASSERT_EQ(first.state, State::incomplete);
        const HeaderScan resumed = scan_header_block(block, first);
        EXPECT_EQ(resumed.state, State::complete);
        EXPECT_EQ(resumed.end, block.size());
        EXPECT_EQ(resumed.clean, sanitizer_changes_nothing) << "round " << round << ", split at " << split;
    }
    EXPECT_GT(clean, 100);
    EXPECT_GT(dirty, 100);
}


TEST(HeaderScan, FindsAControlByteAtAnyPlaceOfALongValue) {
    // Values are judged 16 bytes at a time: a control byte in any place of a chunk, or of the
    // last partial one, makes the line dirty; the CR that ends the line, read with its last
    // chunk, does not.
    const std::string control = std::string("\x01\x1f\x7f\0\r", 5);
    const std::string plain = "\t \x80\xff~";
    for (const std::size_t length : {1, 15, 16, 17, 31, 32, 33, 47, 70}) {
        const std::string clean_block = "GET / HTTP/1.1\r\nX-Key: " + std::string(length, 'v') + "\r\nHost: a\r\n\r\n";
        EXPECT_TRUE(scan_header_block(clean_block).clean) << length;
        for (std::size_t at = 0; at < length; ++at) {
            for (const char c : control + plain) {
                std::string value(length, 'v');
                value[at] = c;
                const std::string block = "GET / HTTP/1.1\r\nX-Key: " + value + "\r\nHost: a\r\n\r\n";
                const bool is_control = control.find(c) != std::string::npos;
                EXPECT_EQ(scan_header_block(block).clean, !is_control)
                    << "byte " << static_cast<int>(static_cast<unsigned char>(c)) << " at " << at << " of " << length;
                EXPECT_EQ(sanitize_header_block(block).has_value(), is_control);
            }
        }
    }
}

}  // namespace
}  // namespace ratelimitd::http
