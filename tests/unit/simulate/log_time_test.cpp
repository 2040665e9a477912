// Access-log timestamps: every form simulate reads, and the ones it must refuse.
#include "ratelimitd/simulate/log_time.hpp"

#include <gtest/gtest.h>

namespace ratelimitd::simulate {
namespace {

constexpr std::int64_t noon_utc = 1'764'590'400'000;  // 2025-12-01T12:00:00Z

TEST(LogTime, TimeLocalAppliesItsOffset) {
    EXPECT_EQ(parse_time_local("01/Dec/2025:12:00:00 +0000"), noon_utc);
    EXPECT_EQ(parse_time_local("01/Dec/2025:13:00:00 +0100"), noon_utc);
    EXPECT_EQ(parse_time_local("01/Dec/2025:04:30:00 -0730"), noon_utc);
    for (const char* bad : {"", "01/Dek/2025:12:00:00 +0000", "32/Dec/2025:12:00:00 +0000", "01/Dec/2025:24:00:00 +0000",
                            "01/Dec/2025:12:00:00 0000", "01/Dec/2025:12:00:00", "1/Dec/2025:12:00:00 +0000"}) {
        EXPECT_FALSE(parse_time_local(bad).has_value()) << bad;
    }
}

TEST(LogTime, Iso8601WithFractionAndZone) {
    EXPECT_EQ(parse_iso8601("2025-12-01T12:00:00Z"), noon_utc);
    EXPECT_EQ(parse_iso8601("2025-12-01T12:00:00.250Z"), noon_utc + 250);
    EXPECT_EQ(parse_iso8601("2025-12-01 14:00:00+02:00"), noon_utc);
    EXPECT_EQ(parse_iso8601("2025-12-01T12:00:00.5+00:00"), noon_utc + 500);
    for (const char* bad : {"2025-12-01T12:00:00", "2025-13-01T12:00:00Z", "2025-12-01T12:00:00.Z", "2025-02-30T12:00:00Z"}) {
        EXPECT_FALSE(parse_iso8601(bad).has_value()) << bad;
    }
}

TEST(LogTime, EpochSecondsAndAnyForm) {
    EXPECT_EQ(parse_epoch_seconds("1764590400.123"), noon_utc + 123);
    EXPECT_EQ(parse_epoch_seconds("1764590400"), noon_utc);
    EXPECT_FALSE(parse_epoch_seconds("17645904x").has_value());
    EXPECT_FALSE(parse_epoch_seconds("-5").has_value());
    EXPECT_EQ(parse_any_time("01/Dec/2025:12:00:00 +0000"), noon_utc);
    EXPECT_EQ(parse_any_time("2025-12-01T12:00:00Z"), noon_utc);
    EXPECT_EQ(parse_any_time("1764590400"), noon_utc);
}

TEST(LogTime, Rfc3339InUtcWithMillisecondsOnlyWhenThereAreSome) {
    EXPECT_EQ(format_rfc3339(noon_utc), "2025-12-01T12:00:00Z");
    EXPECT_EQ(format_rfc3339(noon_utc + 7), "2025-12-01T12:00:00.007Z");
    EXPECT_EQ(format_rfc3339(0), "1970-01-01T00:00:00Z");
}

}  // namespace
}  // namespace ratelimitd::simulate
