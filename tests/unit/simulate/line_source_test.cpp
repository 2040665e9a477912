// LineSource: a line longer than max_line is handed out empty and flagged, the rest of it
// skipped, and the lines around it come out whole (issue 45: a 9 MB gzip of one 2 GB line made
// simulate peak at 3.2 GB).
#include "ratelimitd/simulate/line_source.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace ratelimitd::simulate {
namespace {

struct Line {
    std::string text;
    bool too_long;
};

class LineSourceTest : public ::testing::Test {
protected:
    void SetUp() override {
        path_ = ::testing::TempDir() + "line_source_" + std::to_string(::getpid()) + ".log";
    }
    void TearDown() override { std::remove(path_.c_str()); }

    std::vector<Line> read_all(const std::string& content) {
        std::ofstream(path_, std::ios::binary) << content;
        LineSource source(path_);
        std::vector<Line> out;
        std::string_view line;
        while (source.next(line)) out.push_back({std::string(line), source.line_too_long()});
        EXPECT_EQ(source.lines_read(), out.size());
        return out;
    }

    std::string path_;
};

TEST_F(LineSourceTest, ALineLongerThanTheBoundComesOutEmptyAndFlaggedAndTheNextLineIsWhole) {
    const std::string huge(5 * 1024 * 1024, 'x');  // five blocks' worth of one line
    const auto lines = read_all("first\n" + huge + "\nsecond\r\n");
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0].text, "first");
    EXPECT_FALSE(lines[0].too_long);
    EXPECT_EQ(lines[1].text, "");
    EXPECT_TRUE(lines[1].too_long);
    EXPECT_EQ(lines[2].text, "second");
    EXPECT_FALSE(lines[2].too_long);
}

TEST_F(LineSourceTest, ALineOfExactlyTheBoundIsALine) {
    const std::string at_bound(LineSource::max_line, 'a');
    const std::string over(LineSource::max_line + 1, 'b');
    const auto lines = read_all(at_bound + "\n" + over + "\nend");
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0].text, at_bound);
    EXPECT_FALSE(lines[0].too_long);
    EXPECT_TRUE(lines[1].too_long);
    EXPECT_EQ(lines[2].text, "end");
}

TEST_F(LineSourceTest, AnOverLongLastLineWithoutNewlineEndsTheLog) {
    const auto lines = read_all("one\n" + std::string(200 * 1024, 'z'));
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].text, "one");
    EXPECT_TRUE(lines[1].too_long);
}

}  // namespace
}  // namespace ratelimitd::simulate
