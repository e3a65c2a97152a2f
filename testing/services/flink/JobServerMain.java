// JobServerMain starts Beam's Flink job server after initialising Flink's file systems
// with the Flink configuration and the plugins directory.
//
// Flink's own entry points call FileSystem.initialize(config, pluginManager); Beam's
// FlinkJobServerDriver with --flink-master=[local] starts a MiniCluster that does not. Without
// it the s3:// scheme of state.checkpoints.dir is unknown ("Could not find a file system
// implementation for scheme 's3'"), and the s3.* keys of the configuration never reach the
// S3 file system. flink.sh compiles this file once into the cache and runs it as the main
// class; every argument goes to FlinkJobServerDriver unchanged.
//
//   FLINK_CONF_DIR     the directory of flink-conf.yaml (also passed as --flink-conf-dir)
//   FLINK_PLUGINS_DIR  the plugins directory (plugins/s3-fs-presto/flink-s3-fs-presto-*.jar)

import org.apache.beam.runners.flink.FlinkJobServerDriver;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.plugin.PluginManager;
import org.apache.flink.core.plugin.PluginUtils;

public class JobServerMain {
  public static void main(String[] args) throws Exception {
    String confDir = System.getenv("FLINK_CONF_DIR");
    Configuration conf =
        confDir == null ? new Configuration() : GlobalConfiguration.loadConfiguration(confDir);
    PluginManager plugins = PluginUtils.createPluginManagerFromRootFolder(conf);
    FileSystem.initialize(conf, plugins);
    FlinkJobServerDriver.main(args);
  }
}
