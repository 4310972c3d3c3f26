#!/usr/bin/env bash
# Refreshes the Swagger UI files that the API reference page (/docs) embeds,
# from the npm registry. To move to another release, change version, run
# this script, and run the tests: the browser test loads the page.
#
#   bash server/apidocs/refresh.sh
set -euo pipefail
version=5.35.0
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# npm pack checks the tarball against the registry's integrity hash.
(cd "$work" && npm pack --silent "swagger-ui-dist@$version" >/dev/null)
tar -xzf "$work/swagger-ui-dist-$version.tgz" -C "$work"
pkg="$work/package"

# The bundle and its style sheet are all the page needs; their source-map
# comments are dropped, so that no browser asks for maps that are not
# served.
sed '/^\/\*# sourceMappingURL=/d; /^\/\/# sourceMappingURL=/d' "$pkg/swagger-ui-bundle.js" >"$here/swagger-ui-bundle.js"
sed '/^\/\*# sourceMappingURL=/d; /^\/\/# sourceMappingURL=/d' "$pkg/swagger-ui.css" >"$here/swagger-ui.css"
cp "$pkg/LICENSE" "$here/LICENSE"
cp "$pkg/NOTICE" "$here/NOTICE"
echo "swagger-ui-dist $version" >"$here/VERSION"
echo "server/apidocs: swagger-ui-dist $version"
