#!/usr/bin/env bash
# POST /v1/report and align: calendar through the PHP client against a real ratelimitd and a
# real redis-server: reserve-then-settle, capped refunds, debt repaid exactly by time, the
# sliding log's refused refund, calendar minutes keyed per period; and config refusals of
# bad calendar settings naming the field.
# Usage: php_client_report_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/php/lib/servers.sh"
require_php
require_tools redis-server redis-cli curl

cat >"$work/config.yaml" <<'YAML'
policies:
  llm:   { algorithm: token_bucket, limit: 100, window: 1d, burst: 100 }
  quota: { algorithm: fixed_window, limit: 3, window: 1m }
  debt:  { algorithm: token_bucket, limit: 2, window: 2s, burst: 2 }
  log:   { algorithm: sliding_log, limit: 5, window: 1m }
  cal:   { algorithm: fixed_window, limit: 2, window: 1m, align: calendar }
  race:  { algorithm: fixed_window, limit: 50, window: 1d }
YAML

start_redis; redis_port=$started_port
start_ratelimitd "$bin" "$work/config.yaml" --redis "redis://127.0.0.1:$redis_port"
url="http://127.0.0.1:$started_port"

echo "--- reports"
# The calendar-minute key is read after PHP exits: start in the first 40 s of a minute, so a
# loaded machine has 20 s before that minute (and its key) ends.
for _ in $(seq 1 500); do [ "$((10#$(date +%S)))" -lt 40 ] && break; sleep 0.05; done
php "$root/tests/php/client_report_test.php" "$url"

echo "--- the calendar key carries its period"
key=$(redis-cli -p "$redis_port" --scan --pattern 'rl:cal:{tenant_c:global}:1m@*')
[ -n "$key" ] || fail "no calendar key rl:cal:{tenant_c:global}:1m@<start>"
start=${key##*@}
[ $((start % 60)) = 0 ] || fail "$key: the period start $start is not a whole minute"
ttl=$(redis-cli -p "$redis_port" pttl "$key")
[ "$ttl" -gt 0 ] && [ "$ttl" -le 60000 ] || fail "$key: PTTL $ttl, expected 1..60000 (the minute's end)"
echo "ok    $key expires with its minute (PTTL $ttl ms)"

echo "--- 64 concurrent checks racing 16 refunds: exact accounting"
post() { curl -s -o /dev/null -w '%{http_code}\n' -H 'Content-Type: application/json' -d "$2" "$url$1"; }
for _ in $(seq 20); do [ "$(post /v1/check '{"policy":"race","tenant":"r"}')" = 200 ] || fail "warm-up check denied"; done
# 20 counted: every refund lands on a count above 0, so each takes back exactly one unit.
export -f post; export url
{ for _ in $(seq 64); do echo '/v1/check'; done; for _ in $(seq 16); do echo '/v1/report'; done; } | shuf |
    xargs -P 80 -I{} bash -c 'if [ {} = /v1/check ]; then echo "check $(post {} "{\"policy\":\"race\",\"tenant\":\"r\"}")"; else echo "report $(post {} "{\"policy\":\"race\",\"tenant\":\"r\",\"cost\":-1}")"; fi' >"$work/race.txt"
admitted=$(grep -c '^check 200$' "$work/race.txt" || true)
denied=$(grep -c '^check 429$' "$work/race.txt" || true)
reports=$(grep -c '^report 200$' "$work/race.txt" || true)
[ "$((admitted + denied))" = 64 ] && [ "$reports" = 16 ] || fail "unexpected answers: $(sort "$work/race.txt" | uniq -c | tr '\n' ' ')"
[ "$admitted" -le $((30 + 16)) ] || fail "admitted $admitted > 30 left + 16 refunded"
count=$(redis-cli -p "$redis_port" get rl:race:r:global)
[ "$count" = $((20 + admitted - 16)) ] || fail "Redis holds $count, expected 20 + $admitted admitted - 16 refunded"
echo "ok    $admitted of 64 admitted (at most 30 + 16 refunds), Redis holds $count = 20 + $admitted - 16"

echo "--- bad calendar settings are refused, naming the field"
refuse() {
    local yaml=$1 want=$2
    printf '%s\n' "$yaml" >"$work/bad.yaml"
    if out=$("$bin" --check-config "$work/bad.yaml" 2>&1); then fail "accepted: $yaml"; fi
    grep -qF -- "$want" <<<"$out" || fail "refusal of '$yaml' does not name $want: $out"
    echo "ok    refused: $want"
}
refuse 'policies: {m: {algorithm: fixed_window, limit: 5, window: 1mo, align: calendar, long_ttl: true, utc_offset: Europe/Berlin}}' 'policies.m.utc_offset'
refuse 'policies: {m: {algorithm: token_bucket, limit: 5, window: 1m, align: calendar}}' 'policies.m.align'
refuse 'policies: {m: {algorithm: fixed_window, limit: 5, window: 2m, align: calendar}}' 'policies.m.window'
refuse 'policies: {m: {algorithm: fixed_window, limit: 5, window: 1m, utc_offset: "+02:00"}}' 'policies.m.utc_offset'
echo "PASS: php client report"
