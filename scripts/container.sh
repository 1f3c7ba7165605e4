#!/usr/bin/env bash
# Builds the FROM-scratch image of deploy/Containerfile: wirebench built for
# x86_64-unknown-linux-musl (static: musl libc and ring's C code linked in), stripped,
# with the host's CA bundle for TLS. Not part of scripts/test.sh: the release build
# takes minutes.
#   scripts/container.sh [TAG]        (default wirebench:VERSION)
# Needs: the Rust target (rustup target add x86_64-unknown-linux-musl), musl-gcc
# (Debian musl-tools) and podman, buildah or docker (BUILDER=... picks one).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

target=x86_64-unknown-linux-musl
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
tag=${1:-wirebench:$version}
fail() { echo "container.sh: $*" >&2; exit 2; }

rustup target list --installed 2>/dev/null | grep -qx "$target" \
    || fail "the Rust target $target is not installed (rustup target add $target)"
command -v musl-gcc >/dev/null || fail "musl-gcc is missing (Debian: apt-get install musl-tools)"
builder=${BUILDER:-}
if [ -z "$builder" ]; then
    for b in podman buildah docker; do
        if command -v "$b" >/dev/null; then builder=$b; break; fi
    done
fi
[ -n "$builder" ] || fail "no podman, buildah or docker to build the image with"

cargo build --release --locked --target "$target" --bin wirebench
bin=target/$target/release/wirebench
# Static, or the image (which has no libc) could not start it.
if ldd "$bin" >/dev/null 2>&1 && ! ldd "$bin" 2>&1 | grep -q "statically linked"; then
    fail "$bin is dynamically linked: $(ldd "$bin" 2>&1 | tr '\n' ' ')"
fi
"$bin" --version >/dev/null

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
strip -o "$ctx/wirebench" "$bin"
ca=/etc/ssl/certs/ca-certificates.crt
if [ -f "$ca" ]; then cp "$ca" "$ctx/"; else : > "$ctx/ca-certificates.crt"; fi

case "$builder" in
    buildah) buildah bud ${BUILD_FLAGS:-} -f deploy/Containerfile -t "$tag" "$ctx" ;;
    *) "$builder" build ${BUILD_FLAGS:-} -f deploy/Containerfile -t "$tag" "$ctx" ;;
esac
# Where the builder can also run containers, the image answers (some sandboxes refuse
# the runtime's setrlimit calls: then only this check is skipped).
if [ "$builder" != buildah ] && ! "$builder" run --rm --network none "$tag" --version; then
    echo "container.sh: note: $builder could not run the image here; it was built all the same" >&2
fi
echo "container.sh: built $tag: binary $(stat -c %s "$ctx/wirebench") bytes, $(stat -c %s "$ctx/ca-certificates.crt") bytes of CA certificates"
