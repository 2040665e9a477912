#!/usr/bin/env bash
# The Symfony RateLimiter bridge (Ratelimitd\Client\Symfony\RatelimitdLimiter, ...Factory,
# ...RequestLimiter) with Debian's php-symfony-rate-limiter (Symfony 5.4) against a real
# ratelimitd + redis-server: code written for LimiterInterface / RequestRateLimiterInterface,
# Symfony's own CompoundLimiter and ensureAccepted(), reserve(), reset() through the admin API,
# per-username login budgets; then ratelimitd stopped (fail open / fail closed).
# Usage: php_symfony_limiter_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/php/lib/servers.sh"
require_php
require_tools redis-server redis-cli
for c in RateLimiter HttpFoundation; do
  [ -f "/usr/share/php/Symfony/Component/$c/autoload.php" ] \
    || fail "Symfony $c is not installed; run: bash scripts/install-deps.sh (php-symfony-rate-limiter)"
done
export ADMIN_TOKEN=php-test-admin-token-0123
cat >"$work/config.yaml" <<YAML
admin_token: "$ADMIN_TOKEN"
policies:
  api: { algorithm: fixed_window, limit: 3, window: 1m }
  hourly: { algorithm: fixed_window, limit: 2, window: 1h }
  login: { algorithm: fixed_window, limit: 2, window: 1m }
routes:
  - { path: /_layered/api+hourly, limits: [ { policy: api }, { policy: hourly } ] }
YAML
start_redis; redis_port=$started_port
start_ratelimitd "$bin" "$work/config.yaml" --redis "redis://127.0.0.1:$redis_port"; rl_pid=$started_pid
url="http://127.0.0.1:$started_port"
php "$root/tests/php/symfony_limiter_test.php" api "$url"
# The login budget is keyed by a digest: the username never reaches Redis.
[ -z "$(redis-cli -p "$redis_port" --scan --pattern '*lice*')" ] || fail "a username reached a Redis key"
echo "ok    no username in any Redis key"
kill "$rl_pid"; wait "$rl_pid" 2>/dev/null || true
php "$root/tests/php/symfony_limiter_test.php" down "$url"
echo "PASS: symfony rate limiter bridge"
