#!/usr/bin/env bash
# Refreshes the console's vendored graph library (Cytoscape.js, ADR 0027) from the npm
# registry: the released dist/cytoscape.min.js and its LICENSE, into
# services/query/console/static/vendor/. Run by a person, never by the build:
#
#   scripts/ui/vendor.sh            # the version pinned below
#   scripts/ui/vendor.sh 3.35.0     # another release; then update VERSION below
#
# Needs curl, tar and sha512sum (no Node.js): it reads the package's metadata and tarball
# from the registry and checks the tarball against the registry's integrity digest.
set -euo pipefail
VERSION="${1:-3.34.4}"
REGISTRY="${NPM_REGISTRY:-https://registry.npmjs.org}"
cd "$(dirname "$0")/../.."
dest=services/query/console/static/vendor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

curl -fsSL "$REGISTRY/cytoscape/$VERSION" -o "$tmp/meta.json"
# The registry's JSON may or may not have spaces around its colons.
field() { grep -o "\"$1\" *: *\"[^\"]*\"" "$tmp/meta.json" | head -1 | sed 's/.*: *"\(.*\)"/\1/'; }
tarball=$(field tarball)
integrity=$(field integrity | sed -n 's/^sha512-//p')
if [ -z "$tarball" ] || [ -z "$integrity" ]; then
  echo "no tarball or integrity for cytoscape@$VERSION in the registry's answer" >&2
  exit 1
fi
curl -fsSL "$tarball" -o "$tmp/pkg.tgz"
got=$(sha512sum "$tmp/pkg.tgz" | cut -d' ' -f1 | xxd -r -p | base64 -w0)
if [ "$got" != "$integrity" ]; then
  echo "cytoscape@$VERSION: tarball digest $got differs from the registry's $integrity" >&2
  exit 1
fi
tar -xzf "$tmp/pkg.tgz" -C "$tmp" package/dist/cytoscape.min.js package/LICENSE
mkdir -p "$dest"
cp "$tmp/package/dist/cytoscape.min.js" "$dest/cytoscape.min.js"
cp "$tmp/package/LICENSE" "$dest/cytoscape.LICENSE"
echo "cytoscape $VERSION sha512-$integrity" >"$dest/VERSION"
echo "vendored cytoscape@$VERSION into $dest"
