# Shared by the host-side testbed scripts (image/build, run). Sourced, not run.

TESTBED_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$TESTBED_DIR/../.." && pwd)
# The image cache lives outside git; CI on the same machine reuses it.
TESTBED_CACHE=${VTIER_TESTBED_CACHE:-/var/cache/vtier-testbed}
BUILD_DIR=${VTIER_BUILD_DIR:-$REPO_DIR/build}

log() { printf 'testbed: %s\n' "$*" >&2; }
die() { printf 'testbed: error: %s\n' "$*" >&2; exit 2; }

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# image/build builds several parts of L1, each in sections of its own: from
# a "#@ PART [PART...]" line (or "#@ all") to the next "#@" line. A part's key
# is its sections and, for the base, ./packages: everything that decides its
# content, so a change to one part rebuilds that part alone. (The lines
# before the first "#@" and a section that names no part are in no key.)
build_text() { # PART
  awk -v part="$1" '/^#@ /{ s = $0 " "; next }
    index(s, " all ") || index(s, " " part " ")' "$TESTBED_DIR/image/build"
}
part_key() { # PART
  { build_text "$1"; [ "$1" != base ] || cat "$TESTBED_DIR/image/packages"
    # the patched QEMU is its series and the script that builds it
    [ "$1" != qemu-patched ] || cat "$REPO_DIR"/qemu-patches/0*.patch "$REPO_DIR/qemu-patches/fetch-build"
  } | sha256sum | cut -c1-16
}
part_dir() { echo "$TESTBED_CACHE/$1-$(part_key "$1")"; } # PART
base_image_key() { part_key base; }
base_image_dir() { part_dir base; }

# A root's own dynamic loader and libraries, to run one of its programs on
# this machine: ${ROOT_RUN[@]} PROGRAM-IN-ROOT ARGS...
root_run() { # ROOT
  ROOT_RUN=("$1/usr/lib64/ld-linux-x86-64.so.2"
            --library-path "$1/usr/lib/x86_64-linux-gnu:$1/lib/x86_64-linux-gnu")
}
# The base image's root, unpacked once next to root.cpio (for its QEMU and
# its kmod). Prints its path.
base_root() { # BASE-DIR
  local root=$1/root tmp
  if [ ! -x "$root/usr/bin/qemu-system-x86_64" ]; then
    tmp=$(mktemp -d "$1/root.XXXXXX")
    (cd "$tmp" && cpio -idm --quiet < "$1/root.cpio" 2>/dev/null) || die "unpacking $1/root.cpio"
    mv -T "$tmp" "$root" 2>/dev/null || rm -rf "$tmp" # another run unpacked it first
  fi
  echo "$root"
}
