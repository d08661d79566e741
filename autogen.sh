#!/bin/sh
# Regenerate the build system (configure, Makefile.in, libtool files).
# Run once after a fresh clone, then: ./configure && make && make check
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
exec autoreconf -fi
