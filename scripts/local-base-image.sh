#!/bin/sh
# Builds a local stand-in for the Dockerfile's base image, node:20-bookworm-slim, and imports it into Docker.
#
# Why: a build host with no container registry (air-gapped, or behind a firewall that lets only Debian's
# package mirror and an npm registry through) cannot pull the base image, so `docker build` stops at the first
# FROM. This script makes the same thing from what such a host can reach: a minimal Debian bookworm root
# (debootstrap, from the host's Debian mirror) plus this host's own Node 20, laid out as the official image lays
# it out (node, npm, npx and corepack under /usr/local, a `node` user with uid 1000, an entrypoint that runs
# node when the command is not a program, CMD ["node"]). The Dockerfile is then built unchanged: Docker's
# builder uses a local image before it tries a registry. docs/deployment.md, "A base image without a registry".
#
# Usage (as root, with debootstrap and a running Docker daemon):
#   scripts/local-base-image.sh
# Environment:
#   DEBIAN_MIRROR     the Debian mirror (default http://deb.debian.org/debian)
#   BASE_IMAGE_TAG    the tag to import as (default node:20-bookworm-slim)
#   EXTRA_CA_CERTS    a PEM file of extra certificate authorities npm must trust in the build (a registry
#                     mirror or an intercepting proxy with its own CA): copied into the image and named by
#                     NODE_EXTRA_CA_CERTS. Node's own CA list is used otherwise, as in the official image.
#   NPMRC             an npmrc copied to /usr/local/etc/npmrc (npm's global config), e.g. `registry=` a mirror
#   NPM_VERSION       the npm to put in the image, fetched from the npm registry (e.g. 10.8.2, the one Node 20
#                     ships with), instead of the host's own npm, which may have been upgraded
set -eu

debian_mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
base_image_tag=${BASE_IMAGE_TAG:-node:20-bookworm-slim}

node_binary=$(command -v node)
node_major=$("$node_binary" -p 'process.versions.node.split(".")[0]')
if [ "$node_major" != 20 ]; then
  echo "local-base-image: this host's node is $("$node_binary" --version), the image needs Node 20" >&2
  exit 1
fi
# npm and corepack live in the node_modules beside node's install prefix (/usr/lib or /usr/local/lib).
node_prefix=$(dirname "$(dirname "$(readlink -f "$node_binary")")")
node_modules_dir=$node_prefix/lib/node_modules
[ -f "$node_modules_dir/npm/bin/npm-cli.js" ] || {
  echo "local-base-image: npm not found under $node_modules_dir" >&2
  exit 1
}

rootfs=$(mktemp -d /var/tmp/node-bookworm-slim.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
# Commands inside the new root see none of this host's environment (its NODE_OPTIONS, NODE_EXTRA_CA_CERTS…).
in_rootfs() { env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin chroot "$rootfs" "$@"; }

echo "local-base-image: debootstrap bookworm (minbase) from $debian_mirror" >&2
debootstrap --variant=minbase bookworm "$rootfs" "$debian_mirror" >&2

# The same sources as debian:bookworm-slim, so the image's packages carry the current security fixes.
rm -f "$rootfs/etc/apt/sources.list"
cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $debian_mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${debian_mirror%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
in_rootfs sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get upgrade -y -q' >&2
# As in the slim image: no package lists, caches, manuals or documentation.
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
  "$rootfs"/usr/share/man/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/info/* "$rootfs"/var/log/*.log
: >"$rootfs/etc/resolv.conf"

# Node where the official image has it: /usr/local/bin, /usr/local/lib/node_modules, /usr/local/include/node.
mkdir -p "$rootfs/usr/local/bin" "$rootfs/usr/local/lib/node_modules" "$rootfs/usr/local/include"
cp "$node_binary" "$rootfs/usr/local/bin/node"
if [ -n "${NPM_VERSION:-}" ]; then
  npm pack --silent --pack-destination "$rootfs/tmp" "npm@$NPM_VERSION" >/dev/null
  mkdir "$rootfs/usr/local/lib/node_modules/npm"
  tar --no-same-owner -xzf "$rootfs"/tmp/npm-*.tgz --strip-components=1 -C "$rootfs/usr/local/lib/node_modules/npm"
  rm "$rootfs"/tmp/npm-*.tgz
else
  cp -a "$node_modules_dir/npm" "$rootfs/usr/local/lib/node_modules/npm"
fi
if [ -d "$node_modules_dir/corepack" ]; then
  cp -a "$node_modules_dir/corepack" "$rootfs/usr/local/lib/node_modules/corepack"
  ln -s ../lib/node_modules/corepack/dist/corepack.js "$rootfs/usr/local/bin/corepack"
fi
if [ -d "$node_prefix/include/node" ]; then cp -a "$node_prefix/include/node" "$rootfs/usr/local/include/node"; fi
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
# The host's node may need shared libraries a minimal root lacks: fail here rather than inside the build.
in_rootfs /usr/local/bin/node -e 'process.exit(0)'
in_rootfs /usr/local/bin/node /usr/local/bin/npm --version >/dev/null

in_rootfs groupadd --gid 1000 node
in_rootfs useradd --uid 1000 --gid node --shell /bin/bash --create-home node

# The official image's entrypoint: `docker run image --version` runs `node --version`; a program runs as is.
cat >"$rootfs/usr/local/bin/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
set -e
if [ "${1#-}" != "${1}" ] || [ -z "$(command -v "${1}")" ] || { [ -f "${1}" ] && ! [ -x "${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
EOF
chmod 755 "$rootfs/usr/local/bin/docker-entrypoint.sh"

set -- --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --change "ENV NODE_VERSION=$("$node_binary" -p process.versions.node)" \
  --change 'ENTRYPOINT ["docker-entrypoint.sh"]' \
  --change 'CMD ["node"]'
if [ -n "${EXTRA_CA_CERTS:-}" ]; then
  mkdir -p "$rootfs/usr/local/share/ca-certificates"
  cp "$EXTRA_CA_CERTS" "$rootfs/usr/local/share/ca-certificates/extra-ca-certs.pem"
  set -- "$@" --change "ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/extra-ca-certs.pem"
fi
if [ -n "${NPMRC:-}" ]; then
  mkdir -p "$rootfs/usr/local/etc"
  cp "$NPMRC" "$rootfs/usr/local/etc/npmrc"
fi

echo "local-base-image: importing as $base_image_tag" >&2
tar --numeric-owner -C "$rootfs" -c . | docker import "$@" - "$base_image_tag"
docker image inspect --format '{{.Id}} {{.Size}} bytes' "$base_image_tag"
