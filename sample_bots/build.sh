#!/usr/bin/env bash
# Builds every sample bot that needs building: the JavaScript/TypeScript kit's packages (npm ci,
# from its package-lock.json) and the C, C++, Go, Rust and Java starter kits, each with its own
# build command, against Debian's msgpack packages (.ci/run installs them: libmsgpack-dev,
# libmsgpack-cxx-dev, golang-github-vmihailenco-msgpack.v5-dev, librust-rmp-serde-dev,
# libmsgpack-java). The Ruby kit needs no build (ruby-msgpack is all it uses).
# The Python random bot needs nothing beyond `pip install -e .`.
set -euo pipefail
cd "$(dirname "$0")"

(cd js && npm ci --no-audit --no-fund)
make -C c
make -C cpp
make -C go
(cd rust && cargo build --release --quiet)
make -C java
