// The raw header block of a request, before Beast parses it: where it ends, and the bytes a
// proxy forwards but the parser would refuse, made harmless.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ratelimitd::http {

/// How much of a request's header block the bytes at the start of a buffer hold.
struct HeaderScan {
    enum class State {
        incomplete,  ///< no empty line yet: more bytes needed
        complete,    ///< the block ends at `end`, just past its empty line (CRLF CRLF)
        bare_lf,     ///< a LF without CR: not what a proxy sends; left to the parser to refuse
    };
    State state = State::incomplete;
    std::size_t end = 0;
    /// Every field line seen whole needs nothing from sanitize_header_block (a valid name, no
    /// control byte): when the block is complete and this is true, sanitize_header_block would
    /// return nullopt, so the block needs no second pass before the parser.
    bool clean = true;
    /// incomplete: where the first line not yet seen whole starts (a resumed scan starts there).
    std::size_t next_line = 0;
};

/// Finds the end of the header block at the start of `data`, looking from byte `from` on (the
/// bytes before it were scanned already and found incomplete: a slow client's request is
/// scanned once, not once per read). Never throws. `clean` covers only the lines that start
/// at or after `from`'s line.
[[nodiscard]] HeaderScan scan_header_block(std::string_view data, std::size_t from = 0) noexcept;

/// The same, resuming an incomplete scan of the same bytes (more appended since): in one pass
/// it finds the block's end and judges its field lines as sanitize_header_block's check does.
[[nodiscard]] HeaderScan scan_header_block(std::string_view data, const HeaderScan& resume) noexcept;

/// The header block `block` (request line, field lines, empty line) with what nginx and other
/// proxies accept and forward but the HTTP parser refuses made harmless, or nullopt when it
/// needs nothing (the common case):
///   - a field line whose name is not a token (RFC 9110 §5.1: "X Junk", "X(é)", no colon) is
///     dropped, with its obs-fold continuation lines: no such name is one ratelimitd reads;
///   - in a field value, each control byte other than HTAB (NUL, \x01..\x1f, DEL, a CR or LF
///     not ending the line) becomes SP, as RFC 9110 §5.5 allows a recipient to do.
/// The request line is left as it is. So ratelimitd never refuses a request because of a
/// header it does not read, and a header it reads is read with those bytes as spaces.
[[nodiscard]] std::optional<std::string> sanitize_header_block(std::string_view block);

}  // namespace ratelimitd::http
