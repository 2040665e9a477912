// scan_header_block / sanitize_header_block: the header block before Beast sees it.
#include "ratelimitd/http/header_block.hpp"
#include "ratelimitd/core/byte_table.hpp"
#include "ratelimitd/http/crlf.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ratelimitd::http {

namespace {

// RFC 9110 §5.6.2 tchar: the bytes of a field name.
constexpr auto is_token_byte = byte_table([](unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
});

bool is_control(unsigned char c) noexcept { return (c < 0x20 && c != '\t') || c == 0x7f; }

bool valid_name(std::string_view name) noexcept {
    if (name.empty()) return false;
    for (char c : name) {
        if (!is_token_byte[static_cast<unsigned char>(c)]) return false;
    }
    return true;
}

bool has_control_bytewise(const char* p, std::size_t n) noexcept {
    for (std::size_t i = 0; i < n; ++i) {
        if (is_control(static_cast<unsigned char>(p[i]))) return true;
    }
    return false;
}

#if defined(__SSE2__)
/// Bit i set when byte i of the 16 at `p` is a control byte (is_control).
unsigned control_mask(const char* p) noexcept {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i below_space = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x);
    const __m128i tab = _mm_cmpeq_epi8(x, _mm_set1_epi8('\t'));
    const __m128i del = _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7f));
    return static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(_mm_andnot_si128(tab, below_space), del)));
}
#endif

/// Whether s holds a control byte, 16 bytes at a time where SSE2 is there (a field line was
/// judged a byte at a time: about a third of a check's header work). `readable_end` is where
/// the buffer s lies in ends: a last partial chunk is read whole when it lies before that end,
/// and only its first bytes are looked at.
bool has_control(std::string_view s, const char* readable_end) noexcept {
    const char* p = s.data();
    std::size_t n = s.size();
#if defined(__SSE2__)
    for (; n >= 16; p += 16, n -= 16) {
        if (control_mask(p) != 0) return true;
    }
    if (n > 0 && readable_end - p >= 16) return (control_mask(p) & ((1U << n) - 1)) != 0;
#else
    (void)readable_end;
#endif
    return has_control_bytewise(p, n);
}

/// True when a field line needs no change (a valid name, no control byte in the value; an
/// obs-fold line needs a field line before it). A name of token bytes holds no control byte,
/// so only what follows it is looked at again. The name is walked up to the first byte that is
/// not a token byte, which must be its colon (':' is not one): the same answer as finding the
/// first colon and judging the name before it, in one walk rather than a search and a walk.
bool clean_field(std::string_view line, bool continuation, bool first, const char* readable_end) noexcept {
    if (continuation) return !first && !has_control(line, readable_end);
    std::size_t colon = 0;
    while (colon < line.size() && is_token_byte[static_cast<unsigned char>(line[colon])]) ++colon;
    return colon > 0 && colon < line.size() && line[colon] == ':' &&
           !has_control({line.data() + colon, line.size() - colon}, readable_end);
}

}  // namespace

// Line by line, each LF found by memchr (not a byte at a time), each whole field line judged
// as sanitize_header_block's look-only pass judges it: the block is walked once before the
// parser, where it was walked twice (its end, then its field lines).
HeaderScan scan_header_block(std::string_view data, const HeaderScan& resume) noexcept {
    HeaderScan scan = resume;
    std::size_t line = resume.next_line;
    const std::size_t request_line_end = data.find('\n') + 1;  // 0 when not seen yet
    while (line < data.size()) {
        const void* lf = std::memchr(data.data() + line, '\n', data.size() - line);
        if (lf == nullptr) break;
        const auto i = static_cast<std::size_t>(static_cast<const char*>(lf) - data.data());
        if (i == 0 || data[i - 1] != '\r') return {HeaderScan::State::bare_lf, 0, false, 0};
        if (i == line + 1 && line > 0) return {HeaderScan::State::complete, i + 1, scan.clean, 0};
        if (line > 0 && scan.clean) {
            // Not the request line: a field line, the first one when it starts where the
            // request line ends (an obs-fold continuation there belongs to nothing).
            const std::string_view text = data.substr(line, i - 1 - line);
            const bool continuation = text.front() == ' ' || text.front() == '\t';
            scan.clean = clean_field(text, continuation, line == request_line_end, data.data() + data.size());
        }
        line = i + 1;
    }
    scan.next_line = line;
    return scan;
}

HeaderScan scan_header_block(std::string_view data, std::size_t from) noexcept {
    HeaderScan resume;
    // The line `from` is in: the bytes before it on that line are looked at again.
    const std::size_t lf = from == 0 ? std::string_view::npos : data.rfind('\n', std::min(from, data.size()) - 1);
    resume.next_line = lf == std::string_view::npos ? 0 : lf + 1;
    return scan_header_block(data, resume);
}

std::optional<std::string> sanitize_header_block(std::string_view block) {
    // block = request-line CRLF *(field-line CRLF) CRLF
    const auto first_end = block.find(crlf);
    if (first_end == std::string_view::npos) return std::nullopt;
    const std::string_view fields = block.substr(first_end + crlf.size());

    // The fast path: look only.
    bool dirty = false;
    for (std::size_t at = 0; at < fields.size() && !dirty;) {
        const auto end = fields.find(crlf, at);
        if (end == std::string_view::npos) break;
        const std::string_view line = fields.substr(at, end - at);
        if (line.empty()) break;
        const bool continuation = line.front() == ' ' || line.front() == '\t';
        dirty = !clean_field(line, continuation, at == 0, fields.data() + fields.size());
        at = end + crlf.size();
    }
    if (!dirty) return std::nullopt;

    std::string out(block.substr(0, first_end + crlf.size()));
    bool kept_previous = false;  // an obs-fold line belongs to the field line before it
    std::size_t at = 0;
    for (;;) {
        const auto end = fields.find(crlf, at);
        if (end == std::string_view::npos) break;
        const std::string_view line = fields.substr(at, end - at);
        at = end + crlf.size();
        if (line.empty()) break;
        const bool continuation = line.front() == ' ' || line.front() == '\t';
        const auto colon = line.find(':');
        const bool keep = continuation ? kept_previous
                                       : colon != std::string_view::npos && valid_name(line.substr(0, colon));
        kept_previous = keep;
        if (!keep) continue;
        for (char c : line) out.push_back(is_control(static_cast<unsigned char>(c)) ? ' ' : c);
        out.append(crlf);
    }
    out.append(crlf);
    return out;
}

}  // namespace ratelimitd::http
