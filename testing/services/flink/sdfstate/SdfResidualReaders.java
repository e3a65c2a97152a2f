// SdfResidualReaders rewrites the two places in Beam 2.62's Flink runner that read an SDF
// self-checkpoint residual back when its timer fires, so that they also clear it:
//
//   ExecutableStageDoFnOperator$SdkHarnessDoFnRunner.onTimer   (streaming)
//   FlinkExecutableStageFunction.mapPartition                   (batch)
//
// In each, the one
//   invokeinterface org/apache/beam/sdk/state/ValueState.read()Ljava/lang/Object;
// becomes
//   invokestatic haade/sdfstate/ResidualSlots.take(ValueState)Ljava/lang/Object;
// (read, then clear; defined in flink/sdfstate/ResidualSlots.java). Same stack in, same stack
// out. SdfCheckpointSlots.java rewrites the writer to match. build.sh runs it once at install time:
//
//   java -cp <flink-shaded-asm-9 jar>:<beam-runners-flink jar> SdfResidualReaders.java OUT_DIR
//
// and writes the two classes under OUT_DIR, which flink.sh puts first on the job server's class
// path. It exits non-zero unless each method holds exactly one such call (another Beam
// version), so a version bump cannot silently drop the patch. Issue: apache/beam#27648.

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.shaded.asm9.org.objectweb.asm.ClassReader;
import org.apache.flink.shaded.asm9.org.objectweb.asm.ClassVisitor;
import org.apache.flink.shaded.asm9.org.objectweb.asm.ClassWriter;
import org.apache.flink.shaded.asm9.org.objectweb.asm.MethodVisitor;
import org.apache.flink.shaded.asm9.org.objectweb.asm.Opcodes;

public class SdfResidualReaders {
  static final String VALUE_STATE = "org/apache/beam/sdk/state/ValueState";
  static final String SLOTS = "haade/sdfstate/ResidualSlots";
  static final String[][] TARGETS = {
    {"org/apache/beam/runners/flink/translation/wrappers/streaming/ExecutableStageDoFnOperator$SdkHarnessDoFnRunner", "onTimer"},
    {"org/apache/beam/runners/flink/translation/functions/FlinkExecutableStageFunction", "mapPartition"},
  };

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: SdfResidualReaders OUT_DIR");
      System.exit(2);
    }
    for (String[] t : TARGETS) {
      patch(t[0], t[1], Path.of(args[0]));
    }
  }

  static void patch(String cls, String method, Path outDir) throws Exception {
    byte[] in;
    try (InputStream s = SdfResidualReaders.class.getClassLoader().getResourceAsStream(cls + ".class")) {
      if (s == null) {
        throw new IllegalStateException(cls + " is not on the class path");
      }
      in = s.readAllBytes();
    }
    ClassReader r = new ClassReader(in);
    ClassWriter w = new ClassWriter(r, ClassWriter.COMPUTE_MAXS);
    int[] replaced = {0};
    r.accept(new ClassVisitor(Opcodes.ASM9, w) {
      @Override
      public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] ex) {
        MethodVisitor mv = super.visitMethod(access, name, desc, sig, ex);
        if (!name.equals(method)) {
          return mv;
        }
        return new MethodVisitor(Opcodes.ASM9, mv) {
          @Override
          public void visitMethodInsn(int op, String owner, String mname, String mdesc, boolean itf) {
            if (op == Opcodes.INVOKEINTERFACE && owner.equals(VALUE_STATE)
                && mname.equals("read") && mdesc.equals("()Ljava/lang/Object;")) {
              replaced[0]++;
              super.visitMethodInsn(Opcodes.INVOKESTATIC, SLOTS, "take",
                  "(L" + VALUE_STATE + ";)Ljava/lang/Object;", false);
              return;
            }
            super.visitMethodInsn(op, owner, mname, mdesc, itf);
          }
        };
      }
    }, 0);
    if (replaced[0] != 1) {
      System.err.println("SdfResidualReaders: expected one ValueState.read() in " + cls + "." + method + ", found " + replaced[0]);
      System.exit(1);
    }
    Path out = outDir.resolve(cls + ".class");
    Files.createDirectories(out.getParent());
    Files.write(out, w.toByteArray());
    System.err.println("SdfResidualReaders: wrote " + out);
  }
}
