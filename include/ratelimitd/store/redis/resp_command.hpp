// A command in RESP, written straight into the bytes that go to Redis: no hiredis formatting
// (it calls sprintf per argument and allocates the result), no intermediate argument vector.
#pragma once

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

}  // namespace ratelimitd::store::redis
