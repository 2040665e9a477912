// Real servers for integration tests, each on a free loopback port and stopped when its object
// dies: a private redis-server, a Redis Cluster, and the ratelimitd binary. One header for the
// suites that start them; each kind lives in a file of its own.
#pragma once

#include "support/child.hpp"
#include "support/ports.hpp"
#include "support/ratelimitd_process.hpp"
#include "support/redis_cluster.hpp"
#include "support/redis_server.hpp"
#include "support/scratch_dir.hpp"
