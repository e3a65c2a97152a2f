package k8s_test

import (
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// flagValues collects --name=value arguments.
func flagValues(args []string) map[string]string {
	out := map[string]string{}
	for _, a := range args {
		if k, v, ok := strings.Cut(strings.TrimLeft(a, "-"), "="); ok && strings.HasPrefix(a, "-") {
			out[k] = v
		} else if strings.HasPrefix(a, "-") {
			out[strings.TrimLeft(a, "-")] = "true"
		}
	}
	return out
}

// container finds a container of the pod templates an object holds.
func (c *cluster) container(kind, ns, name, container string) (corev1.Container, bool) {
	for _, p := range c.pods {
		if p.Owner.kind() == kind && p.Owner.namespace() == ns && p.Owner.name() == name {
			for _, ctr := range p.Spec.Containers {
				if ctr.Name == container {
					return ctr, true
				}
			}
		}
	}
	return corev1.Container{}, false
}

// checkEndpoints follows every address one component gives for another to
// what serves it, and checks that bucket, topic and ports agree.
func (c *cluster) checkEndpoints() {
	const ns = "lakehouse"
	cfg := map[string]string{}
	if cm, ok := c.find("ConfigMap", ns, "bronze-config"); ok {
		for k, v := range mapAt(cm.Map, "data") {
			cfg[k], _ = v.(string)
		}
	} else {
		c.t.Error("no ConfigMap lakehouse/bronze-config")
	}
	for _, b := range strings.Split(cfg["HAADE_BROKERS"], ",") {
		if err := c.resolve(ns, b); err != nil {
			c.t.Errorf("bronze-config HAADE_BROKERS: %v", err)
		}
	}
	if err := c.resolveURL(ns, cfg["HAADE_S3_ENDPOINT"]); err != nil {
		c.t.Errorf("bronze-config HAADE_S3_ENDPOINT: %v", err)
	}
	topicFound := false
	for _, tp := range c.all("KafkaTopic") {
		name := str(tp.Map, "spec", "topicName")
		if name == "" {
			name = tp.name()
		}
		topicFound = topicFound || name == cfg["HAADE_TOPIC"]
	}
	if !topicFound {
		c.t.Errorf("bronze-config HAADE_TOPIC %q: no KafkaTopic", cfg["HAADE_TOPIC"])
	}

	bucket := ""
	if mk, ok := c.container("Job", ns, "minio-bucket", "mkbucket"); ok {
		f := flagValues(mk.Args)
		bucket = f["bucket"]
		if err := c.resolveURL(ns, f["s3-endpoint"]); err != nil {
			c.t.Errorf("minio-bucket --s3-endpoint: %v", err)
		}
		if len(mk.Command) != 1 || mk.Command[0] != "/opt/haade/mkbucket" {
			c.t.Errorf("minio-bucket runs %v, want /opt/haade/mkbucket", mk.Command)
		}
	} else {
		c.t.Error("no container mkbucket in Job minio-bucket")
	}
	if w, err := url.Parse(cfg["HAADE_WAREHOUSE"]); err != nil || w.Scheme != "s3" || w.Host != bucket {
		c.t.Errorf("HAADE_WAREHOUSE %q is not in the bucket the bucket Job creates (%q)", cfg["HAADE_WAREHOUSE"], bucket)
	}

	if fd, ok := c.find("FlinkDeployment", ns, "haade-flink"); ok {
		conf := mapAt(fd.Map, "spec", "flinkConfiguration")
		if err := c.resolveURL(ns, str(conf, "s3.endpoint")); err != nil {
			c.t.Errorf("FlinkDeployment s3.endpoint: %v", err)
		}
		for _, k := range []string{"state.checkpoints.dir", "state.savepoints.dir", "high-availability.storageDir"} {
			if u, err := url.Parse(str(conf, k)); str(conf, k) != "" && (err != nil || u.Host != bucket) {
				c.t.Errorf("FlinkDeployment %s %q is not in bucket %q", k, str(conf, k), bucket)
			}
		}
	}

	if js, ok := c.container("Deployment", ns, "beam-jobserver", "jobserver"); ok {
		if err := c.resolve(ns, flagValues(js.Args)["flink-master"]); err != nil {
			c.t.Errorf("beam-jobserver --flink-master: %v", err)
		}
	} else {
		c.t.Error("no container jobserver in Deployment beam-jobserver")
	}

	sub, ok := c.container("Job", ns, "bronze-submit", "bronze")
	if !ok {
		c.t.Error("no container bronze in Job bronze-submit")
		return
	}
	f := flagValues(sub.Args)
	if err := c.resolve(ns, f["endpoint"]); err != nil {
		c.t.Errorf("bronze-submit --endpoint: %v", err)
	}
	if f["environment_type"] != "EXTERNAL" || f["environment_config"] != "localhost:50000" {
		c.t.Errorf("bronze-submit: --environment_type=%s --environment_config=%s, want EXTERNAL and localhost:50000",
			f["environment_type"], f["environment_config"])
	}
	pool := false
	for _, p := range c.pods {
		if p.Owner.kind() == "FlinkDeployment" && p.Where == "spec.taskManager" && containerPort([]podTemplate{p}, float64(50000)) != 0 {
			pool = true
		}
	}
	if !pool {
		c.t.Error("no TaskManager pod has the worker pool's port 50000, which --environment_config names")
	}
	for _, e := range sub.Env {
		if e.Name == "HAADE_CATALOG_URI" {
			u, err := url.Parse(varRef.ReplaceAllString(e.Value, "x"))
			if err != nil || u.Scheme != "postgres" {
				c.t.Errorf("bronze-submit HAADE_CATALOG_URI %q: want postgres://", e.Value)
			} else if err := c.resolve(ns, u.Host); err != nil {
				c.t.Errorf("bronze-submit HAADE_CATALOG_URI: %v", err)
			}
		}
	}
}

// checkSecrets: prod deploys no Secret object at all (External Secrets make
// them); dev's are generated and labelled dev-only.
func (c *cluster) checkSecrets(prod bool) {
	for _, s := range c.all("Secret") {
		if prod {
			c.t.Errorf("%s: prod must not carry Secrets; use an ExternalSecret", s.id())
		} else if str(s.Map, "metadata", "labels", "haade.io/credentials") != "dev-only" {
			c.t.Errorf("%s: a dev Secret not labelled haade.io/credentials=dev-only", s.id())
		}
	}
	if prod && len(c.all("ExternalSecret")) == 0 {
		c.t.Error("prod has no ExternalSecret")
	}
}
