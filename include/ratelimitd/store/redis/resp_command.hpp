// A command in RESP, written straight into the bytes that go to Redis: no hiredis formatting
// (it calls sprintf per argument and allocates the result), no intermediate argument vector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace ratelimitd::store::redis {

/// Appends one command to `out` as a RESP array of bulk strings: `head`, then `tail`.
/// EVALSHA's name and digest go in `head`, so the script's arguments are never copied or
/// shifted to make room for them.
void append_command(std::string& out, std::initializer_list<std::string_view> head,
                    std::span<const std::string> tail = {});

/// The pieces, for a caller that writes its arguments from its own fields (ScriptArgs):
/// "*<n>\r\n", the header of a command of `n` bulk strings.
void append_array_header(std::string& out, std::size_t n);
/// "$<length>\r\n<bytes>\r\n".
void append_bulk(std::string& out, std::string_view arg);
/// A number as a bulk string, its digits written by std::to_chars (no std::string for it).
void append_bulk(std::string& out, std::int64_t n);

}  // namespace ratelimitd::store::redis
