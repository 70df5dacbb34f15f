#!/usr/bin/env bash
# Builds every sample bot that needs building: the JavaScript bot's packages (npm ci, from its
# package-lock.json) and the C bot (make, against msgpack-c: apt-get install libmsgpack-dev).
# The Python random bot needs nothing beyond `pip install -e .`.
set -euo pipefail
cd "$(dirname "$0")"

(cd js && npm ci --no-audit --no-fund)
make -C c
