#!/usr/bin/env bash
# Quota webhooks verified in PHP: Ratelimitd\Client\Webhook::verify on hand-made headers, then
# on the events a real ratelimitd (on a real redis-server) sent to a `php -S` receiver.
# Usage: php_webhook_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/php/lib/servers.sh"
require_php
require_tools redis-server redis-cli curl

echo "--- the rules"
php "$root/tests/php/webhook_test.php" cases

echo "--- events from ratelimitd"
secret=php-shell-webhook-secret-0123
events=$work/events.jsonl
: >"$events"
start_php_server "$root/tests/php/webhook_receiver.php" "EVENTS_FILE=$events"; receiver_port=$started_port
cat >"$work/config.yaml" <<YAML
policies:
  api: { algorithm: fixed_window, limit: 5, window: 10m }
notify:
  targets:
    ops: { url: "http://127.0.0.1:$receiver_port/hook", secret: "$secret", timeout: 2s }
  policies:
    api: { at: [0.6, 1.0], target: ops }
YAML
start_redis
start_ratelimitd "$bin" "$work/config.yaml" --redis "redis://127.0.0.1:$started_port"
url="http://127.0.0.1:$started_port"
for _ in $(seq 1 8); do
  curl -s -o /dev/null -H 'Content-Type: application/json' -d '{"policy":"api","tenant":"acme"}' "$url/v1/check"
done
for _ in $(seq 1 600); do [ "$(wc -l <"$events")" -ge 2 ] && break; sleep 0.05; done
php "$root/tests/php/webhook_test.php" events "$events" "$secret" 2
echo "PASS: php webhook"
