// Percent-encoding and -decoding (RFC 3986 §2.1), the one encoder and the one decoder of the
// project: their callers differ only in the bytes they keep and the options they pass.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ratelimitd {

/// What to do with a '%' that is not followed by two hex digits.
enum class MalformedPercent {
    reject,  ///< the whole text is invalid (so no two spellings can mean different things)
    keep,    ///< the '%' stays a '%' byte and decoding goes on (a path as a backend reads it)
};

struct PercentOptions {
    bool plus_is_space = false;  ///< application/x-www-form-urlencoded: '+' is a space
    MalformedPercent malformed = MalformedPercent::reject;
};

/// Whether an encoding writes byte `c` as it is; every other byte becomes %XX.
using PercentKeeps = bool (*)(unsigned char c) noexcept;

/// Appends `text` to `out`, each byte `keeps` refuses as %XX in upper-case hex ('%' itself
/// among them, unless it is kept). Never throws but for std::bad_alloc.
void percent_encode_into(std::string& out, std::string_view text, PercentKeeps keeps);

/// `text` percent-encoded as percent_encode_into writes it.
[[nodiscard]] std::string percent_encode(std::string_view text, PercentKeeps keeps);

/// 0..15 for a hex digit (either case), else -1.
[[nodiscard]] int hex_digit_value(char c) noexcept;

/// Every %XY decoded once (a decoded '%' is not decoded again). nullopt only when
/// `options.malformed` is reject and some '%' lacks its two hex digits. Never throws but for
/// std::bad_alloc.
[[nodiscard]] std::optional<std::string> percent_decode(std::string_view text, PercentOptions options = {});

}  // namespace ratelimitd
