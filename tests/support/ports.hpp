// Loopback ports for the servers a test starts: picking a free one, and asking whether one listens.
#pragma once

namespace ratelimitd::test {

/// A loopback port that is free and stays reserved for this test process (see ports.cpp).
unsigned short free_port();

/// True when something accepts connections on 127.0.0.1:`port`.
bool can_connect(unsigned short port);

}  // namespace ratelimitd::test
