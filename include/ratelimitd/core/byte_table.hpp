// byte_table: a class of bytes as 256 flags made at compile time, for the scans that judge
// every byte of a request (header names, JSON strings, tenants, paths): one look-up a byte
// rather than the class's comparisons.
#pragma once

#include <array>

namespace ratelimitd {

template <class InClass>
constexpr std::array<bool, 256> byte_table(InClass in_class) {
    std::array<bool, 256> table{};
    for (unsigned c = 0; c < table.size(); ++c) table[c] = in_class(static_cast<unsigned char>(c));
    return table;
}

}  // namespace ratelimitd
