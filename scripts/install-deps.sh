#!/usr/bin/env bash
# Installs the Debian 12 packages ratelimitd needs. Idempotent: packages already present are
# skipped. Run as root (or via sudo).
#   scripts/install-deps.sh build   build and run ratelimitd (what scripts/start.sh needs)
#   scripts/install-deps.sh redis   build + a redis-server for the quickstart (start.sh --with-redis)
#   scripts/install-deps.sh [all]   build + everything the tests and benchmarks need (scripts/test.sh)
set -euo pipefail
group=${1:-all}

build_packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates curl
  # ccache and lld only make builds faster (CMakeLists.txt uses them when present).
  ccache lld
  libboost1.81-dev libhiredis-dev nlohmann-json3-dev libyaml-cpp-dev
  libspdlog-dev libfmt-dev libssl-dev
  # `ratelimitd simulate` reads .gz access logs.
  zlib1g-dev
  # The gRPC server (Envoy's rate limit service): linked always, generated from proto/.
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
)
test_packages=(
  libgtest-dev libgmock-dev
  redis-server redis-tools nginx-light wrk procps prometheus clang-16 libclang-rt-16-dev
  # tests/support/tls_certs.cpp makes the TLS tests' certificates with the openssl command.
  openssl
  # The browser checks render GET / (status_page_test.cpp, status_charts_test.cpp) and simulate's
  # --html page (simulate_html_test.cpp) in headless Chromium; the dashboard test runs prometheus.
  chromium
  # bench/run.sh draws its latency plot with gnuplot.
  gnuplot-nox
  # tests/grpc/grpc_rlqs_clock_skew_test.cpp starts a replica with its clock shifted (libfaketime).
  faketime
  # bench/simulate.sh times the replay's CPU with /usr/bin/time.
  time
  # clients/php and its tests: php-cli with curl, Symfony HttpKernel + Routing for the
  # example app, composer to validate and install the package as users do.
  php-cli php-curl php-symfony-http-kernel php-symfony-routing composer
  # clients/php tests: Symfony RateLimiter bridge + login throttling app, PSR-3 logger, PSR-7
  # for the PSR-15 middleware, a Laravel 8 app; envsubst for the probe-through-nginx test.
  php-symfony-rate-limiter php-psr-log php-nyholm-psr7 php-symfony-framework-bundle php-symfony-security-bundle php-laravel-framework gettext-base
  # tests/deploy: the Kubernetes manifests are parsed with PyYAML; quota webhook events are
  # validated against docs/schema/usage-event.schema.json (tests/support/validate_events.py).
  python3 python3-yaml python3-jsonschema
  # tests/grpc: an independent Python gRPC client, stubs generated from proto/ at test time.
  python3-grpcio python3-grpc-tools
  # tests/node: an OpenTelemetry-instrumented Node client (its npm packages: a cache dir, at test time).
  nodejs npm
  # scripts/container-test.sh: a local base image and a rootless-capable engine, no registry.
  podman runc mmdebstrap uidmap
)

case "$group" in
  build) packages=("${build_packages[@]}") ;;
  redis) packages=("${build_packages[@]}" redis-server) ;;
  all)   packages=("${build_packages[@]}" "${test_packages[@]}") ;;
  *) echo "install-deps: unknown group \"$group\" (expected build, redis or all)" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  # A Node.js installed from elsewhere ships its own npm, and Debian's npm package conflicts
  # with it: asking apt for npm then fails the whole install.
  [ "$p" = npm ] && command -v npm >/dev/null && continue
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all $group packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
# Debian starts the packaged services on install; ratelimitd's scripts start their own
# on private loopback ports, so stop the system-wide ones where a service manager exists.
for svc in redis-server nginx; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
    $SUDO systemctl stop "$svc" || true
  fi
done
echo "install-deps: installed ${missing[*]}"
