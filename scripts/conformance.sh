#!/usr/bin/env bash
# Fills .conformance/ (gitignored) with the two public suites the runtime's
# conformance tests read when ../shared/conformance is not beside the
# repository:
#   json-patch-tests/     the RFC 6902 suite, from the npm package
#                         json-patch-test-suite (1.1.0: 91 records)
#   json-pointer-format/  json-pointer.json of the JSON-Schema-Test-Suite,
#                         from Debian's package json-schema-test-suite
#                         (tests/draft7/optional/format: 32 cases)
# Each folder gets a SOURCE file naming where it came from. Needs npm (for
# the first) and apt-get with dpkg-deb (for the second); run it as root or
# with apt's download working for your user. The tests look in
# $PATCHBENCH_CONFORMANCE, then ../shared/conformance, then .conformance.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.conformance
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$out/json-patch-tests" "$out/json-pointer-format"

echo "== json-patch-test-suite@1.1.0 (npm registry)"
command -v npm >/dev/null || { echo "conformance.sh: npm is needed for the RFC 6902 suite" >&2; exit 1; }
(cd "$tmp" && npm pack --silent json-patch-test-suite@1.1.0 >/dev/null)
tar -xzf "$tmp"/json-patch-test-suite-1.1.0.tgz -C "$tmp"
cp "$tmp"/package/tests.json "$tmp"/package/spec_tests.json "$out/json-patch-tests/"
printf 'npm json-patch-test-suite@1.1.0\nLicence: Apache-2.0 (its package.json)\n' >"$out/json-patch-tests/SOURCE"

echo "== json-schema-test-suite (Debian package)"
command -v apt-get >/dev/null || { echo "conformance.sh: apt-get is needed for the JSON Pointer suite (Debian's json-schema-test-suite)" >&2; exit 1; }
if ! (cd "$tmp" && apt-get download -qq json-schema-test-suite 2>/dev/null); then
  apt-get update -qq
  (cd "$tmp" && apt-get download -qq json-schema-test-suite)
fi
deb=$(ls "$tmp"/json-schema-test-suite_*.deb)
dpkg-deb -x "$deb" "$tmp/deb"
cp "$tmp"/deb/usr/share/json-schema-test-suite/tests/draft7/optional/format/json-pointer.json "$out/json-pointer-format/"
version=$(dpkg-deb -f "$deb" Version)
printf 'Debian json-schema-test-suite %s: tests/draft7/optional/format/json-pointer.json\nLicence: MIT (the package'"'"'s copyright file)\n' "$version" >"$out/json-pointer-format/SOURCE"
echo "conformance.sh: suites in $out/ (the tests find them there)"
