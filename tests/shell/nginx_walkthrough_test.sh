#!/usr/bin/env bash
# docs/nginx.md as written: config/nginx/ratelimitd.yaml and config/nginx/ratelimitd.conf (its
# real_ip lines uncommented for a load balancer, as step 5 says), a real nginx, the real binary
# on a real Redis, and a load balancer (another nginx, connecting from 127.0.0.2) in front.
# Clients connect from their own loopback addresses; what reaches the API is counted in its
# access log:
#   - per client address through the balancer: POST /login admits exactly 5 per address, so
#     two clients get 10 through (without real_ip they would share one budget: 5);
#   - a client's own X-Forwarded-For buys no fresh budget;
#   - per client address on /api/*: exactly 300 a minute whatever keys it sends;
#   - per API key on /api/*: one key from many addresses gets its burst (20) plus at most the
#     refill of the seconds it took, another key has its own budget, and the raw key is in no
#     Redis key.
# Usage: nginx_walkthrough_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/php/lib/servers.sh"
require_tools nginx redis-server redis-cli curl envsubst xargs

balancer_addr=127.0.0.2   # the load balancer's own address: the only one nginx believes

start_redis; redis_port=$started_port
# Step 2 of the walk-through, with a generous store deadline: a slow call on a loaded machine
# must not turn into a (correct, but uncounted) degraded answer while admissions are counted.
export RATELIMITD_HASH_SECRET=walkthrough-secret-0123456789
start_ratelimitd "$bin" "$root/config/nginx/ratelimitd.yaml" --redis "redis://127.0.0.1:$redis_port" \
  --store-timeout 1s
rl_port=$started_port

# Step 3 and step 5: the shipped file, rendered by envsubst, the balancer's address trusted.
mkdir -p "$work/nginx"
for _ in $(seq 1 20); do
  front=$(shuf -i 20000-60000 -n 1); lb=$((front + 1)); api=$((front + 2))
  LISTEN=127.0.0.1:$front RATELIMITD_ADDR=127.0.0.1:$rl_port UPSTREAM_ADDR=127.0.0.1:$api RATELIMITD_DOWN=closed \
    envsubst '${LISTEN} ${RATELIMITD_ADDR} ${UPSTREAM_ADDR} ${RATELIMITD_DOWN}' \
    <"$root/config/nginx/ratelimitd.conf" \
    | sed -e "s|^    # set_real_ip_from  10.0.0.0/8; .*|    set_real_ip_from  $balancer_addr/32;|" \
          -e 's|^    # real_ip_header    X-Forwarded-For; .*|    real_ip_header    X-Forwarded-For;|' \
          -e 's|^    # real_ip_recursive on; .*|    real_ip_recursive on;|' >"$work/nginx/site.conf"
  grep -q "^    set_real_ip_from  $balancer_addr/32;" "$work/nginx/site.conf" \
    && grep -q '^    real_ip_header    X-Forwarded-For;' "$work/nginx/site.conf" \
    && grep -q '^    real_ip_recursive on;' "$work/nginx/site.conf" \
    || fail "config/nginx/ratelimitd.conf no longer has the three real_ip lines docs/nginx.md step 5 uncomments"
  cat >"$work/nginx/nginx.conf" <<NGINX
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
  include $work/nginx/site.conf;

  # The load balancer: appends the client's address to X-Forwarded-For, as balancers do.
  server {
    listen 127.0.0.1:$lb;
    location / {
      proxy_bind $balancer_addr;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
      proxy_pass http://127.0.0.1:$front;
    }
  }

  # The API: counts what reaches it, one line per request.
  log_format api '\$request_method \$uri \$http_x_real_ip';
  server {
    listen 127.0.0.1:$api;
    access_log $work/api.log api;
    location / { return 200 "ok\n"; }
  }
}
NGINX
  launch_nginx "$work/nginx" "$lb" /health && break
done
[ "${started_port:-}" = "$lb" ] || { cat "$work/nginx/error.log" >&2 || true; fail "could not start nginx"; }
echo "ok    nginx (front $front, balancer $lb, API $api), ratelimitd $rl_port, Redis $redis_port"

reached() { grep -c "^$1 $2 " "$work/api.log" || true; }

# fire N FROM PATH [curl args...]: N requests from address FROM, 8 at a time, through the balancer.
fire() {
  local n=$1 from=$2 path=$3
  shift 3
  seq 1 "$n" | xargs -P8 -I{} curl -s -o /dev/null --interface "$from" "$@" "http://127.0.0.1:$lb$path" \
    || fail "curl failed"
}

echo "--- per client address, through the balancer: POST /login, 5 a minute each"
fire 8 127.0.0.5 /login -X POST
fire 8 127.0.0.6 /login -X POST
n=$(reached POST /login)
[ "$n" = 10 ] || fail "POST /login reached the API $n times, expected 5 per client address = 10"
for a in 127.0.0.5 127.0.0.6; do
  m=$(grep -c "^POST /login $a\$" "$work/api.log" || true)
  [ "$m" = 5 ] || fail "POST /login from $a reached the API $m times (X-Real-IP $a), expected 5"
done
echo "ok    two clients behind the balancer: 5 + 5 logins reached the API"

echo "--- a client's own X-Forwarded-For buys nothing"
fire 5 127.0.0.5 /login -X POST -H 'X-Forwarded-For: 198.51.100.1'
n=$(reached POST /login)
[ "$n" = 10 ] || fail "a spoofed X-Forwarded-For got $((n - 10)) more logins through"
code=$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.0.5 -X POST "http://127.0.0.1:$lb/login")
[ "$code" = 429 ] || fail "client 127.0.0.5 after its 5 logins: $code, expected 429"
echo "ok    spoofed X-Forwarded-For: still the client's own (spent) budget, 429"

echo "--- per client address on /api/*: 300 a minute, whatever keys"
seq 1 320 | xargs -P8 -I{} curl -s -o /dev/null --interface 127.0.0.7 -H 'X-Api-Key: rotating-{}' \
  "http://127.0.0.1:$lb/api/items" || fail "curl failed"
n=$(grep -c '^GET /api/items 127.0.0.7$' "$work/api.log" || true)
[ "$n" = 300 ] || fail "320 requests with 320 keys from one address: $n reached the API, expected 300"
echo "ok    320 requests, 320 keys, one address: exactly 300 reached the API"

echo "--- per API key on /api/*: a burst of 20, refilled at 10/s, from any address"
# Every command Redis runs from here on: the counters of a token bucket this fast expire about
# two seconds after their last use, so a scan afterwards may find nothing on a slow machine.
redis-cli -p "$redis_port" MONITOR >"$work/monitor.log" &
monitor_pid=$!
until grep -q '^OK' "$work/monitor.log" 2>/dev/null; do sleep 0.05; done
started=$(date +%s%N)
seq 1 40 | xargs -P8 -I{} sh -c 'curl -s -o /dev/null --interface 127.0.1.$(( {} % 40 + 1 )) \
  -H "X-Api-Key: walkthrough-key-1" "http://127.0.0.1:'"$lb"'/api/orders"' || fail "curl failed"
elapsed_ms=$(( ($(date +%s%N) - started) / 1000000 ))
n=$(reached GET /api/orders)
most=$(( 20 + (elapsed_ms * 10 + 999) / 1000 ))
[ "$n" -ge 20 ] && [ "$n" -le "$most" ] \
  || fail "one key from 40 addresses: $n reached the API in $elapsed_ms ms, expected 20..$most"
code=$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.1.99 -H 'X-Api-Key: walkthrough-key-2' \
  "http://127.0.0.1:$lb/api/orders")
[ "$code" = 200 ] || fail "another key: $code, expected 200 (its own budget)"
echo "ok    one key: $n of 40 in $elapsed_ms ms (burst 20 + refill); another key: 200"

# The MONITOR stream may lag on a loaded machine: awaited (start_bound), not assumed.
per_key_counters_seen() { [ "$(grep -c 'rl:per-key:key:' "$work/monitor.log" || true)" -ge 2 ]; }
poll_until "$start_bound" per_key_counters_seen || true
kill "$monitor_pid"; wait "$monitor_pid" 2>/dev/null || true
grep -q 'rl:per-key:key:' "$work/monitor.log" || fail "no hashed per-key counter in the commands Redis ran"
raw=$(grep -c 'walkthrough-key' "$work/monitor.log" || true)
[ "$raw" = 0 ] || fail "a raw API key is in $raw commands Redis ran"
echo "ok    Redis is given the keys' hashes (key:...), never the keys"
echo "PASS: nginx walk-through"
