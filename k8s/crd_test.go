package k8s_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// crdChecks are the custom resources the manifests may use. Their CRDs are
// not here, so each check asserts what its operator needs to act on it,
// from the operators' documentation (see the operators' CRDs, "Kubernetes custom
// resources"). An object of any other kind fails the tests.
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

// validate checks one object: built-in kinds strictly, custom resources by
// their check, anything else is an error.
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
	check, ok := crdChecks[o.gvk()]
	if !ok {
		return append(errs, fmt.Sprintf("%s: unexpected %s: add it to coreTypes or crdChecks", o.id(), o.gvk()))
	}
	for _, e := range check(o) {
		errs = append(errs, o.id()+": "+e)
	}
	// Every pod template inside a custom resource must decode as a Pod.
	if _, err := podTemplates(o); err != nil {
		errs = append(errs, err.Error())
	}
	return errs
}

func checkKafka(o object) []string {
	var errs []string
	for _, gone := range [][]string{{"spec", "zookeeper"}, {"spec", "kafka", "replicas"}, {"spec", "kafka", "storage"}} {
		if get(o.Map, gone...) != nil {
			errs = append(errs, fmt.Sprintf("%s is not in kafka.strimzi.io/v1 (node pools and KRaft only)", strings.Join(gone, ".")))
		}
	}
	listeners := list(o.Map, "spec", "kafka", "listeners")
	if len(listeners) == 0 {
		errs = append(errs, "spec.kafka.listeners: none")
	}
	for i, l := range listeners {
		port, _ := num(l, "port")
		if str(l, "name") == "" || port < 9092 || str(l, "type") == "" || get(l, "tls") == nil {
			errs = append(errs, fmt.Sprintf("spec.kafka.listeners[%d]: needs name, port (>= 9092), type and tls", i))
		}
	}
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
	roles := list(o.Map, "spec", "roles")
	if len(roles) == 0 {
		errs = append(errs, "spec.roles: none")
	}
	controller := false
	for _, r := range roles {
		switch r {
		case "controller":
			controller = true
		case "broker":
		default:
			errs = append(errs, fmt.Sprintf("spec.roles: %v is not controller or broker", r))
		}
	}
	if n, ok := num(o.Map, "spec", "replicas"); !ok || n < 1 {
		errs = append(errs, "spec.replicas: want >= 1")
	}
	switch st := str(o.Map, "spec", "storage", "type"); st {
	case "ephemeral", "persistent-claim":
	case "jbod":
		shared := 0
		vols := list(o.Map, "spec", "storage", "volumes")
		if len(vols) == 0 {
			errs = append(errs, "spec.storage.volumes: none")
		}
		for i, v := range vols {
			if _, ok := num(v, "id"); !ok || str(v, "type") == "" {
				errs = append(errs, fmt.Sprintf("spec.storage.volumes[%d]: needs id and type", i))
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
	default:
		errs = append(errs, fmt.Sprintf("spec.storage.type %q: want jbod, persistent-claim or ephemeral", st))
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
	if n, ok := num(o.Map, "spec", "partitions"); !ok || n < 1 {
		errs = append(errs, "spec.partitions: want >= 1")
	}
	if n, ok := num(o.Map, "spec", "replicas"); !ok || n < 1 {
		errs = append(errs, "spec.replicas: want >= 1")
	}
	return errs
}

// flinkVersions are the versions both Beam 2.77's Flink job server and the
// Flink operator support.
var flinkVersions = map[string]string{"v1_19": "1.19", "v1_20": "1.20", "v2_0": "2.0", "v2_1": "2.1"}

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
	} else if !strings.Contains(image, ":"+version+".") {
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
	for k, v := range conf {
		if _, ok := v.(string); !ok {
			errs = append(errs, fmt.Sprintf("flinkConfiguration[%s]: %v is not a string", k, v))
		}
	}
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
				} else if !strings.Contains(image, ":"+strings.TrimSuffix(strings.TrimPrefix(plugins, "flink-s3-fs-presto-"), ".jar")+"-") {
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
		if str(g, "name") == "" {
			errs = append(errs, fmt.Sprintf("spec.groups[%d].name: missing", i))
		}
		rules := list(g, "rules")
		if len(rules) == 0 {
			errs = append(errs, fmt.Sprintf("spec.groups[%d].rules: none", i))
		}
		for j, r := range rules {
			if (str(r, "alert") == "") == (str(r, "record") == "") || str(r, "expr") == "" {
				errs = append(errs, fmt.Sprintf("spec.groups[%d].rules[%d]: needs expr and one of alert or record", i, j))
			}
		}
	}
	return errs
}

// checkApplication needs the repository root to check source paths.
func checkApplication(o object) []string {
	var errs []string
	if str(o.Map, "spec", "project") == "" {
		errs = append(errs, "spec.project: missing")
	}
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
		if str(s, "repoURL") == "" {
			errs = append(errs, fmt.Sprintf("source %d: repoURL missing", i))
		}
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
	data := list(o.Map, "spec", "data")
	if len(data) == 0 && len(list(o.Map, "spec", "dataFrom")) == 0 {
		errs = append(errs, "spec.data or spec.dataFrom needed")
	}
	for i, d := range data {
		if str(d, "secretKey") == "" || str(d, "remoteRef", "key") == "" {
			errs = append(errs, fmt.Sprintf("spec.data[%d]: secretKey and remoteRef.key needed", i))
		}
	}
	return errs
}
