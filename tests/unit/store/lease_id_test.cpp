// Lease ids: 128 random bits in hex, never repeating, and the shape check release relies on.
#include "ratelimitd/store/lease_id.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

using ratelimitd::store::is_lease_id;
using ratelimitd::store::new_lease_id;

TEST(LeaseId, IsThirtyTwoLowerCaseHexDigitsAndNeverRepeats) {
    std::set<std::string> seen;
    std::set<char> digits;
    for (int i = 0; i < 10'000; ++i) {
        const std::string id = new_lease_id();
        ASSERT_TRUE(is_lease_id(id)) << id;
        digits.insert(id.begin(), id.end());
        seen.insert(id);
    }
    EXPECT_EQ(seen.size(), 10'000u);
    EXPECT_EQ(digits.size(), 16u) << "every hex digit turns up: the bits are not stuck";
}

TEST(LeaseId, TheShapeCheckRefusesAnythingElse) {
    EXPECT_FALSE(is_lease_id(""));
    EXPECT_FALSE(is_lease_id(std::string(31, 'a')));
    EXPECT_FALSE(is_lease_id(std::string(33, 'a')));
    EXPECT_FALSE(is_lease_id(std::string(32, 'A')));
    EXPECT_FALSE(is_lease_id(std::string(31, 'a') + "g"));
    EXPECT_TRUE(is_lease_id(std::string(32, '0')));
}

}  // namespace
