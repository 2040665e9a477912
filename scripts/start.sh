#!/usr/bin/env bash
# Installs what is missing, builds ratelimitd (Release) and runs it in the foreground with the
# example config (embedded store unless a Redis URL is given). Extra arguments go to ratelimitd,
# e.g.  scripts/start.sh --redis redis://127.0.0.1:6379 --listen 0.0.0.0:8080
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DRATELIMITD_TESTS=OFF >/dev/null
cmake --build build-release -j2 --target ratelimitd
exec ./build-release/ratelimitd --config config/example.yaml "$@"
