#!/usr/bin/env bash
# The PHP SDK's checks, as CI runs them: `php -l` on every file, `composer validate --strict`
# (Composer from Debian), then PHPUnit: unit tests (Guzzle's MockHandler) and integration tests against the real
# server built from this repository (sdks/launcher/launch-server.mjs; needs `npm run build` at the
# root first). `--unit` runs the unit tests only (no server, no Node.js).
#
# Without `composer install`, the tests load Debian's packaged dependencies; missing packages are
# installed when running as root with apt-get: php-cli php-curl php-mbstring php-xml phpunit
# php-guzzlehttp-guzzle php-psr-http-factory php-psr-log composer. Composer (Debian's) runs
# `composer validate --strict`, and the integration suite installs the SDK into a consumer project
# through a `path` repository, offline, against Debian's Guzzle (tests/Integration/ComposerConsumerTest.php).
set -euo pipefail
cd "$(dirname "$0")"
root="$(cd ../.. && pwd)"

missing=()
command -v php >/dev/null || missing+=(php-cli)
command -v phpunit >/dev/null || [ -x vendor/bin/phpunit ] || missing+=(phpunit)
command -v composer >/dev/null || missing+=(composer)
if command -v php >/dev/null; then
  modules="$(php -m)"
  grep -qix curl <<<"$modules" || missing+=(php-curl)
  grep -qix mbstring <<<"$modules" || missing+=(php-mbstring)
  grep -qix dom <<<"$modules" || missing+=(php-xml)
fi
if [ ! -f vendor/autoload.php ]; then
  [ -f /usr/share/php/GuzzleHttp/autoload.php ] || missing+=(php-guzzlehttp-guzzle)
  [ -f /usr/share/php/Psr/Http/Message/factory-autoload.php ] || missing+=(php-psr-http-factory)
  [ -f /usr/share/php/Psr/Log/autoload.php ] || missing+=(php-psr-log)
fi
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing ${missing[*]} (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 "${missing[@]}" >/dev/null
  else
    echo "!! missing: ${missing[*]} (apt-get install them, or composer install)" >&2
    exit 1
  fi
fi
echo "== $(php --version | head -n 1)"

echo "== php -l"
failed=0
while IFS= read -r -d '' file; do
  if ! out="$(php -l "$file" 2>&1)"; then
    echo "$out" >&2
    failed=1
  fi
done < <(find src tests examples -name '*.php' -print0)
[ "$failed" = 0 ] || { echo "!! php -l failed" >&2; exit 1; }

echo "== composer validate --strict"
COMPOSER_ALLOW_SUPERUSER=1 COMPOSER_DISABLE_NETWORK=1 composer validate --strict --no-interaction

phpunit=phpunit
[ -x vendor/bin/phpunit ] && phpunit=vendor/bin/phpunit
if [ "${1:-}" = "--unit" ]; then
  echo "== phpunit (unit)"
  exec "$phpunit" --configuration phpunit.xml.dist --testsuite unit
fi
if [ ! -f "$root/dist/server.js" ]; then
  echo "!! no server build: run \`npm run build\` in $root first (or $0 --unit)" >&2
  exit 1
fi
export FILESHARE_SDK_TEST_LOG="${FILESHARE_SDK_TEST_LOG:-$(mktemp -t fileshare-sdk-php-server.XXXXXX.log)}"
echo "== phpunit (unit + integration; server log: $FILESHARE_SDK_TEST_LOG)"
if ! "$phpunit" --configuration phpunit.xml.dist; then
  echo "!! phpunit failed; the last lines of the server's log:" >&2
  tail -n 40 "$FILESHARE_SDK_TEST_LOG" >&2 || true
  exit 1
fi
rm -f "$FILESHARE_SDK_TEST_LOG"
