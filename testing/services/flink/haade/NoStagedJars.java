package haade;

import java.util.Collections;
import java.util.List;
import org.apache.beam.sdk.util.construction.resources.PipelineResourcesDetector;

/**
 * A pipeline resources detector that stages nothing: for a Flink cluster whose JVMs already have
 * the job server's Beam jars on their class path (flinkcluster.sh with FLINKC_BEAM_CLASSPATH=1).
 *
 * <p>Beam's Flink job server sends a job to a remote cluster with its whole class path as the
 * job's user jars (FlinkJobInvoker: PipelineResources.detectClassPathResourcesToStage), about 150
 * MB uploaded to the JobManager's blob server and fetched by every TaskManager, per job: 84 s of a
 * bounded run under load. The detector is a pipeline option (pipelineResourcesDetectorFactoryClass),
 * which runners/flink.go sets to this class with --flink-cluster-classpath. Built into
 * haade-jobserver-patch.jar by flink.sh.
 */
public class NoStagedJars implements PipelineResourcesDetector.Factory {
  public static NoStagedJars create() {
    return new NoStagedJars();
  }

  @Override
  public PipelineResourcesDetector getPipelineResourcesDetector() {
    return new None();
  }

  static class None implements PipelineResourcesDetector {
    @Override
    public List<String> detect(ClassLoader classLoader) {
      return Collections.emptyList();
    }
  }
}
