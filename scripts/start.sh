#!/usr/bin/env bash
# Installs what building and running need (not the test toolchain), builds ratelimitd
# (Release) and runs it in the foreground with the example config: the embedded store unless
# a Redis URL is given. Extra arguments go to ratelimitd. Works as root and as a user with sudo
# (only the package install elevates; ratelimitd runs as the user who started the script).
# Prints each step and how long it took.
#   scripts/start.sh                                   embedded store on 127.0.0.1:8080
#   scripts/start.sh --with-redis                      also a private redis-server on 127.0.0.1:6379
#   scripts/start.sh --redis redis://HOST:6379 ...     a Redis you run
# --with-redis reuses a Redis already answering on 127.0.0.1:6379; otherwise it starts one
# (no persistence) that stops with ratelimitd.
set -euo pipefail
cd "$(dirname "$0")/.."
with_redis=0
if [ "${1:-}" = "--with-redis" ]; then
  with_redis=1
  shift
fi
started=$SECONDS
step_started=$SECONDS
step() { echo "start.sh: $*"; step_started=$SECONDS; }
took() { echo "start.sh: $* ($(( SECONDS - step_started )) s)"; }

step "installing the packages that are missing"
bash scripts/install-deps.sh "$([ $with_redis = 1 ] && echo redis || echo build)"
took "packages ready"
step "building ratelimitd (Release; the first build compiles every file, later ones only what changed)"
# Depend mode: ccache keys an object on the headers the compiler lists (-MD) instead of running
# the preprocessor before every compile. On a first build every object is a miss, and that
# extra preprocessor pass over the 29 units of ratelimitd cost 10 CPU-seconds (5 s on 2 cores).
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1
cmake -G Ninja -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DRATELIMITD_TESTS=OFF >/dev/null
cmake --build build-release -j"$(nproc)" --target ratelimitd
took "built build-release/ratelimitd"
echo "start.sh: ready $(( SECONDS - started )) s after the start; starting build-release/ratelimitd --config config/example.yaml $*"
args=(--config config/example.yaml)
if [ $with_redis = 1 ]; then
  redis_port=6379
  if ! redis-cli -h 127.0.0.1 -p $redis_port ping >/dev/null 2>&1; then
    redis-server --bind 127.0.0.1 --port $redis_port --save '' --appendonly no --loglevel warning &
    redis_pid=$!
    trap 'kill "$redis_pid" 2>/dev/null || true' EXIT
    # A bound, not a delay (60 s, as the tests allow a start on a loaded 2-core machine): the
    # loop ends as soon as redis-server answers.
    for _ in $(seq 1200); do
      redis-cli -h 127.0.0.1 -p $redis_port ping >/dev/null 2>&1 && break
      kill -0 "$redis_pid" 2>/dev/null || { echo "start.sh: redis-server did not start" >&2; exit 1; }
      sleep 0.05
    done
    redis-cli -h 127.0.0.1 -p $redis_port ping >/dev/null 2>&1 \
      || { echo "start.sh: redis-server did not answer within 60 s" >&2; exit 1; }
    echo "start.sh: redis-server on 127.0.0.1:$redis_port (stops with ratelimitd)"
  else
    echo "start.sh: using the Redis already answering on 127.0.0.1:$redis_port"
  fi
  args+=(--redis "redis://127.0.0.1:$redis_port")
  # Not exec: the EXIT trap stops the redis-server this script started.
  ./build-release/ratelimitd "${args[@]}" "$@" &
  ratelimitd_pid=$!
  trap 'kill -TERM "$ratelimitd_pid" 2>/dev/null || true' INT TERM
  status=0
  wait "$ratelimitd_pid" || status=$?
  # A signal interrupts the first wait (status 128+N); the second returns ratelimitd's own
  # exit code once it has drained.
  if [ $status -gt 128 ]; then status=0; wait "$ratelimitd_pid" || status=$?; fi
  exit $status
fi
exec ./build-release/ratelimitd "${args[@]}" "$@"
