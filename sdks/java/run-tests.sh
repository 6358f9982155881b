#!/usr/bin/env bash
# Builds the Java SDK and runs all its tests (unit and integration) offline, with Debian's jars:
# javac + the JUnit console launcher (Debian ships none of the Maven plugins a `mvn -o` build
# needs; pom.xml is for users, with Maven Central). Exits non-zero on any failure.
#
#   bash sdks/java/run-tests.sh              # everything
#   bash sdks/java/run-tests.sh --unit       # unit tests only (no server, no Node.js)
#   bash sdks/java/run-tests.sh --unit --install   # and put the jars in ~/.m2 (dev.fileshare:fileshare-sdk)
#   JUNIT_ARGS='--select-class dev.fileshare.ProAccountIT' bash sdks/java/run-tests.sh
#
# Builds build/fileshare-sdk-<version>.jar with its -sources.jar and -javadoc.jar beside it (the
# artifacts `mvn install` attaches), and compiles the examples against the jar.
#
# Needs: JDK 17+, the Debian packages junit5 and libjackson2-databind-java (installed here when
# missing and we are root), and for the integration tests Node.js plus the server built at the
# repository root (dist/; built here with `npm run build` when missing or older than src/).
set -euo pipefail
cd "$(dirname "$0")"
SDK_DIR=$(pwd)
ROOT=$(cd ../.. && pwd)
J=/usr/share/java
UNIT_ONLY=0
INSTALL=0
for arg in "$@"; do
  case "$arg" in
    --unit) UNIT_ONLY=1 ;;
    --install) INSTALL=1 ;;
    *) echo "unknown option $arg (--unit, --install)" >&2; exit 2 ;;
  esac
done
VERSION=$(sed -n 's:^  <version>\(.*\)</version>$:\1:p' pom.xml | head -1)
[ -n "$VERSION" ] || { echo "no <version> in pom.xml" >&2; exit 1; }

log() { echo "== [java sdk] $*"; }

# 1. Toolchain and jars.
command -v javac >/dev/null || { echo "javac (JDK 17+) is required" >&2; exit 1; }
need=()
[ -f "$J/jackson-databind.jar" ] || need+=(libjackson2-databind-java)
[ -f "$J/junit-platform-console-standalone.jar" ] || need+=(junit5)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    log "installing ${need[*]}"
    apt-get install -y -o DPkg::Lock::Timeout=600 "${need[@]}" >/dev/null \
      || { apt-get update >/dev/null && apt-get install -y -o DPkg::Lock::Timeout=600 "${need[@]}" >/dev/null; }
  else
    echo "missing Debian packages: ${need[*]} (apt-get install ${need[*]})" >&2
    exit 1
  fi
fi
JACKSON="$J/jackson-databind.jar:$J/jackson-core.jar:$J/jackson-annotations.jar"
JUNIT_API="$J/junit-jupiter-api.jar:$J/junit-jupiter-params.jar:$J/apiguardian-api.jar:$J/opentest4j.jar:$J/junit-platform-commons.jar"

# 2. Compile: the SDK (lint warnings are errors), the tests, the examples; check the javadoc.
start=$(date +%s)
rm -rf build
mkdir -p build/classes build/test-classes build/examples
log "javac $(javac -version 2>&1 | cut -d' ' -f2)"
javac --release 17 -Xlint:all -Werror -encoding UTF-8 -cp "$JACKSON" -d build/classes $(find src/main/java -name '*.java')
javac --release 17 -encoding UTF-8 -cp "build/classes:$JACKSON:$JUNIT_API" -d build/test-classes $(find src/test/java -name '*.java')
log "javadoc (doclint: every public type and member documented)"
javadoc -quiet -Xdoclint:all -Werror -encoding UTF-8 -cp "$JACKSON" -d build/javadoc \
  -sourcepath src/main/java dev.fileshare >/dev/null
# The jar (with its Automatic-Module-Name), its sources and its javadoc: the artifacts of `mvn install`.
JAR="build/fileshare-sdk-$VERSION.jar"
printf 'Automatic-Module-Name: dev.fileshare\nImplementation-Title: fileshare-sdk\nImplementation-Version: %s\n' "$VERSION" > build/MANIFEST.MF
jar --create --file "$JAR" --manifest build/MANIFEST.MF -C build/classes dev
jar --create --file "build/fileshare-sdk-$VERSION-sources.jar" -C src/main/java dev
jar --create --file "build/fileshare-sdk-$VERSION-javadoc.jar" -C build/javadoc .
for suffix in "" -sources -javadoc; do
  jar --list --file "build/fileshare-sdk-$VERSION$suffix.jar" | grep -q 'dev/fileshare/FileshareClient' \
    || { echo "build/fileshare-sdk-$VERSION$suffix.jar lacks FileshareClient" >&2; exit 1; }
done
# The examples compile against the jar alone (what a user's project sees).
javac --release 17 -Xlint:all -encoding UTF-8 -cp "$JAR:$JACKSON" -d build/examples examples/*.java
log "built $JAR (+ -sources.jar, -javadoc.jar)"
if [ "$INSTALL" = 1 ]; then
  repo="${MAVEN_REPO:-$HOME/.m2/repository}/dev/fileshare/fileshare-sdk/$VERSION"
  mkdir -p "$repo"
  cp pom.xml "$repo/fileshare-sdk-$VERSION.pom"
  cp build/fileshare-sdk-"$VERSION"*.jar "$repo/"
  log "installed dev.fileshare:fileshare-sdk:$VERSION in $repo"
fi

# 3. The server for the integration tests.
if [ "$UNIT_ONLY" = 0 ]; then
  command -v node >/dev/null || { echo "node is required for the integration tests (or pass --unit)" >&2; exit 1; }
  # tsc rewrites only the outputs that changed: compare src/ with its build info (else server.js).
  stamp="$ROOT/dist/.tsbuildinfo"
  [ -f "$stamp" ] || stamp="$ROOT/dist/server.js"
  if [ ! -f "$ROOT/dist/server.js" ] || [ -n "$(find "$ROOT/src" -newer "$stamp" -name '*.ts' -print -quit)" ]; then
    log "building the server (npm run build at the repository root)"
    (cd "$ROOT" && npm run build --silent)
  fi
fi

# 4. Run. A small heap: a 200 MiB upload must fit in it.
select=(--scan-class-path build/test-classes)
if [ "$UNIT_ONLY" = 1 ]; then select+=(--exclude-classname '.*IT$'); else select+=(--include-classname '.*(Test|IT)$'); fi
[ -n "${JUNIT_ARGS:-}" ] && select=() # explicit selectors replace the scan
# shellcheck disable=SC2086
java -Xmx128m \
  -Dfileshare.sdkClasspath="$SDK_DIR/build/classes:$JACKSON" \
  -Dfileshare.sdkDir="$SDK_DIR" \
  -Dfileshare.examplesClasses="$SDK_DIR/build/examples" \
  -Dfileshare.launcherLog="$SDK_DIR/build/launcher.log" \
  -jar "$J/junit-platform-console-standalone.jar" \
  --disable-banner --disable-ansi-colors --details=tree --fail-if-no-tests \
  --class-path "build/classes:build/test-classes:$JACKSON" \
  --reports-dir build/test-reports \
  "${select[@]}" ${JUNIT_ARGS:-}
log "passed in $(( $(date +%s) - start )) s"
