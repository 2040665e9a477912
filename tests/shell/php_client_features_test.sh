#!/usr/bin/env bash
# The PHP client's interface, ensureAllowed(), layered checkRoute(), admin reset() and PSR-3
# logging of degraded answers, with real php-cli (+ Debian's php-psr-log) against a real
# ratelimitd + redis-server; then Redis stopped and ratelimitd stopped (the logger is told, and
# each policy keeps the on_store_error its answers announced).
# Usage: php_client_features_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/php/lib/servers.sh"
require_php
require_tools redis-server redis-cli
php -r 'exit(interface_exists("Psr\\Log\\LoggerInterface") || is_file("/usr/share/php/Psr/Log/autoload.php") ? 0 : 1);' \
  || fail "PSR-3 is not installed; run: bash scripts/install-deps.sh (php-psr-log)"
export ADMIN_TOKEN=php-test-admin-token-0123

cat >"$work/config.yaml" <<YAML
admin_token: "$ADMIN_TOKEN"
policies:
  api: { algorithm: fixed_window, limit: 3, window: 1m }
  strict: { algorithm: fixed_window, limit: 2, window: 1m, on_store_error: deny }
  per-minute: { algorithm: fixed_window, limit: 5, window: 1m }
  per-hour: { algorithm: fixed_window, limit: 3, window: 1h }
routes:
  - path: "/layered/*"
    limits: [ { policy: per-minute }, { policy: per-hour } ]
YAML

start_redis; redis_pid=$started_pid
start_ratelimitd "$bin" "$work/config.yaml" --redis "redis://127.0.0.1:$started_port"
url="http://127.0.0.1:$started_port"; rl_pid=$started_pid
php "$root/tests/php/client_features_test.php" api "$url"

echo "--- Redis stopped"
kill "$redis_pid"; wait "$redis_pid" 2>/dev/null || true
php "$root/tests/php/client_features_test.php" store-down "$url"

echo "--- ratelimitd stopped by the client test (failure modes announced before)"
php "$root/tests/php/client_features_test.php" announced "$url" "$rl_pid"
wait "$rl_pid" 2>/dev/null || true
php "$root/tests/php/client_features_test.php" gone "$url"
echo "PASS: php client features"
