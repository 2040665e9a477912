// next_query_item: the items of a query in order, undecoded, split at the first =, empty ones skipped.
#include "ratelimitd/core/query_string.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace ratelimitd {
namespace {

std::vector<std::pair<std::string, std::string>> items_of(std::string_view query) {
    std::vector<std::pair<std::string, std::string>> out;
    while (const auto item = next_query_item(query)) out.emplace_back(item->name, item->value);
    return out;
}

using Items = std::vector<std::pair<std::string, std::string>>;

TEST(QueryString, NamesAndValuesComeUndecodedInTheirOrder) {
    EXPECT_EQ(items_of("a=1&b=%20x&a=3"), (Items{{"a", "1"}, {"b", "%20x"}, {"a", "3"}}));
}

TEST(QueryString, OnlyTheFirstEqualsSplits) { EXPECT_EQ(items_of("k=a=b"), (Items{{"k", "a=b"}})); }

TEST(QueryString, ABareNameHasAnEmptyValue) { EXPECT_EQ(items_of("flag&x="), (Items{{"flag", ""}, {"x", ""}})); }

TEST(QueryString, EmptyItemsAreSkipped) {
    EXPECT_EQ(items_of("&&a=1&&&b=2&"), (Items{{"a", "1"}, {"b", "2"}}));
    EXPECT_TRUE(items_of("").empty());
    EXPECT_TRUE(items_of("&&&").empty());
}

TEST(QueryString, AnItemOfOnlyAValueHasAnEmptyName) { EXPECT_EQ(items_of("=v"), (Items{{"", "v"}})); }

}  // namespace
}  // namespace ratelimitd
