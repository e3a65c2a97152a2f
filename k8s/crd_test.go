package k8s_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Every custom resource is validated against its operator's real CRD
// (k8s/crds, see schema_test.go), as kube-apiserver validates it. crdChecks
// adds, per kind, what the schema cannot say: what this deployment needs of
// the resource for its operator to act on it as intended. A kind with no
// vendored CRD fails the tests.
var crdChecks = map[string]func(o object) []string{
	"kafka.strimzi.io/v1/Kafka":                checkKafka,
	"kafka.strimzi.io/v1/KafkaNodePool":        checkKafkaNodePool,
	"kafka.strimzi.io/v1/KafkaTopic":           checkKafkaTopic,
	"flink.apache.org/v1beta1/FlinkDeployment": checkFlinkDeployment,
	"monitoring.coreos.com/v1/PodMonitor":      checkPodMonitor,
	"monitoring.coreos.com/v1/ServiceMonitor":  checkServiceMonitor,
	"monitoring.coreos.com/v1/PrometheusRule":  checkPrometheusRule,
	"argoproj.io/v1alpha1/Application":         checkApplication,
	"argoproj.io/v1alpha1/AppProject":          checkAppProject,
	"external-secrets.io/v1/ExternalSecret":    checkExternalSecret,
}

// validate checks one object: built-in kinds strictly, custom resources
// against their CRD and their check, anything else is an error.
func validate(o object) []string {
	var errs []string
	if o.apiVersion() == "" || o.kind() == "" {
		return []string{o.Source + ": no apiVersion or kind"}
	}
	if o.name() == "" {
		errs = append(errs, o.id()+": no metadata.name")
	}
	if _, ok := coreTypes[o.gvk()]; ok {
		if _, err := decodeCore(o); err != nil {
			errs = append(errs, err.Error())
		}
		return errs
	}
	all, err := loadSchemas()
	if err != nil {
		return append(errs, err.Error())
	}
	ss, ok := all[o.gvk()]
	if !ok {
		return append(errs, fmt.Sprintf("%s: unexpected %s: add it to coreTypes, or vendor its CRD in k8s/crds/regen.sh", o.id(), o.gvk()))
	}
	for _, s := range ss {
		for _, e := range validateCustomResource(o, s) {
			errs = append(errs, fmt.Sprintf("%s: %s schema: %s", o.id(), s.file, e))
		}
	}
	if check := crdChecks[o.gvk()]; check != nil {
		for _, e := range check(o) {
			errs = append(errs, o.id()+": "+e)
		}
	}
	// Every pod template inside a custom resource must decode as a Pod.
	if _, err := podTemplates(o); err != nil {
		errs = append(errs, err.Error())
	}
	return errs
}

func checkKafka(o object) []string {
	var errs []string
	if v := str(o.Map, "spec", "kafka", "version"); v != "" && !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(v) {
		errs = append(errs, fmt.Sprintf("spec.kafka.version %q", v))
	}
	if get(o.Map, "spec", "entityOperator", "topicOperator") == nil {
		errs = append(errs, "spec.entityOperator.topicOperator: needed for KafkaTopic resources")
	}
	return errs
}

func checkKafkaNodePool(o object) []string {
	var errs []string
	if str(o.Map, "metadata", "labels", "strimzi.io/cluster") == "" {
		errs = append(errs, "label strimzi.io/cluster: missing")
	}
	controller := slices.Contains(list(o.Map, "spec", "roles"), any("controller"))
	// The schema allows 0 replicas (a scaled-down pool); this deployment needs one.
	if n, ok := num(o.Map, "spec", "replicas"); !ok || n < 1 {
		errs = append(errs, "spec.replicas: want >= 1")
	}
	if str(o.Map, "spec", "storage", "type") == "jbod" {
		shared := 0
		vols := list(o.Map, "spec", "storage", "volumes")
		for i, v := range vols {
			// Strimzi's operator, not its schema, needs these.
			if _, ok := num(v, "id"); !ok {
				errs = append(errs, fmt.Sprintf("spec.storage.volumes[%d]: a JBOD volume needs an id", i))
			}
			if str(v, "type") == "persistent-claim" && str(v, "size") == "" {
				errs = append(errs, fmt.Sprintf("spec.storage.volumes[%d]: persistent-claim needs size", i))
			}
			if str(v, "kraftMetadata") == "shared" {
				shared++
			}
		}
		if controller && shared != 1 {
			errs = append(errs, "spec.storage.volumes: a controller pool needs exactly one volume with kraftMetadata: shared")
		}
	}
	if get(o.Map, "spec", "resources", "requests") == nil || get(o.Map, "spec", "resources", "limits") == nil {
		errs = append(errs, "spec.resources: requests and limits needed")
	}
	return errs
}

func checkKafkaTopic(o object) []string {
	var errs []string
	if str(o.Map, "metadata", "labels", "strimzi.io/cluster") == "" {
		errs = append(errs, "label strimzi.io/cluster: missing (the topic operator ignores the topic)")
	}
	// The schema's minimum is 1, but both may be left out (the broker's defaults).
	for _, k := range []string{"partitions", "replicas"} {
		if _, ok := num(o.Map, "spec", k); !ok {
			errs = append(errs, "spec."+k+": missing: say how many")
		}
	}
	return errs
}

// flinkVersions are the versions both Beam 2.77's Flink job server and the
// Flink operator support.
var flinkVersions = map[string]string{"v1_19": "1.19", "v1_20": "1.20", "v2_0": "2.0", "v2_1": "2.1"}

// projectFlinkImage matches the project's own Flink image (haade-flink, built
// from testing/cluster/images/flink), with whatever registry and tag an
// overlay gives it; its Flink version is the one its Containerfile installs.
var projectFlinkImage = regexp.MustCompile(`^([\w.:/-]+/)?haade-flink(:[\w.-]+)?$`)

// flinkImageVersion returns the Flink version x.y.z of image: from a public
// image's tag (flink:1.20.3-...), or from the project's Containerfile.
func flinkImageVersion(image string) string {
	if projectFlinkImage.MatchString(image) {
		b, err := os.ReadFile(filepath.Join(appRoot, "testing", "cluster", "images", "flink", "Containerfile"))
		if err != nil {
			return ""
		}
		if m := regexp.MustCompile(`Apache Flink (\d+\.\d+\.\d+)`).FindSubmatch(b); m != nil {
			return string(m[1])
		}
		return ""
	}
	if m := regexp.MustCompile(`:(\d+\.\d+\.\d+)`).FindStringSubmatch(image); m != nil {
		return m[1]
	}
	return ""
}

func checkFlinkDeployment(o object) []string {
	var errs []string
	spec := mapAt(o.Map, "spec")
	if spec["job"] != nil {
		errs = append(errs, "spec.job: a session cluster has none (Beam's job server submits the jobs)")
	}
	image := str(spec, "image")
	version := flinkVersions[str(spec, "flinkVersion")]
	if version == "" {
		errs = append(errs, fmt.Sprintf("spec.flinkVersion %q: want one of v1_19, v1_20, v2_0, v2_1", str(spec, "flinkVersion")))
	} else if !strings.HasPrefix(flinkImageVersion(image), version+".") {
		errs = append(errs, fmt.Sprintf("spec.image %q is not Flink %s", image, version))
	}
	if str(spec, "serviceAccount") == "" {
		errs = append(errs, "spec.serviceAccount: missing")
	}
	for _, c := range []string{"jobManager", "taskManager"} {
		if _, ok := num(spec, c, "resource", "cpu"); !ok || str(spec, c, "resource", "memory") == "" {
			errs = append(errs, fmt.Sprintf("spec.%s.resource: cpu and memory needed", c))
		}
	}
	conf := mapAt(spec, "flinkConfiguration")
	want := map[string]string{
		"state.checkpoints.dir": "s3://warehouse/checkpoints/bronze",
		"s3.path.style.access":  "true",
	}
	for k, v := range want {
		if conf[k] != v {
			errs = append(errs, fmt.Sprintf("flinkConfiguration[%s] = %v, want %q", k, conf[k], v))
		}
	}
	if d, err := time.ParseDuration(fmt.Sprint(conf["execution.checkpointing.interval"])); err != nil || d <= 0 {
		errs = append(errs, fmt.Sprintf("flinkConfiguration[execution.checkpointing.interval] = %v: want a duration", conf["execution.checkpointing.interval"]))
	}
	if !strings.HasPrefix(fmt.Sprint(conf["s3.endpoint"]), "http") {
		errs = append(errs, "flinkConfiguration[s3.endpoint]: missing")
	}
	for _, k := range []string{"s3.access-key", "s3.secret-key", "s3.access.key", "s3.secret.key"} {
		if conf[k] != nil {
			errs = append(errs, fmt.Sprintf("flinkConfiguration[%s]: credentials in plain text; take them from the Secret", k))
		}
	}
	pods, err := flinkPodTemplates(o)
	if err != nil {
		return append(errs, err.Error())
	}
	for _, p := range pods {
		main, pool := false, false
		for _, c := range p.Spec.Containers {
			switch {
			case c.Name == "flink-main-container":
				main = true
				plugins := ""
				for _, e := range c.Env {
					if e.Name == "ENABLE_BUILT_IN_PLUGINS" {
						plugins = e.Value
					}
				}
				if !regexp.MustCompile(`(^|;)flink-s3-fs-presto-` + regexp.QuoteMeta(version) + `\.\d+\.jar($|;)`).MatchString(plugins) {
					errs = append(errs, fmt.Sprintf("%s: flink-main-container: ENABLE_BUILT_IN_PLUGINS %q: want flink-s3-fs-presto-%s.x.jar", p.Where, plugins, version))
				} else if flinkImageVersion(image) != strings.TrimSuffix(strings.TrimPrefix(plugins, "flink-s3-fs-presto-"), ".jar") {
					errs = append(errs, fmt.Sprintf("%s: plugin %s is not the image's Flink version (%s)", p.Where, plugins, image))
				}
			case strings.Join(c.Command, " ") == "/opt/haade/boot" && strings.Join(c.Args, " ") == "--worker_pool":
				pool = true
				port := false
				for _, cp := range c.Ports {
					port = port || cp.ContainerPort == 50000
				}
				if !port {
					errs = append(errs, fmt.Sprintf("%s: the worker pool %s does not expose port 50000", p.Where, c.Name))
				}
			}
		}
		if !main {
			errs = append(errs, p.Where+": no flink-main-container")
		}
		if p.Where == "spec.taskManager" && !pool {
			errs = append(errs, "spec.taskManager.podTemplate: no Beam worker pool sidecar (/opt/haade/boot --worker_pool)")
		}
	}
	return errs
}

func checkSelector(o object, path ...string) []string {
	sel := mapAt(o.Map, path...)
	if sel == nil || (len(mapAt(sel, "matchLabels")) == 0 && len(list(sel, "matchExpressions")) == 0) {
		return []string{strings.Join(path, ".") + ": an empty selector"}
	}
	return nil
}

func checkPodMonitor(o object) []string {
	errs := checkSelector(o, "spec", "selector")
	eps := list(o.Map, "spec", "podMetricsEndpoints")
	if len(eps) == 0 {
		errs = append(errs, "spec.podMetricsEndpoints: none")
	}
	for i, e := range eps {
		if str(e, "port") == "" {
			errs = append(errs, fmt.Sprintf("spec.podMetricsEndpoints[%d].port: missing (a container port name)", i))
		}
	}
	return errs
}

func checkServiceMonitor(o object) []string {
	errs := checkSelector(o, "spec", "selector")
	for i, e := range list(o.Map, "spec", "endpoints") {
		if str(e, "port") == "" && str(e, "targetPort") == "" {
			errs = append(errs, fmt.Sprintf("spec.endpoints[%d]: port or targetPort needed", i))
		}
	}
	return errs
}

func checkPrometheusRule(o object) []string {
	var errs []string
	groups := list(o.Map, "spec", "groups")
	if len(groups) == 0 {
		errs = append(errs, "spec.groups: none")
	}
	for i, g := range groups {
		rules := list(g, "rules")
		if len(rules) == 0 {
			errs = append(errs, fmt.Sprintf("spec.groups[%d].rules: none", i))
		}
		// Prometheus, not the CRD, rejects a rule with both or neither.
		for j, r := range rules {
			if (str(r, "alert") == "") == (str(r, "record") == "") {
				errs = append(errs, fmt.Sprintf("spec.groups[%d].rules[%d]: needs one of alert or record", i, j))
			}
		}
	}
	return errs
}

// checkApplication needs the repository root to check source paths.
func checkApplication(o object) []string {
	var errs []string
	dest := mapAt(o.Map, "spec", "destination")
	if dest == nil || (str(dest, "server") == "" && str(dest, "name") == "") {
		errs = append(errs, "spec.destination: server or name needed")
	}
	sources := list(o.Map, "spec", "sources")
	if src := get(o.Map, "spec", "source"); src != nil {
		sources = append(sources, src)
	}
	if len(sources) == 0 {
		errs = append(errs, "spec.source: missing")
	}
	for i, s := range sources {
		if p := str(s, "path"); p != "" {
			if _, err := os.Stat(filepath.Join(appRoot, p, "kustomization.yaml")); err != nil {
				errs = append(errs, fmt.Sprintf("source %d: path %s has no kustomization.yaml", i, p))
			}
		}
	}
	return errs
}

// appRoot is where Application source paths are resolved; TestMain sets it.
var appRoot string

func checkAppProject(o object) []string {
	var errs []string
	if len(list(o.Map, "spec", "sourceRepos")) == 0 {
		errs = append(errs, "spec.sourceRepos: none")
	}
	if len(list(o.Map, "spec", "destinations")) == 0 {
		errs = append(errs, "spec.destinations: none")
	}
	return errs
}

func checkExternalSecret(o object) []string {
	var errs []string
	if str(o.Map, "spec", "secretStoreRef", "name") == "" {
		errs = append(errs, "spec.secretStoreRef.name: missing")
	}
	if str(o.Map, "spec", "target", "name") == "" {
		errs = append(errs, "spec.target.name: missing")
	}
	if len(list(o.Map, "spec", "data")) == 0 && len(list(o.Map, "spec", "dataFrom")) == 0 {
		errs = append(errs, "spec.data or spec.dataFrom needed")
	}
	return errs
}
