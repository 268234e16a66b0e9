#!/usr/bin/env bash
# The artifacts as an application gets them: after `mvn -Prelease install` (what a release
# deploys), checks that every library was installed with its -sources and -javadoc jars and an
# Automatic-Module-Name, that nvmeof-protocol is a named module a modular application can
# require, that nvmeof-bom was installed and names every library, then builds a
# new Maven project whose dependencies are the README's XML for the initiator and the testing
# artifact, word for word, around the embedded-target guide's example (examples/), and runs its
# tests against those installed artifacts. Gradle is not installed on these machines: its lines
# in the README are not run here (the script says so).
# Uses Maven's local repository as `mvn` does (MAVEN_OPTS -Dmaven.repo.local=..., else ~/.m2).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
repo=$(sed -n 's/.*-Dmaven.repo.local=\([^ ]*\).*/\1/p' <<<"${MAVEN_OPTS:-}")
repo=${repo:-$HOME/.m2/repository}
version=$(sed -n '0,/<version>/s/.*<version>\(.*\)<\/version>.*/\1/p' "$top/pom.xml")
status=0
fail() { echo "FAILED: $*"; status=1; }

echo "== installed artifacts of version $version in $repo"
for lib in protocol fabric rdma target initiator testing nbd; do
  d=$repo/io/nvmeof/nvmeof-$lib/$version
  for kind in "" -sources -javadoc; do
    [ -s "$d/nvmeof-$lib-$version$kind.jar" ] || fail "nvmeof-$lib-$version$kind.jar is not installed"
  done
  name=$(unzip -p "$d/nvmeof-$lib-$version.jar" META-INF/MANIFEST.MF 2>/dev/null | tr -d '\r' \
    | sed -n 's/^Automatic-Module-Name: //p')
  [ "$name" = "io.nvmeof.$lib" ] && echo "   nvmeof-$lib: jar, sources, javadoc; module $name" \
    || fail "nvmeof-$lib's Automatic-Module-Name is '$name', not io.nvmeof.$lib"
  grep -q "<artifactId>nvmeof-$lib</artifactId>" "$repo/io/nvmeof/nvmeof-bom/$version/nvmeof-bom-$version.pom" 2>/dev/null \
    || fail "nvmeof-bom does not name nvmeof-$lib"
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== nvmeof-protocol is a named module: a modular application requires it"
pjar=$repo/io/nvmeof/nvmeof-protocol/$version/nvmeof-protocol-$version.jar
mkdir -p "$work/mod/src/org.example.wire/org/example/wire"
cat >"$work/mod/src/org.example.wire/module-info.java" <<'JAVA'
module org.example.wire {
    requires io.nvmeof.protocol;
}
JAVA
cat >"$work/mod/src/org.example.wire/org/example/wire/Main.java" <<'JAVA'
package org.example.wire;

public class Main {
    public static void main(String[] args) {
        System.out.println(io.nvmeof.protocol.Status.INVALID_FIELD);
    }
}
JAVA
if javac -d "$work/mod/out" -p "$pjar" --module-source-path "$work/mod/src" -m org.example.wire 2>"$work/javac.log" \
   && said=$(java -p "$pjar:$work/mod/out" -m org.example.wire/org.example.wire.Main 2>&1) \
   && [[ "$said" == *"Invalid Field in Command"* ]]; then
  echo "   compiled and ran on the module path: $said"
else
  cat "$work/javac.log"; echo "$said"; fail "a modular application cannot require io.nvmeof.protocol"
fi

echo "== a new Maven project from the README's dependency XML"
# the README's XML blocks for the initiator and the testing artifact, as they are written there
deps=$(awk '/^```xml$/ {x = 1; b = ""; next} /^```$/ && x {x = 0; if (b ~ /nvmeof-(initiator|testing)</) print b; next}
  x {b = b "    " $0 "\n"}' "$top/README.md")
[ "$(grep -c '<dependency>' <<<"$deps")" = 2 ] || fail "the README does not show the initiator's and the testing artifact's XML"
junit=$(sed -n 's/.*<junit.version>\(.*\)<\/junit.version>.*/\1/p' "$top/pom.xml")
plugin() { grep -A1 "<artifactId>$1</artifactId>" "$top/pom.xml" | sed -n 's/.*<version>\(.*\)<\/version>.*/\1/p' | head -1; }
mkdir -p "$work/app/src/main/java/io/nvmeof/examples" "$work/app/src/test/java/io/nvmeof/examples"
cp "$top/examples/src/main/java/io/nvmeof/examples/RecordStore.java" "$work/app/src/main/java/io/nvmeof/examples/"
cp "$top/examples/src/test/java/io/nvmeof/examples/RecordStoreTest.java" "$work/app/src/test/java/io/nvmeof/examples/"
cat >"$work/app/pom.xml" <<POM
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.example</groupId>
  <artifactId>records</artifactId>
  <version>1</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
$deps
    <!-- what any JUnit 5 project has: the engine its tests run on -->
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter</artifactId>
      <version>$junit</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><artifactId>maven-compiler-plugin</artifactId><version>$(plugin maven-compiler-plugin)</version></plugin>
      <plugin><artifactId>maven-surefire-plugin</artifactId><version>$(plugin maven-surefire-plugin)</version></plugin>
      <plugin><artifactId>maven-resources-plugin</artifactId><version>$(plugin maven-resources-plugin)</version></plugin>
    </plugins>
  </build>
</project>
POM
sed 's/^/   /' <<<"$deps"
if (cd "$work/app" && mvn -B -q test -Dmaven.repo.local="$repo") >"$work/mvn.log" 2>&1; then
  ran=$(cat "$work"/app/target/surefire-reports/*.txt | awk -F'[ ,]+' '/^Tests run:/ && /Failures: 0, Errors: 0/ {n += $3} END {print n + 0}')
  [ "${ran:-0}" -gt 0 ] && echo "   the application's $ran tests pass against the installed artifacts" \
    || fail "the application ran no test"
else
  tail -40 "$work/mvn.log"; fail "the application did not build or its tests failed"
fi
command -v gradle >/dev/null || echo "== Gradle: not installed here; the README's Gradle lines are not run"
[ $status = 0 ] && echo "artifacts: PASS" || echo "artifacts: FAILED"
exit $status
