# Sourced by tests/shell/php_*_test.sh and probe_*_test.sh: a private redis-server, ratelimitd,
# `php -S` and nginx on free loopback ports, all stopped when the test exits.
# Sets: work (a temp dir). Every start_* function sets started_port and started_pid.

work=$(mktemp -d)
started_pids=()
ratelimitd_pids=()   # checked at exit: SIGTERM must end each with 0 and no sanitizer report
ratelimitd_logs=()
cleanup() {
  local status=$? p i code
  # Every step below runs whatever the one before did: with errexit on, a failing command here
  # would end the trap early and turn the test's status into its own, saying nothing.
  set +e
  # ratelimitd first, as an operator stops it; a test that fails its shutdown fails.
  for i in "${!ratelimitd_pids[@]}"; do
    p=${ratelimitd_pids[$i]}
    if kill -0 "$p" 2>/dev/null; then
      kill -CONT "$p" 2>/dev/null || true
      kill -TERM "$p" 2>/dev/null || true
      code=0; wait "$p" 2>/dev/null || code=$?
      if [ "$code" != 0 ]; then
        echo "FAIL: ratelimitd (pid $p) exited with $code after SIGTERM; its log:" >&2
        tail -50 "${ratelimitd_logs[$i]}" >&2; status=1
      fi
    fi
    if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|UndefinedBehaviorSanitizer' "${ratelimitd_logs[$i]}" 2>/dev/null; then
      echo "FAIL: ratelimitd (pid $p) logged a sanitizer report:" >&2
      cat "${ratelimitd_logs[$i]}" >&2; status=1
    fi
  done
  # SIGCONT first: a test may have frozen a process with SIGSTOP, and a stopped process
  # would not act on SIGTERM.
  for p in "${started_pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work" || echo "note: $work could not be removed" >&2
  [ "$status" = 0 ] || echo "exit status $status" >&2
  exit "$status"
}
trap cleanup EXIT

# pick_port: sets picked_port to a loopback port that nothing listens on, from the range and
# lock files the C++ tests use (tests/support/processes.cpp: 20000-31999, below the kernel's
# ephemeral range, /tmp/ratelimitd-test-ports/PORT locked for the life of this test), so
# concurrent tests of either kind never pick the same port.
pick_port() {
  local _ port fd
  mkdir -p /tmp/ratelimitd-test-ports 2>/dev/null || true
  for _ in $(seq 1 500); do
    port=$(( 20000 + (RANDOM * 32768 + RANDOM) % 12000 ))
    # The braces keep the 2>/dev/null to this one command: on a bare `exec` a redirection is
    # the shell's own from then on, and every FAIL message after the first pick_port was lost.
    { exec {fd}<>"/tmp/ratelimitd-test-ports/$port"; } 2>/dev/null || continue
    if flock -n "$fd" && ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      picked_port=$port   # the lock stays with this shell (fd left open)
      return 0
    fi
    exec {fd}<&-
  done
  fail "no free loopback port in 20000-31999"
}

fail() { echo "FAIL: $*" >&2; exit 1; }

# How long to wait for a server this script started to answer: a bound, never a delay (a
# passing run waits only as long as the server takes). Generous because CI may run on a 2-core
# machine with both cores busy and a sanitized build.
start_bound=${RATELIMITD_TEST_START_BOUND:-60}

# poll_until SECONDS COMMAND...: runs COMMAND every 50 ms until it succeeds (0) or SECONDS have
# passed (1).
poll_until() {
  local deadline=$(( SECONDS + $1 ))
  shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.05
  done
}

# answers_or_exited PID COMMAND...: true once COMMAND succeeds or PID has exited (the caller
# then tells which), so a server that died is not waited for until the bound.
answers_or_exited() {
  local pid=$1
  shift
  "$@" >/dev/null 2>&1 || ! kill -0 "$pid" 2>/dev/null
}

# A missing tool is a broken machine, not a reason to skip: say how to fix it and fail.
require_tools() {
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null 2>&1 || fail "'$t' is not installed; run: bash scripts/install-deps.sh"
  done
}

require_php() {
  require_tools php
  php -r 'exit(extension_loaded("curl") && extension_loaded("json") ? 0 : 1);' \
    || fail "php's curl extension is missing; run: bash scripts/install-deps.sh (php-curl)"
}

start_redis() {
  local _ pid port
  for _ in $(seq 1 20); do
    pick_port; port=$picked_port
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
      >"$work/redis-$port.log" 2>&1 &
    pid=$!
    poll_until "$start_bound" answers_or_exited "$pid" redis-cli -p "$port" ping || true
    # Our own server answered, not one that held the port before (ours would then have exited).
    if kill -0 "$pid" 2>/dev/null && redis-cli -p "$port" ping >/dev/null 2>&1; then
      started_pids+=("$pid"); started_port=$port; started_pid=$pid; return 0
    fi
    kill "$pid" 2>/dev/null || true
  done
  fail "could not start redis-server"
}

# start_ratelimitd BINARY CONFIG [ARGS...]: listens on 127.0.0.1:0 and reads the chosen port
# from its "listening on" line.
start_ratelimitd() {
  local bin=$1 config=$2 log _ port
  shift 2
  log=$(mktemp "$work/ratelimitd.XXXX.log")
  # A 2 s store deadline unless the test sets one: a slow call on a loaded, sanitized build
  # must not turn into a degraded allow that puts an exact count off by one.
  local deadline=(--store-timeout 2s)
  if [[ " $* " == *" --store-timeout "* ]] || grep -q store_timeout "$config" || [ -n "${RATELIMITD_STORE_TIMEOUT:-}" ]; then
    deadline=()
  fi
  "$bin" --config "$config" --listen 127.0.0.1:0 --threads 2 "${deadline[@]}" "$@" >"$log" 2>&1 &
  started_pid=$!
  ratelimitd_pids+=("$started_pid")
  ratelimitd_logs+=("$log")
  poll_until "$start_bound" answers_or_exited "$started_pid" grep -q "listening on" "$log" || true
  port=$(grep -o 'listening on [0-9.]*:[0-9]*' "$log" | head -1 | sed 's/.*://')
  [ -n "$port" ] || { cat "$log" >&2; fail "ratelimitd did not start"; }
  started_port=$port
}

# launch_nginx DIR PORT PATH: nginx with DIR/nginx.conf, until PATH on PORT answers. On success
# it is recorded (started_pids, started_port, started_pid) and 0 returned; otherwise it is
# stopped and 1 returned (the caller may try another port).
launch_nginx() {
  local dir=$1 port=$2 path=$3
  nginx -p "$dir" -c "$dir/nginx.conf" >"$dir/stdout.log" 2>&1 &
  await_started "$!" "$port" "$path"
}

# await_started PID PORT PATH: waits until PATH on PORT answers while PID lives. On success it
# is recorded (started_pids, started_port, started_pid) and 0 returned; otherwise PID is
# stopped and 1 returned.
await_started() {
  local pid=$1 port=$2 path=$3
  poll_until "$start_bound" answers_or_exited "$pid" curl -s -o /dev/null "http://127.0.0.1:$port$path" || true
  if kill -0 "$pid" 2>/dev/null && curl -s -o /dev/null "http://127.0.0.1:$port$path"; then
    started_pids+=("$pid"); started_port=$port; started_pid=$pid; return 0
  fi
  kill "$pid" 2>/dev/null || true
  return 1
}

# start_php_server ROUTER [ENV=VALUE...]: PHP's built-in server on a free port.
start_php_server() {
  local router=$1 _ port log
  shift
  for _ in $(seq 1 20); do
    pick_port; port=$picked_port
    log="$work/php-$port.log"
    env "$@" php -S "127.0.0.1:$port" "$router" >"$log" 2>&1 &
    await_started "$!" "$port" / && return 0
  done
  cat "$log" >&2
  fail "could not start php -S"
}

# start_nginx_round_robin UPSTREAM_PORT...: nginx spreading requests over the given ports.
start_nginx_round_robin() {
  local servers="" p _ port
  for p in "$@"; do servers="$servers server 127.0.0.1:$p;"; done
  mkdir -p "$work/nginx"
  for _ in $(seq 1 20); do
    pick_port; port=$picked_port
    cat >"$work/nginx/nginx.conf" <<NGINX
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $work/nginx/body;
  proxy_temp_path $work/nginx/proxy;
  fastcgi_temp_path $work/nginx/fastcgi;
  uwsgi_temp_path $work/nginx/uwsgi;
  scgi_temp_path $work/nginx/scgi;
  upstream ratelimitd { $servers }
  server {
    listen 127.0.0.1:$port;
    location / { proxy_pass http://ratelimitd; }
  }
}
NGINX
    launch_nginx "$work/nginx" "$port" /healthz && return 0
  done
  cat "$work/nginx/error.log" "$work/nginx/stdout.log" >&2 || true
  fail "could not start nginx"
}

cluster_ok() { redis-cli -p "$1" cluster info 2>/dev/null | tr -d '\r' | grep -qx 'cluster_state:ok'; }

# start_redis_cluster N: N cluster-enabled redis-servers (primaries, no replicas) made one
# cluster by `redis-cli --cluster create`; waits until every node reports cluster_state:ok.
# Sets cluster_ports (space-separated) and started_port (the first node).
start_redis_cluster() {
  local n=$1 i port pid addrs="" _ state
  cluster_ports=""
  for i in $(seq 1 "$n"); do
    for _ in $(seq 1 20); do
      pick_port; port=$picked_port
      pick_port   # the cluster bus port, picked like any other
      redis-server --port "$port" --cluster-port "$picked_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" \
        --cluster-enabled yes --cluster-config-file "$work/nodes-$port.conf" >"$work/redis-$port.log" 2>&1 &
      pid=$!
      poll_until "$start_bound" answers_or_exited "$pid" redis-cli -p "$port" ping || true
      if kill -0 "$pid" 2>/dev/null && redis-cli -p "$port" ping >/dev/null 2>&1; then
        started_pids+=("$pid"); cluster_ports="$cluster_ports $port"; addrs="$addrs 127.0.0.1:$port"; break
      fi
      kill "$pid" 2>/dev/null || true
    done
  done
  # shellcheck disable=SC2086
  redis-cli --cluster create $addrs --cluster-replicas 0 --cluster-yes >"$work/cluster-create.log" 2>&1 \
    || { cat "$work/cluster-create.log" >&2; fail "redis-cli --cluster create failed"; }
  for port in $cluster_ports; do
    poll_until "$start_bound" cluster_ok "$port" || true
    state=$(redis-cli -p "$port" cluster info | tr -d '\r' | sed -n 's/^cluster_state://p')
    [ "$state" = ok ] || fail "redis cluster node $port is not ok: $state"
  done
  cluster_ports=${cluster_ports# }
  started_port=${cluster_ports%% *}
}

# start_nginx_auth RATELIMITD_PORT UPSTREAM_PORT closed|open: nginx running the shipped
# config/nginx/ratelimitd.conf (rendered with envsubst, as its header says) in front of an API.
# Reads the file under $root, the repository root every test script sets.
start_nginx_auth() {
  local rl=$1 up=$2 down=$3 _ port dir
  dir=$(mktemp -d "$work/nginx-auth.XXXX")
  for _ in $(seq 1 20); do
    pick_port; port=$picked_port
    LISTEN="127.0.0.1:$port" RATELIMITD_ADDR="127.0.0.1:$rl" UPSTREAM_ADDR="127.0.0.1:$up" RATELIMITD_DOWN=$down \
      envsubst '${LISTEN} ${RATELIMITD_ADDR} ${UPSTREAM_ADDR} ${RATELIMITD_DOWN}' \
      <"$root/config/nginx/ratelimitd.conf" >"$dir/ratelimitd.conf"
    cat >"$dir/nginx.conf" <<NGINX
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  include $dir/ratelimitd.conf;
}
NGINX
    launch_nginx "$dir" "$port" / && return 0
  done
  cat "$dir/error.log" "$dir/stdout.log" >&2 || true
  fail "could not start nginx with config/nginx/ratelimitd.conf"
}
