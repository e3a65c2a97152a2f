// BindLoopback rewrites one method of Beam's gRPC server factory so that Beam's servers
// bind the address Beam already computes for them, instead of every interface.
//
// Beam 2.62's ServerFactory.InetSocketAddressServerFactory.createServer(services, address)
// builds its server with NettyServerBuilder.forPort(address.getPort()): the job service,
// the artifact service and the Fn API servers (control, data, state, logging) listen on
// 0.0.0.0 whatever --job-host says. The end-to-end tier listens on 127.0.0.1 only, so
// flink.sh runs this once at install time:
//
//   java -cp <flink-shaded-asm-9 jar>:<beam-sdks-java-core jar> BindLoopback.java OUT_DIR
//
// It reads the class from the class path, replaces
//   invokevirtual InetSocketAddress.getPort()I; invokestatic NettyServerBuilder.forPort(I)
// with
//   invokestatic NettyServerBuilder.forAddress(SocketAddress)
// and writes the class under OUT_DIR, which flink.sh puts first on the job server's class
// path. The address is then the --job-host:port of the job and artifact services, and
// InetAddress.getLoopbackAddress() for the servers Beam starts on dynamic ports. It exits
// non-zero when the code it expects is not there (another Beam version), so a version bump
// cannot silently drop the patch.
//
// Needs only the JDK (Java 11+ runs a single source file) and ASM as shaded inside Flink.

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.shaded.asm9.org.objectweb.asm.ClassReader;
import org.apache.flink.shaded.asm9.org.objectweb.asm.ClassVisitor;
import org.apache.flink.shaded.asm9.org.objectweb.asm.ClassWriter;
import org.apache.flink.shaded.asm9.org.objectweb.asm.MethodVisitor;
import org.apache.flink.shaded.asm9.org.objectweb.asm.Opcodes;

public class BindLoopback {
  static final String CLASS = "org/apache/beam/sdk/fn/server/ServerFactory$InetSocketAddressServerFactory";
  static final String NETTY = "org/apache/beam/vendor/grpc/v1p60p1/io/grpc/netty/NettyServerBuilder";

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: BindLoopback OUT_DIR");
      System.exit(2);
    }
    byte[] in;
    try (InputStream s = BindLoopback.class.getClassLoader().getResourceAsStream(CLASS + ".class")) {
      if (s == null) {
        throw new IllegalStateException(CLASS + " is not on the class path");
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
        if (!name.equals("createServer") || !desc.startsWith("(Ljava/util/List;Ljava/net/InetSocketAddress;)")) {
          return mv;
        }
        return new MethodVisitor(Opcodes.ASM9, mv) {
          boolean pendingGetPort; // a getPort() call held back until we see what follows

          @Override
          public void visitMethodInsn(int op, String owner, String mname, String mdesc, boolean itf) {
            if (op == Opcodes.INVOKEVIRTUAL && owner.equals("java/net/InetSocketAddress")
                && mname.equals("getPort") && mdesc.equals("()I")) {
              flush();
              pendingGetPort = true;
              return;
            }
            if (pendingGetPort && op == Opcodes.INVOKESTATIC && owner.equals(NETTY)
                && mname.equals("forPort") && mdesc.equals("(I)L" + NETTY + ";")) {
              pendingGetPort = false;
              replaced[0]++;
              super.visitMethodInsn(Opcodes.INVOKESTATIC, NETTY, "forAddress",
                  "(Ljava/net/SocketAddress;)L" + NETTY + ";", false);
              return;
            }
            flush();
            super.visitMethodInsn(op, owner, mname, mdesc, itf);
          }

          void flush() {
            if (pendingGetPort) {
              pendingGetPort = false;
              super.visitMethodInsn(Opcodes.INVOKEVIRTUAL, "java/net/InetSocketAddress", "getPort", "()I", false);
            }
          }

          @Override
          public void visitInsn(int op) { flush(); super.visitInsn(op); }

          @Override
          public void visitVarInsn(int op, int v) { flush(); super.visitVarInsn(op, v); }

          @Override
          public void visitLdcInsn(Object v) { flush(); super.visitLdcInsn(v); }

          @Override
          public void visitFieldInsn(int op, String o, String n, String d) { flush(); super.visitFieldInsn(op, o, n, d); }

          @Override
          public void visitTypeInsn(int op, String t) { flush(); super.visitTypeInsn(op, t); }

          @Override
          public void visitIntInsn(int op, int v) { flush(); super.visitIntInsn(op, v); }

          @Override
          public void visitJumpInsn(int op, org.apache.flink.shaded.asm9.org.objectweb.asm.Label l) { flush(); super.visitJumpInsn(op, l); }

          @Override
          public void visitLabel(org.apache.flink.shaded.asm9.org.objectweb.asm.Label l) { flush(); super.visitLabel(l); }

          @Override
          public void visitInvokeDynamicInsn(String n, String d, org.apache.flink.shaded.asm9.org.objectweb.asm.Handle h, Object... a) {
            flush();
            super.visitInvokeDynamicInsn(n, d, h, a);
          }

          @Override
          public void visitEnd() { flush(); super.visitEnd(); }
        };
      }
    }, 0);
    if (replaced[0] != 1) {
      System.err.println("BindLoopback: expected one forPort(getPort()) in " + CLASS + ".createServer, found " + replaced[0]);
      System.exit(1);
    }
    Path out = Path.of(args[0], CLASS + ".class");
    Files.createDirectories(out.getParent());
    Files.write(out, w.toByteArray());
    System.err.println("BindLoopback: wrote " + out);
  }
}
