#!/usr/bin/env bash
# build.sh LIBS OUT_DIR: build the SDF residual state patch (Beam issue #27648) for Beam
# 2.62's Flink job server into OUT_DIR, once per content of this directory (a stamp file).
#   - javac ResidualSlots.java: the slots the rewritten classes call (haade.sdfstate)
#   - java SdfCheckpointSlots.java: rewrites the handler's onCheckpoint (ASM) to store each
#     residual in the first free slot of its key and window, sdf_checkpoint:s<N>
#   - java SdfResidualReaders.java: rewrites the two readers to empty a slot as they read it
#   - java SdfStateCheck.java: the rewritten handler on Beam's in-memory state, or no stamp
#   - OUT_DIR/haade-sdfstate.jar: the classes as a jar. flink.sh start puts it first on the
#     job server's class path: the embedded Flink runs the tasks in that JVM, and a job sent
#     to a remote cluster ships the job server's class path jars (a directory is not shipped)
#     as its user jars, which Flink loads child-first. A cluster with Beam in its own lib/
#     needs it there too, sorted ahead of the Beam jars: lib/00-haade-sdfstate.jar.
# No Beam source is copied: the rewrites read Beam's classes from the jars in LIBS.
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
one() { # the one jar of LIBS whose name starts so
	local j
	j="$(ls "$LIBS"/"$1"-[0-9]*.jar 2>/dev/null | head -1)"
	[[ -n "$j" ]] || { echo "build.sh: no $1 jar in $LIBS" >&2; exit 1; }
	echo "$j"
}
asm="$(one flink-shaded-asm-9)"
"${JAVAC:-javac}" -nowarn -d "$OUT/classes" -cp "$LIBS/*" "$HERE/ResidualSlots.java"
"$JAVA" -cp "$asm:$(one beam-runners-java-fn-execution)" "$HERE/SdfCheckpointSlots.java" "$OUT/classes"
"$JAVA" -cp "$asm:$(ls "$LIBS"/beam-runners-flink-1.*.jar | head -1)" "$HERE/SdfResidualReaders.java" "$OUT/classes"
# The rewritten handler on Beam's in-memory state and timers: fails unless the state stays flat.
"$JAVA" -cp "$OUT/classes:$LIBS/*" "$HERE/SdfStateCheck.java"
(cd "$OUT/classes" && "${JAR:-jar}" cf ../haade-sdfstate.jar .)
echo "$stamp" >"$OUT/.stamp"
