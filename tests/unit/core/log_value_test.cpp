// log_value: any text becomes one quoted word that the log's field splitter reads back.
#include "ratelimitd/core/log_value.hpp"

#include <gtest/gtest.h>

namespace ratelimitd {
namespace {

TEST(LogValue, QuotesAndEscapes) {
    EXPECT_EQ(log_value(""), "\"\"");
    EXPECT_EQ(log_value("no reply in 50 ms"), "\"no reply in 50 ms\"");
    EXPECT_EQ(log_value("say \"hi\" \\ now"), R"("say \"hi\" \\ now")");
    EXPECT_EQ(log_value(std::string("a\nb\x01") + '\0' + "\xff"), R"("a\x0ab\x01\x00\xff")");
    EXPECT_EQ(log_value("k=v k2=v2"), "\"k=v k2=v2\"");
}

}  // namespace
}  // namespace ratelimitd
