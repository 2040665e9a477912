// ConnectionLedger: the cap, and a connection gRPC closed (its descriptor closed, or reused
// for another socket) no longer counts.
#include "ratelimitd/grpc/connection_ledger.hpp"

#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>


namespace ratelimitd::rls {
namespace {

int new_socket() { return ::socket(AF_INET, SOCK_STREAM, 0); }

TEST(ConnectionLedger, AdmitsUpToTheCap) {
    ConnectionLedger ledger(2);
    const int a = new_socket(), b = new_socket(), c = new_socket();
    EXPECT_TRUE(ledger.admit(a));
    EXPECT_TRUE(ledger.admit(b));
    EXPECT_FALSE(ledger.admit(c));
    EXPECT_EQ(ledger.open(), 2u);
    for (int fd : {a, b, c}) ::close(fd);
}

TEST(ConnectionLedger, AClosedConnectionFreesItsPlace) {
    ConnectionLedger ledger(1);
    const int a = new_socket();
    ASSERT_TRUE(ledger.admit(a));
    ::close(a);
    const int b = new_socket();  // likely a's number again: another socket all the same
    // A scan at the cap runs at most every rescan_interval.
    EXPECT_TRUE(test::wait_until([&] { return ledger.admit(b); }, test::process_start_bound));
    EXPECT_EQ(ledger.open(), 1u);
    ::close(b);
    EXPECT_EQ(ledger.open(), 0u);
}

TEST(ConnectionLedger, ANumberReusedForAnotherSocketIsAnotherConnection) {
    ConnectionLedger ledger(2);
    const int a = new_socket();
    ASSERT_TRUE(ledger.admit(a));
    ::close(a);
    const int other = new_socket();  // not handed to the ledger (an HTTP connection, say)
    ASSERT_EQ(other, a) << "the lowest free number comes back";
    EXPECT_EQ(ledger.open(), 0u);
    ::close(other);
}

}  // namespace
}  // namespace ratelimitd::rls
