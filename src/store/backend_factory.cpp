// The list of store backends: each registers itself in its own *_backend.cpp (its URL
// schemes, --help lines, registry refusal and maker). A new backend adds its line here.
#include "ratelimitd/store/backend_factory.hpp"
#include "ratelimitd/store/memory/memory_backend.hpp"
#include "ratelimitd/store/redis/cluster/cluster_backend.hpp"
#include "ratelimitd/store/redis/redis_backend.hpp"

#include <array>
#include <utility>

namespace ratelimitd::store {
namespace {

// --help's order. The first is also the kind a URL no kind takes is handed to: its parser
// names what is wrong with it.
constexpr auto kinds = std::to_array<const BackendKind*>({
    &redis::redis_backend_kind,
    &redis::sentinel_backend_kind,
    &redis::cluster::cluster_backend_kind,
    &memory::memory_backend_kind,
});

}  // namespace

std::span<const BackendKind* const> backend_kinds() noexcept { return kinds; }

const BackendKind* backend_kind_of(const std::optional<std::string>& url) noexcept {
    for (const BackendKind* kind : kinds) {
        if (url ? kind->takes(*url) : kind->schemes.empty()) return kind;
    }
    return nullptr;
}

result<std::unique_ptr<Backend>> make_backend(const std::optional<std::string>& url, BackendOptions options) {
    const BackendKind* kind = backend_kind_of(url);
    if (kind == nullptr) kind = kinds.front();
    return kind->open(url.value_or(""), std::move(options));
}

std::optional<std::string> registry_refusal(const std::optional<std::string>& url, const policy::Registry& registry) {
    const BackendKind* kind = backend_kind_of(url);
    if (kind == nullptr || kind->refusal == nullptr) return std::nullopt;
    return kind->refusal(registry);
}

std::string backend_usage() {
    std::string out;
    for (const BackendKind* kind : kinds) out += kind->usage;
    return out;
}

}  // namespace ratelimitd::store
