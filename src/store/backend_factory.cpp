// The list of store backends: each registers itself in its own *_backend.cpp (its URL
// schemes, --help lines, registry refusal and maker); the build collects the registrations
// (registered_backend_kinds, generated), so nothing here names a backend.
#include "ratelimitd/store/backend_factory.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace ratelimitd::store {
namespace {

// --help's order (help_position). The first is also the kind a URL no kind takes is handed
// to: its parser names what is wrong with it. Sorted once, on first use (never on a request).
const std::vector<const BackendKind*>& ordered_kinds() {
    static const std::vector<const BackendKind*> kinds = [] {
        const auto found = registered_backend_kinds();
        std::vector<const BackendKind*> sorted(found.begin(), found.end());
        std::stable_sort(sorted.begin(), sorted.end(), [](const BackendKind* a, const BackendKind* b) {
            return a->help_position < b->help_position;
        });
        return sorted;
    }();
    return kinds;
}

}  // namespace

std::span<const BackendKind* const> backend_kinds() noexcept { return ordered_kinds(); }

const BackendKind* backend_kind_of(const std::optional<std::string>& url) noexcept {
    for (const BackendKind* kind : ordered_kinds()) {
        if (url ? kind->takes(*url) : kind->schemes.empty()) return kind;
    }
    return nullptr;
}

result<std::unique_ptr<Backend>> make_backend(const std::optional<std::string>& url, BackendOptions options) {
    const BackendKind* kind = backend_kind_of(url);
    if (kind == nullptr) kind = ordered_kinds().front();
    return kind->open(url.value_or(""), std::move(options));
}

std::optional<std::string> registry_refusal(const std::optional<std::string>& url, const policy::Registry& registry) {
    const BackendKind* kind = backend_kind_of(url);
    if (kind == nullptr || kind->refusal == nullptr) return std::nullopt;
    return kind->refusal(registry);
}

std::string backend_usage() {
    std::string out;
    for (const BackendKind* kind : ordered_kinds()) out += kind->usage;
    return out;
}

}  // namespace ratelimitd::store
