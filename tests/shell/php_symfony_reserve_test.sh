#!/usr/bin/env bash
# Symfony's reserve()->wait() through the PHP client's RatelimitdLimiter on a max_delay policy
# (issue 50), with Debian's php-symfony-rate-limiter against a real ratelimitd + redis-server:
# the booking ratelimitd makes is the Reservation's time to act.
# Usage: php_symfony_reserve_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/php/lib/servers.sh"
require_php
require_tools redis-server redis-cli
[ -f /usr/share/php/Symfony/Component/RateLimiter/autoload.php ] \
  || fail "Symfony RateLimiter is not installed; run: bash scripts/install-deps.sh (php-symfony-rate-limiter)"
cat >"$work/config.yaml" <<YAML
policies:
  smooth: { algorithm: gcra, limit: 1, window: 1s, burst: 2, max_delay: 10s }
YAML
start_redis; redis_port=$started_port
start_ratelimitd "$bin" "$work/config.yaml" --redis "redis://127.0.0.1:$redis_port"
php "$root/tests/php/symfony_reserve_test.php" "http://127.0.0.1:$started_port"
echo "PASS: symfony reserve()->wait()"
