// ResidualSlots is what the rewritten Beam 2.62 classes call (SdfCheckpointSlots.java and
// SdfResidualReaders.java rewrite them at build time): the SDF self-checkpoint residuals of a
// key and window live in a small fixed set of ValueState slots, "sdf_checkpoint:s<N>", and a
// slot is emptied when the residual in it is read back. Beam issue #27648: the stock handler
// names every residual's state after a fresh counter value and nothing clears it, so Flink's
// keyed state gains one ValueState per self-checkpoint, for ever.
package haade.sdfstate;

import org.apache.beam.runners.core.StateInternals;
import org.apache.beam.runners.core.StateNamespace;
import org.apache.beam.runners.core.StateTags;
import org.apache.beam.sdk.coders.Coder;
import org.apache.beam.sdk.state.ValueState;

public final class ResidualSlots {
  /** Names this build of the patch; SdfStateCheck asserts it, so a stale jar is noticed. */
  public static final String VERSION = "sdfstate-2";

  /**
   * The slot tags. The prefix keeps Beam's "sdf_checkpoint" so that the runner's isSdfTimer
   * still recognises the timer, whose id is the slot's tag.
   */
  public static final String PREFIX = "sdf_checkpoint:s";

  /**
   * More residuals than this pending at once for one key and window means slots are not being
   * freed: fail the task rather than grow again. A self-checkpointing read holds one.
   */
  public static final int MAX_SLOTS = 1024;

  private ResidualSlots() {}

  /** The tag of slot n. */
  public static String tag(int n) {
    return PREFIX + n;
  }

  /**
   * The tag of the lowest slot of this key (the one state is scoped to) and namespace that holds
   * no residual. The handler writes the residual there before it asks for the next one, so two
   * residuals of one bundle never share a slot; a slot is only free again after its timer fired
   * and take emptied it, so a new timer never replaces a pending one of the same id.
   */
  @SuppressWarnings({"rawtypes", "unchecked"})
  public static String free(StateInternals state, StateNamespace ns, Coder coder) {
    for (int n = 0; n < MAX_SLOTS; n++) {
      ValueState<Object> slot = state.state(ns, StateTags.value(tag(n), (Coder<Object>) coder));
      if (slot.read() == null) {
        return tag(n);
      }
    }
    throw new IllegalStateException(
        MAX_SLOTS + " SDF residuals are pending for one key and window: their slots are never freed");
  }

  /**
   * Reads a residual back and empties its state. The runner's two readers call this in place of
   * ValueState.read(). It also empties the counter-named state of a checkpoint taken by the
   * stock classes, so restoring one loses nothing and leaves nothing behind.
   */
  @SuppressWarnings("rawtypes")
  public static Object take(ValueState state) {
    Object value = state.read();
    state.clear();
    return value;
  }
}
