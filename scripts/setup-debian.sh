#!/usr/bin/env bash
# Installs every build and test dependency of tune from Debian 12 packages. Run as root.
# Idempotent: re-running only checks that the packages are present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libeigen3-dev            # linear algebra (GP, Cholesky)
  libboost-dev             # Boost.Random (Sobol), Boost.Math, Boost.Process headers
  libboost-filesystem-dev  # Boost.Process dependency
  libyaml-cpp-dev          # state and campaign files
  libfmt-dev               # formatting in the program
  libnlopt-dev             # hyperparameter fit, acquisition refinement
  libcli11-dev             # command line of the program
  libgtest-dev libgmock-dev
  libsvm-tools python3-sklearn xgboost  # examples/ and their tests: svm-train, the digits data, xgboost
  slurm-wlm munge          # the Slurm executor's tests: a private cluster (scripts/slurm-test-cluster.sh)
  libdlib-dev python3-optuna  # bench/peer_benchmark.sh: dlib's global optimiser, Optuna's TPE
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup-debian.sh: missing packages ${missing[*]}; run as root (or with sudo)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  # No package's service is started (slurmctld, slurmd and munge would fail without a config and
  # fail the install): scripts/slurm-test-cluster.sh runs private daemons of its own.
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup-debian.sh: all dependencies present"
