// ResponseQueue without a stream: a response that finds nothing applying starts at once; those
// that arrive while one applies wait, the newest replacing (and naming) the one it supersedes;
// done() starts the waiting one; close() ends take().
#include "ratelimitd/xds/response_queue.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace ratelimitd::xds {
namespace {

ReceivedResponse version(const std::string& v) {
    ReceivedResponse r;
    r.response.set_version_info(v);
    r.received = std::chrono::steady_clock::now();
    return r;
}

TEST(ResponseQueue, OneArrivingWhileNoneAppliesStartsAtOnceEvenBeforeItIsTaken) {
    ResponseQueue q;
    EXPECT_FALSE(q.put(version("v1")));
    // v2 arrives before the applying thread took v1: v1 still starts (it found nothing
    // applying), v2 waits behind it.
    EXPECT_FALSE(q.put(version("v2")));
    auto first = q.take();
    ASSERT_TRUE(first);
    EXPECT_EQ(first->response.version_info(), "v1");
    q.done();
    auto second = q.take();
    ASSERT_TRUE(second);
    EXPECT_EQ(second->response.version_info(), "v2");
}

TEST(ResponseQueue, VersionsArrivingWhileOneAppliesAreDroppedButTheNewest) {
    ResponseQueue q;
    q.put(version("v1"));
    ASSERT_EQ(q.take()->response.version_info(), "v1");
    EXPECT_FALSE(q.put(version("v2")));
    EXPECT_EQ(q.put(version("v3")), std::optional<std::string>("v2"));
    EXPECT_EQ(q.put(version("v4")), std::optional<std::string>("v3"));
    q.done();  // v1 answered
    auto next = q.take();
    ASSERT_TRUE(next);
    EXPECT_EQ(next->response.version_info(), "v4");
    q.done();
    // Nothing applies now: the next one starts at once again, superseding nothing.
    EXPECT_FALSE(q.put(version("v5")));
    EXPECT_EQ(q.take()->response.version_info(), "v5");
}

TEST(ResponseQueue, CloseDropsWhatIsLeft) {
    ResponseQueue q;
    q.put(version("v1"));
    ASSERT_TRUE(q.take());
    q.put(version("v2"));  // waits behind v1
    q.close();             // the stream ended: v2 is never applied, nothing is answered on it
    q.done();
    EXPECT_FALSE(q.take());
}

TEST(ResponseQueue, CloseEndsATakeThatWaits) {
    ResponseQueue q;
    std::optional<ReceivedResponse> taken = version("unset");
    std::thread applier([&] { taken = q.take(); });  // nothing yet: waits until close()
    q.close();
    applier.join();
    EXPECT_FALSE(taken);
}

}  // namespace
}  // namespace ratelimitd::xds
