# Shared by the host-side testbed scripts (build-image, run). Sourced, not run.

TESTBED_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$TESTBED_DIR/../.." && pwd)
# The image cache lives outside git; CI on the same machine reuses it.
TESTBED_CACHE=${VTIER_TESTBED_CACHE:-/var/cache/vtier-testbed}
BUILD_DIR=${VTIER_BUILD_DIR:-$REPO_DIR/build}

log() { printf 'testbed: %s\n' "$*" >&2; }
die() { printf 'testbed: error: %s\n' "$*" >&2; exit 2; }

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# The base image's key: everything that decides its content.
base_image_key() {
  cat "$TESTBED_DIR/image/build" "$TESTBED_DIR/image/packages" | sha256sum | cut -c1-16
}
base_image_dir() { echo "$TESTBED_CACHE/base-$(base_image_key)"; }
