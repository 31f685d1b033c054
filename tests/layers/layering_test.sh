#!/usr/bin/env bash
# Runs layering_test.py (see there) with the system's Python 3.
exec python3 "$(dirname "$0")/layering_test.py"
