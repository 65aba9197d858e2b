#!/usr/bin/env bash
# Install every Debian package that muster's build, tests and local cluster need.
# Idempotent; run as root. Go (for the upstream Kubernetes binaries) comes with the machine image.
set -euo pipefail

packages=(
	build-essential cmake pkg-config          # the C build
	libcurl4-openssl-dev libjansson-dev libyaml-dev libuv1-dev libsqlite3-dev libssl-dev
	libcmocka-dev                             # unit tests
	clang libclang-rt-14-dev                  # libFuzzer targets and sanitizer runtimes
	clang-format                              # the format check (tests/unit/test_format.sh)
	openssl curl jq ca-certificates procps    # local cluster scripts and end-to-end tests
	sqlite3                                   # the ledger's crash test reads the file it left
	time                                      # peak RSS in tests/bench/bench_simulate_large.sh
	mmdebstrap umoci skopeo                   # the container image (deploy/image/build.sh) and its test
	prometheus                                # scrapes the manager in tests/e2e/test_metrics.sh
	python3                                   # the fake Ray dashboard (deploy/local/fake-ray-dashboard.py)
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "setup: all ${#packages[@]} packages present"
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "setup: missing packages (${missing[*]}); run this script as root" >&2
	exit 1
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
command -v go >/dev/null || { echo "setup: go is required to build the Kubernetes binaries" >&2; exit 1; }
echo "setup: done"
