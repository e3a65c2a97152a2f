#!/usr/bin/env bash
# build.sh LIBS OUT_DIR: build the SDF residual state patch (Beam issue #27648) for Beam
# 2.62's Flink job server into OUT_DIR, once per content of this directory (a stamp file).
#   - javac BundleCheckpointHandlers.java: the handler that stores residuals in fixed slots
#   - java SdfResidualReaders.java: the two readers, rewritten to clear a slot when it fires
#   - java SdfStateCheck.java: the patched handler on Beam's in-memory state, or no stamp
#   - OUT_DIR/haade-sdfstate.jar: the classes as a jar. flink.sh start puts it first on the
#     job server's class path: the embedded Flink runs the tasks in that JVM, and a job sent
#     to a remote cluster ships the job server's class path jars (a directory is not shipped)
#     as its user jars, which Flink loads child-first. A cluster with Beam in its own lib/
#     needs it there too, sorted ahead of the Beam jars: lib/00-haade-sdfstate.jar.
# flink.sh install calls it.
set -euo pipefail
LIBS="$1"
OUT="$2"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
stamp="$(cat "$HERE"/*.java "$HERE"/build.sh | sha256sum | cut -d' ' -f1)"
[[ -f "$OUT/.stamp" && "$(cat "$OUT/.stamp")" == "$stamp" ]] && exit 0
JAVA="${JAVA:-java}"
rm -rf "$OUT"
mkdir -p "$OUT/classes"
flink_runner="$(ls "$LIBS"/beam-runners-flink-1.*.jar | head -1)"
"${JAVAC:-javac}" -nowarn -d "$OUT/classes" -cp "$LIBS/*" "$HERE/BundleCheckpointHandlers.java"
"$JAVA" -cp "$(ls "$LIBS"/flink-shaded-asm-9-*.jar | head -1):$flink_runner" \
	"$HERE/SdfResidualReaders.java" "$OUT/classes"
# The handler on Beam's in-memory state and timers: fails unless the state stays flat.
"$JAVA" -cp "$OUT/classes:$LIBS/*" "$HERE/SdfStateCheck.java"
(cd "$OUT/classes" && "${JAR:-jar}" cf ../haade-sdfstate.jar .)
echo "$stamp" >"$OUT/.stamp"
