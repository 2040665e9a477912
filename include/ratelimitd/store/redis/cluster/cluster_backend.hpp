// The backend of redis-cluster:// URLs.
#pragma once

#include "ratelimitd/store/backend.hpp"
#include "ratelimitd/store/backend_kind.hpp"
#include "ratelimitd/store/redis/cluster/cluster_store.hpp"
#include "ratelimitd/store/redis/shared_denial_cache.hpp"

#include <atomic>
#include <memory>
#include <string_view>
#include <vector>

namespace ratelimitd::store::redis::cluster {

/// One ClusterStore (a pool per node, slot routing) per server thread, all behind the
/// process's SharedDenialCache, which subscribes to resets on any seed (every node hears every
/// PUBLISH), moving to the next after a failure. Refuses registries with layered limits
/// (cluster_rules.hpp).
class ClusterBackend final : public Backend {
public:
    /// redis-cluster://...; fails naming what is wrong with the URL.
    static result<std::unique_ptr<Backend>> open(std::string_view url, BackendOptions options);

    ClusterBackend(ClusterEndpoint endpoint, BackendOptions options);
    ~ClusterBackend() override;

    std::string_view kind() const noexcept override { return "redis-cluster"; }
    std::optional<std::string> refusal(const policy::Registry& registry) const override;
    Store& add_thread(boost::asio::any_io_executor thread) override;
    void start(boost::asio::any_io_executor main) override;
    void stop() override;
    void stop_thread(std::size_t index) override;
    BackendStats stats() const override;
    /// Names the primaries once the first store knows the slot map.
    std::string describe() const override;

private:
    bool all_connected() const;

    ClusterEndpoint endpoint_;
    BackendOptions options_;
    SharedDenialCache denials_;
    std::atomic<std::size_t> reset_seed_{0};  // the seed the reset subscription tries next
    std::vector<std::unique_ptr<ClusterStore>> stores_;  // destroyed before denials_ (their hooks use it)
};

/// redis-cluster:// and rediss-cluster://: a Redis Cluster, which refuses what cluster_refusal
/// names, --check-config included.
extern const BackendKind cluster_backend_kind;

}  // namespace ratelimitd::store::redis::cluster
