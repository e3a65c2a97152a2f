// SdfCheckpointSlots rewrites where Beam 2.62's Flink job server stores an SDF self-checkpoint
// residual, so that a key's residuals reuse a small fixed set of state slots instead of one new
// state per residual (Beam issue #27648).
//
// The method is BundleCheckpointHandlers$StateAndTimerBundleCheckpointHandler.onCheckpoint
// (beam-runners-java-fn-execution). For each residual it names a tag after a fresh counter
// value (constructSdfCheckpointId), and for each of the residual's windows it sets a
// processing-time timer with that tag as its id and writes the residual to a ValueState of the
// same tag. Nothing ever clears that state, so the keyed state grows by one value per
// self-checkpoint. This program leaves all of that in place and inserts one step right after
// the window's state namespace is stored:
//
//   aload <stateInternals>; aload <namespace>; aload 0; getfield residualCoder
//   invokestatic haade/sdfstate/ResidualSlots.free(StateInternals, StateNamespace, Coder)String
//   astore <tag>
//
// so the timer and the state that follow use the first free slot, "sdf_checkpoint:s<N>", of
// that key and window. SdfResidualReaders.java makes the readers empty a slot as they read it.
// The local variables are found from the code (the store after constructSdfCheckpointId, after
// stateInternalsForKey, after StateNamespaces.window), and it exits non-zero unless each
// appears exactly once and the tag is then loaded exactly twice (the timer and the state), so
// another Beam version cannot silently drop the patch. build.sh runs it once at install time:
//
//   java -cp <flink-shaded-asm-9 jar>:<beam-runners-java-fn-execution jar> SdfCheckpointSlots.java OUT_DIR
//
// and writes the class under OUT_DIR, which goes into haade-sdfstate.jar.

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.shaded.asm9.org.objectweb.asm.ClassReader;
import org.apache.flink.shaded.asm9.org.objectweb.asm.ClassVisitor;
import org.apache.flink.shaded.asm9.org.objectweb.asm.ClassWriter;
import org.apache.flink.shaded.asm9.org.objectweb.asm.MethodVisitor;
import org.apache.flink.shaded.asm9.org.objectweb.asm.Opcodes;

public class SdfCheckpointSlots {
  static final String CLASS =
      "org/apache/beam/runners/fnexecution/control/BundleCheckpointHandlers$StateAndTimerBundleCheckpointHandler";
  static final String SLOTS = "haade/sdfstate/ResidualSlots";
  static final String STATE_INTERNALS = "org/apache/beam/runners/core/StateInternals";
  static final String NAMESPACE = "org/apache/beam/runners/core/StateNamespace";
  static final String CODER = "org/apache/beam/sdk/coders/Coder";

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: SdfCheckpointSlots OUT_DIR");
      System.exit(2);
    }
    byte[] in;
    try (InputStream s = SdfCheckpointSlots.class.getClassLoader().getResourceAsStream(CLASS + ".class")) {
      if (s == null) {
        throw new IllegalStateException(CLASS + " is not on the class path");
      }
      in = s.readAllBytes();
    }
    ClassReader r = new ClassReader(in);
    ClassWriter w = new ClassWriter(r, ClassWriter.COMPUTE_MAXS);
    Rewrite rw = new Rewrite();
    boolean[] coderField = {false};
    r.accept(new ClassVisitor(Opcodes.ASM9, w) {
      @Override
      public org.apache.flink.shaded.asm9.org.objectweb.asm.FieldVisitor visitField(
          int access, String name, String desc, String sig, Object value) {
        if (name.equals("residualCoder") && desc.equals("L" + CODER + ";")) {
          coderField[0] = true;
        }
        return super.visitField(access, name, desc, sig, value);
      }

      @Override
      public MethodVisitor visitMethod(int access, String name, String desc, String sig, String[] ex) {
        MethodVisitor mv = super.visitMethod(access, name, desc, sig, ex);
        if (!name.equals("onCheckpoint")
            || !desc.equals("(Lorg/apache/beam/model/fnexecution/v1/BeamFnApi$ProcessBundleResponse;)V")) {
          return mv;
        }
        rw.methods++;
        return rw.visitor(mv);
      }
    }, 0);
    String problem = rw.problem();
    if (!coderField[0]) {
      problem = "no field residualCoder of type Coder";
    }
    if (problem != null) {
      System.err.println("SdfCheckpointSlots: " + CLASS + ".onCheckpoint is not the code this patch expects (another Beam version?): " + problem);
      System.exit(1);
    }
    Path out = Path.of(args[0], CLASS + ".class");
    Files.createDirectories(out.getParent());
    Files.write(out, w.toByteArray());
    System.err.println("SdfCheckpointSlots: wrote " + out);
  }

  /** The state of the rewrite of one onCheckpoint, and what it found. */
  static final class Rewrite {
    int methods;
    int tagVar = -1, stateVar = -1, tagStores, stateStores, inserted, tagLoads;
    // What the previous instruction was, when its result is about to be stored.
    static final int NONE = 0, TAG = 1, STATE = 2, NAMESPACE_OF_WINDOW = 3;
    int pending = NONE;

    String problem() {
      if (methods != 1) return methods + " onCheckpoint methods";
      if (tagStores != 1) return "the tag of constructSdfCheckpointId is stored " + tagStores + " times, want 1";
      if (stateStores != 1) return "the StateInternals of stateInternalsForKey is stored " + stateStores + " times, want 1";
      if (inserted != 1) return inserted + " stored StateNamespaces.window results, want 1";
      if (tagLoads != 2) return "the tag is loaded " + tagLoads + " times after the namespace, want 2 (setTimer, StateTags.value)";
      return null;
    }

    MethodVisitor visitor(MethodVisitor mv) {
      return new MethodVisitor(Opcodes.ASM9, mv) {
        @Override
        public void visitMethodInsn(int op, String owner, String name, String desc, boolean itf) {
          super.visitMethodInsn(op, owner, name, desc, itf);
          pending = NONE;
          if (op == Opcodes.INVOKESTATIC && owner.equals(CLASS) && name.equals("constructSdfCheckpointId")
              && desc.equals("(Ljava/lang/String;I)Ljava/lang/String;")) {
            pending = TAG;
          } else if (op == Opcodes.INVOKEINTERFACE && owner.equals("org/apache/beam/runners/core/StateInternalsFactory")
              && name.equals("stateInternalsForKey") && desc.equals("(Ljava/lang/Object;)L" + STATE_INTERNALS + ";")) {
            pending = STATE;
          } else if (op == Opcodes.INVOKESTATIC && owner.equals("org/apache/beam/runners/core/StateNamespaces")
              && name.equals("window") && desc.endsWith(")L" + NAMESPACE + ";")) {
            pending = NAMESPACE_OF_WINDOW;
          }
        }

        @Override
        public void visitVarInsn(int op, int var) {
          int was = pending;
          pending = NONE;
          super.visitVarInsn(op, var);
          if (op == Opcodes.ALOAD && var == tagVar && inserted > 0) {
            tagLoads++;
          }
          if (op != Opcodes.ASTORE) {
            return;
          }
          if (was == TAG) {
            tagStores++;
            tagVar = var;
          } else if (was == STATE) {
            stateStores++;
            stateVar = var;
          } else if (was == NAMESPACE_OF_WINDOW && tagStores == 1 && stateStores == 1) {
            // The window's namespace is in local var: the tag becomes that key and window's
            // first free slot.
            inserted++;
            super.visitVarInsn(Opcodes.ALOAD, stateVar);
            super.visitVarInsn(Opcodes.ALOAD, var);
            super.visitVarInsn(Opcodes.ALOAD, 0);
            super.visitFieldInsn(Opcodes.GETFIELD, CLASS, "residualCoder", "L" + CODER + ";");
            super.visitMethodInsn(Opcodes.INVOKESTATIC, SLOTS, "free",
                "(L" + STATE_INTERNALS + ";L" + NAMESPACE + ";L" + CODER + ";)Ljava/lang/String;", false);
            super.visitVarInsn(Opcodes.ASTORE, tagVar);
          }
        }

        @Override
        public void visitInsn(int op) { pending = NONE; super.visitInsn(op); }

        @Override
        public void visitFieldInsn(int op, String o, String n, String d) { pending = NONE; super.visitFieldInsn(op, o, n, d); }

        @Override
        public void visitTypeInsn(int op, String t) { pending = NONE; super.visitTypeInsn(op, t); }

        @Override
        public void visitLdcInsn(Object v) { pending = NONE; super.visitLdcInsn(v); }

        @Override
        public void visitIntInsn(int op, int v) { pending = NONE; super.visitIntInsn(op, v); }

        @Override
        public void visitJumpInsn(int op, org.apache.flink.shaded.asm9.org.objectweb.asm.Label l) { pending = NONE; super.visitJumpInsn(op, l); }
      };
    }
  }
}
