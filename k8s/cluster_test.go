package k8s_test

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// cluster is what one overlay deploys, indexed for the cross-checks.
type cluster struct {
	t    *testing.T
	objs []object
	pods []podTemplate
}

func newCluster(t *testing.T, objs []object) *cluster {
	c := &cluster{t: t, objs: objs}
	for _, o := range objs {
		p, err := podTemplates(o)
		if err != nil {
			t.Fatal(err)
		}
		c.pods = append(c.pods, p...)
	}
	return c
}

func (c *cluster) find(kind, ns, name string) (object, bool) {
	for _, o := range c.objs {
		if o.kind() == kind && o.namespace() == ns && o.name() == name {
			return o, true
		}
	}
	return object{}, false
}

func (c *cluster) all(kind string) []object {
	var out []object
	for _, o := range c.objs {
		if o.kind() == kind {
			out = append(out, o)
		}
	}
	return out
}

func (c *cluster) checkNamespaces() {
	want := map[string]bool{"kafka": true, "lakehouse": true}
	for ns := range want {
		if _, ok := c.find("Namespace", "", ns); !ok {
			c.t.Errorf("no Namespace %s", ns)
		}
	}
	for _, o := range c.objs {
		if o.kind() != "Namespace" && !want[o.namespace()] {
			c.t.Errorf("%s: namespace %q, want kafka or lakehouse", o.id(), o.namespace())
		}
	}
}

func (c *cluster) checkRequiredObjects() {
	for _, w := range []struct{ kind, ns, name string }{
		{"Kafka", "kafka", "recovery-kafka"},
		{"KafkaTopic", "kafka", "fintech.debt.raw"},
		{"StatefulSet", "lakehouse", "minio"},
		{"Service", "lakehouse", "minio"},
		{"Job", "lakehouse", "minio-bucket"},
		{"StatefulSet", "lakehouse", "postgres"},
		{"Service", "lakehouse", "postgres"},
		{"FlinkDeployment", "lakehouse", "haade-flink"},
		{"Deployment", "lakehouse", "beam-jobserver"},
		{"Service", "lakehouse", "beam-jobserver"},
		{"PersistentVolumeClaim", "lakehouse", "beam-artifacts"},
		{"Job", "lakehouse", "bronze-submit"},
		{"PodMonitor", "lakehouse", "bronze"},
	} {
		if _, ok := c.find(w.kind, w.ns, w.name); !ok {
			c.t.Errorf("missing %s %s/%s", w.kind, w.ns, w.name)
		}
	}
	for _, k := range c.all("Kafka") {
		roles := map[any]bool{}
		for _, p := range c.all("KafkaNodePool") {
			if p.namespace() == k.namespace() && str(p.Map, "metadata", "labels", "strimzi.io/cluster") == k.name() {
				for _, r := range list(p.Map, "spec", "roles") {
					roles[r] = true
				}
			}
		}
		if !roles["controller"] || !roles["broker"] {
			c.t.Errorf("%s: its node pools do not cover the controller and broker roles (%v)", k.id(), roles)
		}
	}
	for _, kind := range []string{"KafkaNodePool", "KafkaTopic"} {
		for _, o := range c.all(kind) {
			if _, ok := c.find("Kafka", o.namespace(), str(o.Map, "metadata", "labels", "strimzi.io/cluster")); !ok {
				c.t.Errorf("%s: label strimzi.io/cluster names no Kafka in its namespace", o.id())
			}
		}
	}
	for _, sts := range c.all("StatefulSet") {
		if len(list(sts.Map, "spec", "volumeClaimTemplates")) == 0 {
			c.t.Errorf("%s: no volumeClaimTemplates", sts.id())
		}
	}
}

// thirdPartyWithoutDigest are images pinned by tag only, and why.
var thirdPartyWithoutDigest = map[string]string{}

// ourImage matches the images the project builds (the Dockerfile's haade, and
// testing/cluster/images' Flink, job server, Kafka and Flink operator images),
// which Skaffold or an overlay tags per build.
var ourImage = regexp.MustCompile(`^((ghcr\.io/haade/)?haade(-flink|-jobserver|-kafka|-flink-operator)?(:[\w.-]+)?)$`)

func (c *cluster) checkPods() {
	for _, p := range c.pods {
		where := p.Owner.id() + " " + p.Where
		podNonRoot := p.Spec.SecurityContext != nil && p.Spec.SecurityContext.RunAsNonRoot != nil && *p.Spec.SecurityContext.RunAsNonRoot
		for _, ctr := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
			cw := where + " container " + ctr.Name
			if !p.OperatorContainers[ctr.Name] {
				for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
					if _, ok := ctr.Resources.Requests[r]; !ok {
						c.t.Errorf("%s: no %s request", cw, r)
					}
					if _, ok := ctr.Resources.Limits[r]; !ok {
						c.t.Errorf("%s: no %s limit", cw, r)
					}
				}
			}
			sc := ctr.SecurityContext
			if !podNonRoot && (sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot) {
				c.t.Errorf("%s: not runAsNonRoot", cw)
			}
			if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				c.t.Errorf("%s: allowPrivilegeEscalation is not false", cw)
			}
			img := ctr.Image
			switch {
			case img == "":
				c.t.Errorf("%s: no image", cw)
			case ourImage.MatchString(img):
			case strings.HasSuffix(img, ":latest") || !strings.Contains(img[strings.LastIndex(img, "/")+1:], ":"):
				c.t.Errorf("%s: image %s is not pinned to a tag", cw, img)
			case !regexp.MustCompile(`:[\w.-]+@sha256:[0-9a-f]{64}$`).MatchString(img) && thirdPartyWithoutDigest[img] == "":
				c.t.Errorf("%s: image %s is not pinned by tag and digest", cw, img)
			}
		}
	}
}

// secretKeys lists, per namespace/name, the keys of the Secrets the overlay
// provides: Secret objects, or the targets of ExternalSecrets.
func (c *cluster) secretKeys() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	add := func(ns, name, key string) {
		if out[ns+"/"+name] == nil {
			out[ns+"/"+name] = map[string]bool{}
		}
		out[ns+"/"+name][key] = true
	}
	for _, s := range c.all("Secret") {
		for _, f := range []string{"data", "stringData"} {
			for k := range mapAt(s.Map, f) {
				add(s.namespace(), s.name(), k)
			}
		}
	}
	for _, e := range c.all("ExternalSecret") {
		for _, d := range list(e.Map, "spec", "data") {
			add(e.namespace(), str(e.Map, "spec", "target", "name"), str(d, "secretKey"))
		}
	}
	// Strimzi's user operator writes a Secret named like each KafkaUser, in
	// its namespace: password and sasl.jaas.config for a SCRAM user.
	for _, u := range c.all("KafkaUser") {
		if str(u.Map, "spec", "authentication", "type") == "scram-sha-512" {
			add(u.namespace(), u.name(), "password")
			add(u.namespace(), u.name(), "sasl.jaas.config")
		}
	}
	// Secrets an overlay says it leaves to the operator, by hand
	// (k8s/README.md): the dev overlay's copy of the Kafka cluster CA.
	for _, s := range outOfBandSecrets[c.environment()] {
		add("lakehouse", s.name, s.key)
	}
	return out
}

func (c *cluster) configMapKeys() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, cm := range c.all("ConfigMap") {
		keys := map[string]bool{}
		for k := range mapAt(cm.Map, "data") {
			keys[k] = true
		}
		out[cm.namespace()+"/"+cm.name()] = keys
	}
	return out
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

func (c *cluster) checkReferences() {
	secrets, configMaps := c.secretKeys(), c.configMapKeys()
	for _, p := range c.pods {
		ns := p.Owner.namespace()
		if sa := p.Spec.ServiceAccountName; sa != "" {
			if _, ok := c.find("ServiceAccount", ns, sa); !ok {
				c.t.Errorf("%s %s: ServiceAccount %s is not deployed", p.Owner.id(), p.Where, sa)
			}
		}
		volumes := map[string]bool{}
		for _, v := range p.Spec.Volumes {
			volumes[v.Name] = true
			switch {
			case v.PersistentVolumeClaim != nil:
				if _, ok := c.find("PersistentVolumeClaim", ns, v.PersistentVolumeClaim.ClaimName); !ok {
					c.t.Errorf("%s: volume %s: no PVC %s", p.Owner.id(), v.Name, v.PersistentVolumeClaim.ClaimName)
				}
			case v.ConfigMap != nil:
				if configMaps[ns+"/"+v.ConfigMap.Name] == nil {
					c.t.Errorf("%s: volume %s: no ConfigMap %s", p.Owner.id(), v.Name, v.ConfigMap.Name)
				}
			case v.Secret != nil:
				if secrets[ns+"/"+v.Secret.SecretName] == nil {
					c.t.Errorf("%s: volume %s: no Secret %s", p.Owner.id(), v.Name, v.Secret.SecretName)
				}
			}
		}
		if p.Owner.kind() == "StatefulSet" {
			for _, vct := range list(p.Owner.Map, "spec", "volumeClaimTemplates") {
				volumes[str(vct, "metadata", "name")] = true
			}
		}
		for _, ctr := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
			cw := p.Owner.id() + " container " + ctr.Name
			for _, m := range ctr.VolumeMounts {
				if !volumes[m.Name] {
					c.t.Errorf("%s: mounts %s, which is no volume of the pod", cw, m.Name)
				}
			}
			defined := map[string]bool{}
			for _, ef := range ctr.EnvFrom {
				switch {
				case ef.SecretRef != nil && secrets[ns+"/"+ef.SecretRef.Name] == nil:
					c.t.Errorf("%s: envFrom Secret %s is not provided", cw, ef.SecretRef.Name)
				case ef.ConfigMapRef != nil:
					keys := configMaps[ns+"/"+ef.ConfigMapRef.Name]
					if keys == nil {
						c.t.Errorf("%s: envFrom ConfigMap %s is not deployed", cw, ef.ConfigMapRef.Name)
					}
					for k := range keys {
						defined[k] = true
					}
				case ef.SecretRef != nil:
					for k := range secrets[ns+"/"+ef.SecretRef.Name] {
						defined[k] = true
					}
				}
			}
			for _, e := range ctr.Env {
				for _, m := range varRef.FindAllStringSubmatch(e.Value, -1) {
					if !defined[m[1]] {
						c.t.Errorf("%s: env %s refers to $(%s), which is not defined before it", cw, e.Name, m[1])
					}
				}
				defined[e.Name] = true
				if e.ValueFrom == nil {
					if regexp.MustCompile(`(?i)password|secret|token|access_key`).MatchString(e.Name) {
						c.t.Errorf("%s: env %s has a literal value; take it from a Secret", cw, e.Name)
					}
					continue
				}
				if r := e.ValueFrom.SecretKeyRef; r != nil && !secrets[ns+"/"+r.Name][r.Key] {
					c.t.Errorf("%s: env %s: Secret %s has no key %s in this overlay", cw, e.Name, r.Name, r.Key)
				}
				if r := e.ValueFrom.ConfigMapKeyRef; r != nil && !configMaps[ns+"/"+r.Name][r.Key] {
					c.t.Errorf("%s: env %s: ConfigMap %s has no key %s", cw, e.Name, r.Name, r.Key)
				}
			}
		}
	}
	for _, rb := range c.all("RoleBinding") {
		if _, ok := c.find(str(rb.Map, "roleRef", "kind"), rb.namespace(), str(rb.Map, "roleRef", "name")); !ok {
			c.t.Errorf("%s: roleRef names no Role", rb.id())
		}
		for _, s := range list(rb.Map, "subjects") {
			if _, ok := c.find("ServiceAccount", str(s, "namespace"), str(s, "name")); str(s, "kind") == "ServiceAccount" && !ok {
				c.t.Errorf("%s: subject ServiceAccount %s/%s is not deployed", rb.id(), str(s, "namespace"), str(s, "name"))
			}
		}
	}
}

// podsFor returns the pod templates in ns whose labels include sel.
func (c *cluster) podsFor(ns string, sel map[string]any) []podTemplate {
	var out []podTemplate
	for _, p := range c.pods {
		if p.Owner.namespace() != ns {
			continue
		}
		ok := true
		for k, v := range sel {
			ok = ok && p.Labels[k] == v
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}

// containerPort resolves a port (number or name) on pods; 0 if none has it.
func containerPort(pods []podTemplate, port any) int32 {
	for _, p := range pods {
		for _, ctr := range p.Spec.Containers {
			for _, cp := range ctr.Ports {
				switch v := port.(type) {
				case string:
					if cp.Name == v {
						return cp.ContainerPort
					}
				case float64:
					if cp.ContainerPort == int32(v) {
						return cp.ContainerPort
					}
				}
			}
		}
	}
	return 0
}

func (c *cluster) checkServices() {
	for _, s := range c.all("Service") {
		pods := c.podsFor(s.namespace(), mapAt(s.Map, "spec", "selector"))
		if len(pods) == 0 {
			c.t.Errorf("%s: its selector matches no pod", s.id())
			continue
		}
		for _, p := range list(s.Map, "spec", "ports") {
			target := get(p, "targetPort")
			if target == nil {
				target = get(p, "port")
			}
			if containerPort(pods, target) == 0 {
				c.t.Errorf("%s: port %v: no container port %v in the selected pods", s.id(), get(p, "port"), target)
			}
		}
	}
}

// unguardedPorts are Service ports that no NetworkPolicy admits on purpose.
var unguardedPorts = map[string]string{
	"lakehouse/minio:9001": "the MinIO console: reached by port-forward only",
}

func (c *cluster) checkNetworkPolicies() {
	for _, ns := range []string{"kafka", "lakehouse"} {
		found := false
		for _, np := range c.all("NetworkPolicy") {
			if np.namespace() == ns && len(mapAt(np.Map, "spec", "podSelector")) == 0 &&
				get(np.Map, "spec", "ingress") == nil && fmt.Sprint(list(np.Map, "spec", "policyTypes")) == "[Ingress]" {
				found = true
			}
		}
		if !found {
			c.t.Errorf("namespace %s: no default-deny ingress NetworkPolicy", ns)
		}
	}
	for _, s := range c.all("Service") {
		pods := c.podsFor(s.namespace(), mapAt(s.Map, "spec", "selector"))
		for _, sp := range list(s.Map, "spec", "ports") {
			target := get(sp, "targetPort")
			if target == nil {
				target = get(sp, "port")
			}
			port := containerPort(pods, target)
			key := fmt.Sprintf("%s/%s:%v", s.namespace(), s.name(), get(sp, "port"))
			if port == 0 || unguardedPorts[key] != "" {
				continue
			}
			if !c.admitted(s.namespace(), pods, port) {
				c.t.Errorf("Service %s: no NetworkPolicy admits port %d of its pods", key, port)
			}
		}
	}
}

// admitted reports whether some policy selecting one of pods admits port.
func (c *cluster) admitted(ns string, pods []podTemplate, port int32) bool {
	for _, np := range c.all("NetworkPolicy") {
		if np.namespace() != ns {
			continue
		}
		sel := mapAt(np.Map, "spec", "podSelector", "matchLabels")
		selects := false
		for _, p := range pods {
			ok := true
			for k, v := range sel {
				ok = ok && p.Labels[k] == v
			}
			selects = selects || ok
		}
		if !selects {
			continue
		}
		for _, rule := range list(np.Map, "spec", "ingress") {
			ports := list(rule, "ports")
			if len(ports) == 0 {
				return true
			}
			for _, p := range ports {
				if n, ok := num(p, "port"); ok && int32(n) == port {
					return true
				}
				if name := str(p, "port"); name != "" && containerPort(pods, name) == port {
					return true
				}
			}
		}
	}
	return false
}

func (c *cluster) checkMonitors() {
	for _, m := range c.all("PodMonitor") {
		pods := c.podsFor(m.namespace(), mapAt(m.Map, "spec", "selector", "matchLabels"))
		if len(pods) == 0 {
			c.t.Errorf("%s: its selector matches no pod", m.id())
		}
		for _, e := range list(m.Map, "spec", "podMetricsEndpoints") {
			if containerPort(pods, str(e, "port")) == 0 {
				c.t.Errorf("%s: no selected pod has a container port named %s", m.id(), str(e, "port"))
			}
		}
	}
}

// resolve finds what serves host:port in the overlay: a Service, a
// Strimzi bootstrap service or the Flink operator's REST service. It
// returns an error when nothing does.
func (c *cluster) resolve(from, hostport string) error {
	host, portStr, ok := strings.Cut(hostport, ":")
	port, err := strconv.Atoi(portStr)
	if !ok || err != nil {
		return fmt.Errorf("%q is not host:port", hostport)
	}
	parts := strings.Split(strings.TrimSuffix(host, ".svc.cluster.local"), ".")
	name, ns := parts[0], from
	if len(parts) > 1 {
		ns = parts[1]
	}
	if len(parts) > 3 || (len(parts) == 3 && parts[2] != "svc") {
		return fmt.Errorf("%s: not a cluster service name", host)
	}
	if s, ok := c.find("Service", ns, name); ok {
		for _, p := range list(s.Map, "spec", "ports") {
			if n, _ := num(p, "port"); int(n) == port {
				return nil
			}
		}
		return fmt.Errorf("Service %s/%s has no port %d", ns, name, port)
	}
	if k, ok := c.find("Kafka", ns, strings.TrimSuffix(name, "-kafka-bootstrap")); ok && strings.HasSuffix(name, "-kafka-bootstrap") {
		for _, l := range list(k.Map, "spec", "kafka", "listeners") {
			if n, _ := num(l, "port"); int(n) == port && str(l, "type") == "internal" {
				return nil
			}
		}
		return fmt.Errorf("Kafka %s/%s has no internal listener on %d", ns, k.name(), port)
	}
	if _, ok := c.find("FlinkDeployment", ns, strings.TrimSuffix(name, "-rest")); ok && strings.HasSuffix(name, "-rest") && port == 8081 {
		return nil
	}
	return fmt.Errorf("nothing in the overlay serves %s", hostport)
}

// resolveURL resolves the host of a URL (http, s3 endpoints, postgres).
func (c *cluster) resolveURL(from, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	return c.resolve(from, u.Host)
}
