// What the process knows of one store backend before it makes one: the URLs it takes, the
// --help lines of their forms, what it refuses of a registry without connecting, and how it
// is made. Each backend registers itself in its own *_backend.cpp; the build finds those
// registrations (cmake/store_backend_kinds.cmake), and make_backend, --check-config and --help
// ask the list (backend_factory.hpp).
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/store/backend.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ratelimitd::store {

struct BackendKind {
    std::string_view name{};                     ///< the kind() of the backends it makes
    std::span<const std::string_view> schemes{}; ///< URL prefixes it takes ("redis://"); none: the store of no URL
    /// Where --help lists it among the kinds, lowest first. The lowest is also handed a URL
    /// no kind takes, so that its parser names what is wrong with it.
    int help_position = 0;
    std::string_view usage{};                    ///< its lines of --help, each ending in '\n'
    /// What a registry may not ask of it, known without connecting: said by --check-config
    /// as at start (the backend's refusal() says the same). Null: nothing.
    std::optional<std::string> (*refusal)(const policy::Registry&) = nullptr;
    /// Makes the backend of `url` (empty for the store of no URL); fails naming what is wrong
    /// with the URL, never its password.
    result<std::unique_ptr<Backend>> (*open)(std::string_view url, BackendOptions options) = nullptr;

    /// Whether `url` starts with one of its schemes.
    [[nodiscard]] bool takes(std::string_view url) const noexcept {
        return std::any_of(schemes.begin(), schemes.end(), [url](std::string_view s) { return url.starts_with(s); });
    }
};

/// Every backend's registration as the build found them in src/store/**/*_backend.cpp (a
/// generated file), in no particular order: backend_kinds() (backend_factory.hpp) orders them.
std::span<const BackendKind* const> registered_backend_kinds() noexcept;

}  // namespace ratelimitd::store
