#pragma once

#include <algorithm>
#include <cctype>
#include <string>

namespace ratelimitd::test {

/// An HTTP header name in lower case: the key the test servers and clients file a received
/// header under (field names are case-insensitive).
inline std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

}  // namespace ratelimitd::test
