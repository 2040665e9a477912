// A script call's arguments as Redis reads them, for the argument writers' tests.
#pragma once

#include "ratelimitd/store/redis/resp_command.hpp"
#include "ratelimitd/store/redis/script_args.hpp"
#include "ratelimitd/store/redis/value_reader.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ratelimitd::test {

/// The RESP array count() announces and append_to() fills, parsed back (a RESP command is a
/// valid reply), with nothing left over, so a wrong count() fails the calling test too.
inline std::vector<std::string> sent_argv(const store::redis::ScriptArgs& call) {
    using store::redis::Value;
    using store::redis::ValueReader;
    std::string wire;
    store::redis::append_array_header(wire, call.count());
    call.append_to(wire);
    ValueReader reader;
    EXPECT_TRUE(reader.feed(wire.data(), wire.size()));
    Value v;
    EXPECT_EQ(reader.next(v), ValueReader::Status::reply);
    Value rest;
    EXPECT_EQ(reader.next(rest), ValueReader::Status::incomplete) << "bytes beyond the announced count";
    std::vector<std::string> argv;
    for (const auto& e : v.elements) argv.push_back(e.str);
    return argv;
}

}  // namespace ratelimitd::test
