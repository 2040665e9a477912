#!/usr/bin/env bash
# Symfony security's login_throttling decided by ratelimitd, in a full-stack Symfony 5.4 app
# (clients/php/examples/symfony-login: Debian's FrameworkBundle + SecurityBundle, json_login,
# login_throttling.limiter = RatelimitdRequestLimiter::forLogin) served by TWO `php -S`
# processes against one real ratelimitd + redis-server: failed logins alternate between the two
# processes, the 4th attempt is a 429 with Retry-After even with the right password (the count
# is shared), another username is not affected, the username never reaches Redis, a successful
# login resets the count (admin API), and ratelimitd down makes logins fail closed.
# Usage: php_symfony_login_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
app="$root/clients/php/examples/symfony-login"
. "$root/tests/php/lib/servers.sh"
require_php
require_tools redis-server redis-cli curl
for b in Bundle/FrameworkBundle Bundle/SecurityBundle Component/RateLimiter; do
  [ -f "/usr/share/php/Symfony/$b/autoload.php" ] \
    || fail "Symfony $b is not installed; run: bash scripts/install-deps.sh (php-symfony-framework-bundle php-symfony-security-bundle php-symfony-rate-limiter)"
done
export RATELIMITD_ADMIN_TOKEN=php-login-admin-token-0123
# The example's window is 1m and opens at the first failed login; 3m here outlasts the test's
# 120 s timeout, so no window can end between the failed logins and the 429s, however slow the
# machine.
sed 's/^    window: 1m$/    window: 3m/' "$app/ratelimitd.yaml" >"$work/config.yaml"
grep -q '^    window: 3m$' "$work/config.yaml" || fail "the example's ratelimitd.yaml no longer has 'window: 1m'"
echo "admin_token: \"$RATELIMITD_ADMIN_TOKEN\"" >>"$work/config.yaml"

start_redis; redis_port=$started_port
start_ratelimitd "$bin" "$work/config.yaml" --redis "redis://127.0.0.1:$redis_port"; rl_pid=$started_pid
rl_url="http://127.0.0.1:$started_port"
start_php_server "$app/public/index.php" RATELIMITD_URL="$rl_url" RATELIMITD_ADMIN_TOKEN="$RATELIMITD_ADMIN_TOKEN" APP_CACHE_DIR="$work/app1" \
  RATELIMITD_TIMEOUT_MS=10000
one="http://127.0.0.1:$started_port"
start_php_server "$app/public/index.php" RATELIMITD_URL="$rl_url" RATELIMITD_ADMIN_TOKEN="$RATELIMITD_ADMIN_TOKEN" APP_CACHE_DIR="$work/app2" \
  RATELIMITD_TIMEOUT_MS=10000
two="http://127.0.0.1:$started_port"

# login BASE USER PASSWORD: prints the status; headers in $work/h, body in $work/b.
login() {
  curl -s -D "$work/h" -o "$work/b" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    --data "{\"username\":\"$2\",\"password\":\"$3\"}" "$1/login"
}
header() { grep -i "^$1:" "$work/h" | head -1 | sed 's/^[^:]*: *//' | tr -d '\r'; }
expect() { [ "$1" = "$2" ] || { cat "$work/h" "$work/b"; echo; fail "$3: expected '$2', got '$1'"; }; }

# A 10 s bound on each check (the example's default is 500 ms): a check slowed down by a loaded
# machine must not be taken for ratelimitd down (503). A bare POST to each process first, so
# that neither builds its Symfony cache inside the window.
expect "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$one/login")" 401 "a bare POST (no credentials)"
expect "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$two/login")" 401 "a bare POST to process two"
expect "$(login "$one" alice wrong-1)" 401 "failed login 1 (process one)"
expect "$(login "$two" alice wrong-2)" 401 "failed login 2 (process two)"
expect "$(login "$one" alice wrong-3)" 401 "failed login 3 (process one)"
expect "$(login "$two" alice right-password)" 429 "attempt 4 (process two), right password"
retry=$(header Retry-After)
[ -n "$retry" ] && [ "$retry" -ge 1 ] && [ "$retry" -le 180 ] || fail "429 without a Retry-After in 1..180 (the window): '$retry'"
grep -q '"error":"too_many_login_attempts"' "$work/b" || fail "429 body: $(cat "$work/b")"
expect "$(login "$one" alice right-password)" 429 "attempt 5 (process one)"
echo "ok    3 failed logins over two PHP processes, then 429 (Retry-After $retry) on both, even with the right password"

[ -z "$(redis-cli -p "$redis_port" --scan --pattern '*alice*')" ] || fail "the username reached a Redis key"
keys=$(redis-cli -p "$redis_port" --scan --pattern 'rl:login:login:*' | wc -l)
expect "$keys" 1 "Redis keys of the login policy"
echo "ok    one counter in Redis for alice + 127.0.0.1, named by a digest (no username in Redis)"

expect "$(login "$one" bob wrong)" 401 "another username: its own budget"
echo "ok    another username is not throttled"

# An operator's reset (as after a support case) stands in for the end of the window.
for key in $(redis-cli -p "$redis_port" --scan --pattern 'rl:login:login:*'); do
  tenant=${key#rl:login:}; tenant=${tenant%:global}
  curl -s -f -o /dev/null -H "Authorization: Bearer $RATELIMITD_ADMIN_TOKEN" -X POST "$rl_url/v1/reset" \
    --data "{\"policy\":\"login\",\"tenant\":\"$tenant\"}" || fail "admin reset of $tenant failed"
done
expect "$(login "$two" alice wrong)" 401 "after an admin reset: a failed login"
expect "$(login "$one" alice right-password)" 200 "a successful login"
grep -q '"login":"ok"' "$work/b" || fail "login answer: $(cat "$work/b")"
expect "$(redis-cli -p "$redis_port" --scan --pattern 'rl:login:login:*' | wc -l)" 0 "login keys after a successful login (reset through the admin API)"
echo "ok    a successful login resets alice's count (the key is gone)"

kill "$rl_pid"; wait "$rl_pid" 2>/dev/null || true
code=$(login "$two" alice right-password)
expect "$code" 503 "login with ratelimitd down (the limiter fails closed)"
expect "$(header Retry-After)" 1 "503 Retry-After"
grep -q '"error":"rate_limiter_unavailable"' "$work/b" || fail "503 body: $(cat "$work/b")"
echo "ok    ratelimitd down: logins fail closed (503 rate_limiter_unavailable, Retry-After: 1), even with the right password"
echo "PASS: symfony login throttling through ratelimitd"
