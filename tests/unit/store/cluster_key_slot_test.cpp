// Redis Cluster hash slots: CRC16/XMODEM and hash tags, against values CLUSTER KEYSLOT answers.
#include "ratelimitd/store/redis/cluster/key_slot.hpp"

#include <gtest/gtest.h>

using namespace ratelimitd::store::redis::cluster;

TEST(Crc16, IsXmodem) {
    EXPECT_EQ(crc16("123456789"), 0x31C3);
    EXPECT_EQ(crc16(""), 0);
}

TEST(KeySlot, MatchesClusterKeyslot) {
    // Each value is what `CLUSTER KEYSLOT <key>` answered on redis-server 7.0.
    EXPECT_EQ(key_slot("123456789"), 12739);
    EXPECT_EQ(key_slot("somekey"), 11058);
    EXPECT_EQ(key_slot("foo"), 12182);
    EXPECT_EQ(key_slot("hello"), 866);
    EXPECT_EQ(key_slot(""), 0);
    EXPECT_EQ(key_slot("rl:p:{t1:global}:60"), 13392);
}

TEST(KeySlot, HonoursHashTags) {
    EXPECT_EQ(key_slot("foo{hash_tag}"), 2515);
    EXPECT_EQ(key_slot("bar{hash_tag}"), 2515);
    EXPECT_EQ(key_slot("{user1000}.following"), 3443);
    EXPECT_EQ(key_slot("{user1000}.following"), key_slot("user1000"));
    EXPECT_EQ(key_slot("foo{bar}{zap}"), 5061);         // the first tag only
    EXPECT_EQ(key_slot("foo{bar}{zap}"), key_slot("bar"));
    EXPECT_EQ(key_slot("foo{}{bar}"), 8363);            // an empty tag: the whole key
    EXPECT_EQ(key_slot("foo{}{bar}"), static_cast<int>(crc16("foo{}{bar}") & 16383));
    EXPECT_EQ(key_slot("foo{{bar}}zap"), 4015);         // tag "{bar"
    EXPECT_EQ(key_slot("foo{{bar}}zap"), key_slot("{bar"));
    EXPECT_EQ(key_slot("{}"), 15257);
    EXPECT_EQ(hash_tag("a{b"), "a{b");                  // unclosed: the whole key
}

TEST(KeySlot, MultiWindowKeysShareTheirTenantsSlot) {
    EXPECT_EQ(key_slot("rl:api:{t1:global}:60"), key_slot("rl:api:{t1:global}:3600"));
}
