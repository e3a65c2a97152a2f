// SdfStateCheck drives Beam's StateAndTimerBundleCheckpointHandler, as SdfCheckpointSlots
// rewrote it, and reads the residuals back the way the rewritten readers do (ResidualSlots.take),
// on Beam's in-memory state and timers; it fails unless the state stays flat. build.sh runs it
// after the build, with the patched classes first on the class path:
//
//   java -cp OUT_DIR/classes:LIBS/* SdfStateCheck.java
//
// 1. 500 rounds of self-checkpoint, timer, read of one key's residual: every round must use
//    the one tag sdf_checkpoint:s0, the value must be the residual just written, and nothing
//    may be left after the last read (stock 2.62: 500 tags, 500 values kept).
// 2. Three residuals of one key pending at once take s0, s1, s2; once they have fired, the
//    next takes s0 again.
// 3. Streaming (keyed state and timers, as ExecutableStageDoFnOperator): residuals of two
//    keys each use their own s0. Batch (one state and one timer internals for every key, as
//    FlinkExecutableStageFunction): they take s0 and s1.

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.beam.model.fnexecution.v1.BeamFnApi.BundleApplication;
import org.apache.beam.model.fnexecution.v1.BeamFnApi.DelayedBundleApplication;
import org.apache.beam.model.fnexecution.v1.BeamFnApi.ProcessBundleResponse;
import org.apache.beam.runners.core.InMemoryStateInternals;
import org.apache.beam.runners.core.InMemoryTimerInternals;
import org.apache.beam.runners.core.StateInternals;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateTag;
import org.apache.beam.runners.core.StateTags;
import org.apache.beam.runners.core.TimerInternals.TimerData;
import org.apache.beam.runners.fnexecution.control.BundleCheckpointHandlers.StateAndTimerBundleCheckpointHandler;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.coders.StringUtf8Coder;
import org.apache.beam.sdk.state.State;
import org.apache.beam.sdk.state.StateContext;
import org.apache.beam.sdk.state.ValueState;
import org.apache.beam.sdk.transforms.windowing.BoundedWindow;
import org.apache.beam.sdk.transforms.windowing.GlobalWindow;
import org.apache.beam.sdk.util.CoderUtils;
import org.apache.beam.sdk.util.WindowedValue;
import haade.sdfstate.ResidualSlots;
import org.apache.beam.vendor.grpc.v1p60p1.com.google.protobuf.ByteString;
import org.joda.time.Instant;

public class SdfStateCheck {
  static final Coder<WindowedValue<String>> CODER =
      WindowedValue.getFullCoder(StringUtf8Coder.of(), GlobalWindow.Coder.INSTANCE);

  /** In-memory state and timers per key (streaming) or for all keys (batch). */
  static boolean batch;
  static final Map<String, InMemoryStateInternals<String>> states = new HashMap<>();
  static final Map<String, InMemoryTimerInternals> timers = new HashMap<>();
  static final Set<String> tags = new HashSet<>();

  static String scope(String key) {
    return batch ? "all" : key;
  }

  static InMemoryTimerInternals timersFor(String key) {
    return timers.computeIfAbsent(scope(key), k -> new InMemoryTimerInternals());
  }

  /** The state of the key, recording every tag id asked for. */
  static StateInternals stateFor(String key) {
    InMemoryStateInternals<String> s = states.computeIfAbsent(scope(key), InMemoryStateInternals::forKey);
    return new StateInternals() {
      @Override
      public Object getKey() {
        return key;
      }

      @Override
      public <T extends State> T state(StateNamespace ns, StateTag<T> tag, StateContext<?> c) {
        tags.add(scope(key) + "/" + tag.getId());
        return s.state(ns, tag, c);
      }
    };
  }

  static final StateAndTimerBundleCheckpointHandler<String> handler =
      new StateAndTimerBundleCheckpointHandler<>(
          SdfStateCheck::timersFor, SdfStateCheck::stateFor, CODER, GlobalWindow.Coder.INSTANCE);

  static DelayedBundleApplication residual(String element) throws Exception {
    byte[] b = CoderUtils.encodeToByteArray(CODER, WindowedValue.valueInGlobalWindow(element));
    return DelayedBundleApplication.newBuilder()
        .setApplication(BundleApplication.newBuilder().setElement(ByteString.copyFrom(b)))
        .build();
  }

  static void checkpoint(String... elements) throws Exception {
    ProcessBundleResponse.Builder r = ProcessBundleResponse.newBuilder();
    for (String e : elements) {
      r.addResidualRoots(residual(e));
    }
    handler.onCheckpoint(r.build());
  }

  /**
   * Fires every due SDF timer and reads its residual as the runner's readers do (the state of
   * the timer's key, the tag named by the timer id); returns what it read, sorted.
   */
  @SuppressWarnings("unchecked")
  static List<String> fire() throws Exception {
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, InMemoryTimerInternals> e : timers.entrySet()) {
      InMemoryTimerInternals ti = e.getValue();
      ti.advanceProcessingTime(BoundedWindow.TIMESTAMP_MAX_VALUE);
      TimerData t;
      while ((t = ti.removeNextProcessingTimer()) != null) {
        if (!StateAndTimerBundleCheckpointHandler.isSdfTimer(t.getTimerId())) {
          fail("timer " + t.getTimerId() + " is not an SDF timer");
        }
        ValueState<WindowedValue<String>> s =
            states.get(e.getKey()).state(t.getNamespace(), StateTags.value(t.getTimerId(), CODER));
        WindowedValue<String> v = (WindowedValue<String>) ResidualSlots.take(s);
        if (v == null) {
          fail("timer " + t.getTimerId() + " fired with no residual stored under its id");
        }
        out.add(t.getTimerId() + "=" + v.getValue());
      }
    }
    out.sort(null);
    return out;
  }

  static void reset(boolean batchMode) {
    batch = batchMode;
    states.clear();
    timers.clear();
    tags.clear();
  }

  static void fail(String msg) {
    System.err.println("SdfStateCheck: FAIL: " + msg);
    System.exit(1);
  }

  static void expect(String what, Object got, Object want) {
    if (!got.equals(want)) {
      fail(what + ": got " + got + ", want " + want);
    }
  }

  public static void main(String[] args) throws Exception {
    expect("patch marker", ResidualSlots.VERSION, "sdfstate-2");
    reset(false);
    for (int i = 0; i < 500; i++) {
      checkpoint("p0");
      expect("round " + i, fire(), List.of("sdf_checkpoint:s0=p0"));
    }
    expect("tags after 500 rounds", tags, Set.of("p0/sdf_checkpoint:s0"));
    expect("left after the last read",
        states.get("p0").state(StateNamespaceGlobal.NS, StateTags.value("sdf_checkpoint:s0", CODER)).read() == null, true);

    checkpoint("p0", "p0");
    checkpoint("p0");
    expect("three pending", fire(), List.of("sdf_checkpoint:s0=p0", "sdf_checkpoint:s1=p0", "sdf_checkpoint:s2=p0"));
    checkpoint("p0");
    expect("after they fired", fire(), List.of("sdf_checkpoint:s0=p0"));

    checkpoint("p0", "p1");
    expect("two keys, streaming", fire(), List.of("sdf_checkpoint:s0=p0", "sdf_checkpoint:s0=p1"));
    expect("tags, streaming", new java.util.TreeSet<>(tags).toString(),
        "[p0/sdf_checkpoint:s0, p0/sdf_checkpoint:s1, p0/sdf_checkpoint:s2, p1/sdf_checkpoint:s0]");

    reset(true);
    for (int i = 0; i < 100; i++) {
      checkpoint("p0", "p1");
      expect("batch round " + i, fire(), List.of("sdf_checkpoint:s0=p0", "sdf_checkpoint:s1=p1"));
    }
    expect("tags, batch", new java.util.TreeSet<>(tags).toString(),
        "[all/sdf_checkpoint:s0, all/sdf_checkpoint:s1]");
    System.err.println("SdfStateCheck: ok: 505 streaming and 100 batch rounds of self-checkpoints stay in their fixed slots");
  }

  static final class StateNamespaceGlobal {
    static final StateNamespace NS =
        org.apache.beam.runners.core.StateNamespaces.window(GlobalWindow.Coder.INSTANCE, GlobalWindow.INSTANCE);
  }
}
