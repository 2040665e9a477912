// Process settings for the composition root: the config module's table-driven settings
// (include/ratelimitd/config/), with the defaults only the process knows (its CPUs).
#pragma once

#include "ratelimitd/config/command_line.hpp"
#include "ratelimitd/config/resolve.hpp"
#include "ratelimitd/config/setting_values.hpp"
#include "ratelimitd/config/settings.hpp"
#include "ratelimitd/config/usage.hpp"
#include "ratelimitd/core/error.hpp"
#include "ratelimitd/grpc/response_headers.hpp"
#include "ratelimitd/policy/policy.hpp"

namespace ratelimitd::app {

using config::Command;
using config::CommandLine;
using config::config_path;
using config::EnvLookup;
using config::parse_command_line;
using config::parse_listen;
using config::Settings;

/// config::apply_precedence with --threads defaulting to the CPUs this process may use
/// (affinity, cgroup quota), not the host's: each thread opens its own Redis connections.
/// Never throws.
result<Settings> resolve_settings(const CommandLine& cl, const policy::FileSettings& file, const EnvLookup& env);

/// The --help text: config::usage(), then each store backend's URL forms.
const char* usage();

/// The settings of Envoy's keys (envoy_key_layout, envoy_key_prefix, envoy_expiration_jitter
/// in whole seconds, as envoyproxy/ratelimit counts it), and how a store failure answers:
/// envoy_store_error when the Envoy rules are envoyproxy/ratelimit's own (`erl_or_xds`: ERL
/// mode or xds_server, whose rules carry no on_store_error), else each limit's on_store_error.
policy::EnvoyKeys envoy_keys(const Settings& settings, bool erl_or_xds = false);

/// The rate-limit fields gRPC answers carry: grpc_response_headers (ietf: with
/// grpc_x_ratelimit_headers also X-RateLimit-*), erl with its grpc_*_header names.
rls::ResponseHeaders grpc_response_headers(const Settings& settings);

}  // namespace ratelimitd::app
