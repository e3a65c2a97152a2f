package k8s_test

// Least privilege in the rendered overlays (issue 12): the Kafka listener
// and user, the pipelines' MinIO user and catalog role, the Flink roles and
// the service-account tokens.

import (
	"encoding/base64"
	"net"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// outOfBandSecrets are the Secrets an overlay leaves to the operator, by
// environment (the haade.io/environment label): in dev, the copy of the
// Kafka cluster CA that k8s/README.md ("Kafka users") makes with kubectl,
// since a generated Secret cannot know a CA that Strimzi makes at install.
// Prod has an ExternalSecret for it.
var outOfBandSecrets = map[string][]struct{ name, key string }{
	"dev": {{"kafka-cluster-ca-cert", "ca.crt"}},
}

// environment is the overlay's haade.io/environment label ("dev", "prod").
func (c *cluster) environment() string {
	for _, o := range c.objs {
		if e := str(o.Map, "metadata", "labels", "haade.io/environment"); e != "" {
			return e
		}
	}
	return ""
}

// forEachOverlay renders each overlay and runs check on it.
func forEachOverlay(t *testing.T, check func(t *testing.T, c *cluster)) {
	for _, dir := range overlays {
		t.Run(dir, func(t *testing.T) { check(t, newCluster(t, kustomizeBuild(t, dir))) })
	}
}

// containerOf finds a container by name in the pod templates of one object.
func (c *cluster) containerOf(kind, ns, name, container string) (podTemplate, corev1.Container, bool) {
	for _, p := range c.pods {
		if p.Owner.kind() != kind || p.Owner.namespace() != ns || p.Owner.name() != name {
			continue
		}
		for _, ctr := range p.Spec.Containers {
			if ctr.Name == container {
				return p, ctr, true
			}
		}
	}
	return podTemplate{}, corev1.Container{}, false
}

func envVar(ctr corev1.Container, name string) (corev1.EnvVar, bool) {
	for _, e := range ctr.Env {
		if e.Name == name {
			return e, true
		}
	}
	return corev1.EnvVar{}, false
}

// secretRef returns "secret/key" when the variable comes from a Secret.
func secretRef(ctr corev1.Container, name string) string {
	e, ok := envVar(ctr, name)
	if !ok || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
		return ""
	}
	return e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
}

// pipelineContainers are the containers that run HAADE's pipelines or
// Flink for them: they must use the pipelines' identities.
var pipelineContainers = []struct{ kind, name, container string }{
	{"Job", "bronze-submit", "bronze"},
	{"FlinkDeployment", "haade-flink", "beam-worker-pool"},
	{"FlinkDeployment", "haade-flink", "flink-main-container"},
	{"CronJob", "maintain", "maintain"},
}

// TestKafkaLeastPrivilege: the only client listener is TLS with SCRAM,
// authorization is on, and bronze's KafkaUser may read its topic and its
// group, nothing else.
func TestKafkaLeastPrivilege(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, c *cluster) {
		k, ok := c.find("Kafka", "kafka", "recovery-kafka")
		if !ok {
			t.Fatal("no Kafka kafka/recovery-kafka")
		}
		listeners := list(k.Map, "spec", "kafka", "listeners")
		if len(listeners) == 0 {
			t.Fatal("Kafka has no listener")
		}
		for _, l := range listeners {
			if tls, _ := get(l, "tls").(bool); !tls {
				t.Errorf("Kafka listener %s: tls is not true", str(l, "name"))
			}
			if a := str(l, "authentication", "type"); a != "scram-sha-512" && a != "tls" {
				t.Errorf("Kafka listener %s: authentication %q, want scram-sha-512 or tls", str(l, "name"), a)
			}
		}
		if a := str(k.Map, "spec", "kafka", "authorization", "type"); a != "simple" {
			t.Errorf("Kafka authorization %q, want simple", a)
		}
		if su := list(k.Map, "spec", "kafka", "authorization", "superUsers"); len(su) > 0 {
			t.Errorf("Kafka has super users %v", su)
		}

		users := c.all("KafkaUser")
		if len(users) != 1 {
			t.Fatalf("%d KafkaUsers, want 1 (bronze; the manifests run no producer)", len(users))
		}
		u := users[0]
		if u.name() != "bronze" || u.namespace() != "lakehouse" {
			t.Errorf("KafkaUser %s/%s, want lakehouse/bronze", u.namespace(), u.name())
		}
		if w := str(k.Map, "spec", "entityOperator", "userOperator", "watchedNamespace"); w != u.namespace() {
			t.Errorf("the user operator watches %q, not the KafkaUser's namespace %q", w, u.namespace())
		}
		if cl := str(u.Map, "metadata", "labels", "strimzi.io/cluster"); cl != k.name() {
			t.Errorf("KafkaUser label strimzi.io/cluster %q, want %q", cl, k.name())
		}
		if a := str(u.Map, "spec", "authentication", "type"); a != "scram-sha-512" {
			t.Errorf("KafkaUser authentication %q, want scram-sha-512", a)
		}
		if a := str(u.Map, "spec", "authorization", "type"); a != "simple" {
			t.Errorf("KafkaUser authorization %q, want simple", a)
		}
		type acl struct {
			Type, Resource, Name, Pattern string
			Ops                           []string
		}
		var got []acl
		for _, a := range list(u.Map, "spec", "authorization", "acls") {
			var ops []string
			for _, op := range list(a, "operations") {
				ops = append(ops, op.(string))
			}
			slices.Sort(ops)
			typ := str(a, "type")
			if typ == "" {
				typ = "allow"
			}
			got = append(got, acl{typ, str(a, "resource", "type"), str(a, "resource", "name"), str(a, "resource", "patternType"), ops})
		}
		want := []acl{
			{"allow", "topic", "fintech.debt.raw", "literal", []string{"Describe", "Read"}},
			{"allow", "group", "bronze", "prefix", []string{"Describe", "Read"}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("KafkaUser bronze ACLs (-want +got):\n%s", diff)
		}
	})
}

// TestBronzeKafkaTLS: bronze's configuration names the TLS listener, SCRAM
// and the KafkaUser, its password comes from the Secret Strimzi makes for
// that user, in the environment only, and the cluster CA is mounted where
// HAADE_KAFKA_TLS_CA points.
func TestBronzeKafkaTLS(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, c *cluster) {
		cm, ok := c.find("ConfigMap", "lakehouse", "bronze-config")
		if !ok {
			t.Fatal("no ConfigMap bronze-config")
		}
		cfg := map[string]string{}
		for k, v := range mapAt(cm.Map, "data") {
			cfg[k], _ = v.(string)
		}
		k, _ := c.find("Kafka", "kafka", "recovery-kafka")
		tlsPorts := map[string]bool{}
		for _, l := range list(k.Map, "spec", "kafka", "listeners") {
			if tls, _ := get(l, "tls").(bool); tls && str(l, "authentication", "type") == "scram-sha-512" {
				n, _ := num(l, "port")
				tlsPorts[strconv.Itoa(int(n))] = true
			}
		}
		for _, b := range strings.Split(cfg["HAADE_BROKERS"], ",") {
			host, port, err := net.SplitHostPort(strings.TrimSpace(b))
			if err != nil || host != "recovery-kafka-kafka-bootstrap.kafka.svc.cluster.local" || !tlsPorts[port] {
				t.Errorf("HAADE_BROKERS %q: not the bootstrap of a TLS+SCRAM listener (ports %v)", b, tlsPorts)
			}
		}
		users := c.all("KafkaUser")
		wantCfg := map[string]string{"HAADE_KAFKA_TLS": "true", "HAADE_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512"}
		if len(users) > 0 {
			wantCfg["HAADE_KAFKA_SASL_USER"] = users[0].name()
		}
		for key, want := range wantCfg {
			if cfg[key] != want {
				t.Errorf("bronze-config %s=%q, want %q", key, cfg[key], want)
			}
		}
		if _, ok := cfg["HAADE_KAFKA_SASL_PASSWORD"]; ok {
			t.Error("bronze-config holds HAADE_KAFKA_SASL_PASSWORD")
		}
		ca := cfg["HAADE_KAFKA_TLS_CA"]
		for _, pc := range []struct{ kind, name, container string }{
			{"Job", "bronze-submit", "bronze"},
			{"FlinkDeployment", "haade-flink", "beam-worker-pool"},
		} {
			p, ctr, ok := c.containerOf(pc.kind, "lakehouse", pc.name, pc.container)
			if !ok {
				t.Errorf("no container %s in %s %s", pc.container, pc.kind, pc.name)
				continue
			}
			where := pc.kind + " " + pc.name + " container " + pc.container
			if got := secretRef(ctr, "HAADE_KAFKA_SASL_PASSWORD"); got != "bronze/password" {
				t.Errorf("%s: HAADE_KAFKA_SASL_PASSWORD from %q, want the KafkaUser's Secret bronze/password", where, got)
			}
			for _, a := range append(append([]string{}, ctr.Command...), ctr.Args...) {
				if strings.Contains(a, "sasl-password") || strings.Contains(a, "SASL_PASSWORD") {
					t.Errorf("%s: the SASL password on the command line: %q", where, a)
				}
			}
			mounted := false
			for _, m := range ctr.VolumeMounts {
				if m.MountPath != path.Dir(ca) {
					continue
				}
				for _, v := range p.Spec.Volumes {
					if v.Name == m.Name && v.Secret != nil && v.Secret.SecretName == "kafka-cluster-ca-cert" {
						mounted = true
					}
				}
			}
			if !mounted {
				t.Errorf("%s: the Secret kafka-cluster-ca-cert is not mounted at %s (HAADE_KAFKA_TLS_CA %q)", where, path.Dir(ca), ca)
			}
		}
	})
}

// TestPipelineIdentities: the pipelines use MinIO's pipeline user and the
// catalog's non-superuser role, never MinIO's root or PostgreSQL's
// superuser, and the objects that make those identities are deployed.
func TestPipelineIdentities(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, c *cluster) {
		for _, pc := range pipelineContainers {
			_, ctr, ok := c.containerOf(pc.kind, "lakehouse", pc.name, pc.container)
			if !ok {
				t.Errorf("no container %s in %s %s", pc.container, pc.kind, pc.name)
				continue
			}
			where := pc.kind + " " + pc.name + " container " + pc.container
			if got := secretRef(ctr, "AWS_ACCESS_KEY_ID"); got != "minio-credentials/pipeline-user" {
				t.Errorf("%s: AWS_ACCESS_KEY_ID from %q, want minio-credentials/pipeline-user", where, got)
			}
			if got := secretRef(ctr, "AWS_SECRET_ACCESS_KEY"); got != "minio-credentials/pipeline-password" {
				t.Errorf("%s: AWS_SECRET_ACCESS_KEY from %q, want minio-credentials/pipeline-password", where, got)
			}
			for _, e := range ctr.Env {
				if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil && slices.Contains([]string{"root-user", "root-password", "POSTGRES_USER", "POSTGRES_PASSWORD"}, r.SecretKeyRef.Key) {
					t.Errorf("%s: env %s from the admin credential %s/%s", where, e.Name, r.SecretKeyRef.Name, r.SecretKeyRef.Key)
				}
			}
			for _, ef := range ctr.EnvFrom {
				if ef.SecretRef != nil {
					t.Errorf("%s: envFrom Secret %s (every admin key with it)", where, ef.SecretRef.Name)
				}
			}
			if pc.container == "flink-main-container" {
				continue // Flink has no catalog
			}
			uri := ""
			if e, ok := envVar(ctr, "HAADE_CATALOG_URI"); ok {
				uri = e.Value
			}
			u, err := url.Parse(uri)
			if err != nil || u.User == nil || u.User.Username() != "haade_bronze" {
				t.Errorf("%s: HAADE_CATALOG_URI %q: the user is not haade_bronze", where, uri)
			} else if _, has := u.User.Password(); has {
				t.Errorf("%s: HAADE_CATALOG_URI %q carries a password; use HAADE_CATALOG_PASSWORD", where, uri)
			}
			if got := secretRef(ctr, "HAADE_CATALOG_PASSWORD"); got != "postgres-credentials/POSTGRES_BRONZE_PASSWORD" {
				t.Errorf("%s: HAADE_CATALOG_PASSWORD from %q, want postgres-credentials/POSTGRES_BRONZE_PASSWORD", where, got)
			}
		}

		// Trino reads the same tables as the same identities.
		trinos := 0
		for _, p := range c.pods {
			for _, ctr := range p.Spec.Containers {
				if ctr.Name != "trino" {
					continue
				}
				trinos++
				where := p.Owner.id() + " container trino"
				if secretRef(ctr, "AWS_ACCESS_KEY_ID") != "minio-credentials/pipeline-user" || secretRef(ctr, "AWS_SECRET_ACCESS_KEY") != "minio-credentials/pipeline-password" {
					t.Errorf("%s: S3 credentials are not the pipeline user's", where)
				}
				for _, e := range ctr.Env {
					if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil && slices.Contains([]string{"root-user", "root-password", "POSTGRES_USER", "POSTGRES_PASSWORD"}, r.SecretKeyRef.Key) {
						t.Errorf("%s: env %s from the admin credential %s/%s", where, e.Name, r.SecretKeyRef.Name, r.SecretKeyRef.Key)
					}
				}
			}
		}
		if trinos == 0 {
			t.Error("no Trino container")
		}
		if cm, ok := c.find("ConfigMap", "lakehouse", "trino-config"); ok {
			if props := str(cm.Map, "data", "iceberg.properties"); !strings.Contains(props, "connection-user=haade_bronze\n") {
				t.Errorf("Trino's catalog connection is not the role haade_bronze:\n%s", props)
			}
		} else {
			t.Error("no ConfigMap lakehouse/trino-config")
		}

		// The MinIO user is made by the Job, with the same name the pipelines use.
		_, mk, ok := c.containerOf("Job", "lakehouse", "minio-pipeline-user", "mkbucket")
		if !ok {
			t.Fatal("no Job minio-pipeline-user (security-minio-pipeline-user.yaml) in the overlay")
		}
		f := flagValues(mk.Args)
		if f["user"] != "$(PIPELINE_ACCESS_KEY_ID)" || secretRef(mk, "PIPELINE_ACCESS_KEY_ID") != "minio-credentials/pipeline-user" {
			t.Errorf("minio-pipeline-user --user=%q, want $(PIPELINE_ACCESS_KEY_ID) from minio-credentials/pipeline-user", f["user"])
		}
		if secretRef(mk, "PIPELINE_SECRET_ACCESS_KEY") != "minio-credentials/pipeline-password" || f["user-secret-env"] != "PIPELINE_SECRET_ACCESS_KEY" {
			t.Error("minio-pipeline-user: the user's secret is not PIPELINE_SECRET_ACCESS_KEY from minio-credentials/pipeline-password")
		}
		if f["bucket"] != "warehouse" {
			t.Errorf("minio-pipeline-user --bucket=%q, want warehouse", f["bucket"])
		}

		// The catalog role's init script is mounted where postgres runs it.
		if _, ok := c.find("ConfigMap", "lakehouse", "postgres-bronze-role"); !ok {
			t.Error("no ConfigMap postgres-bronze-role (security-postgres-role.yaml) in the overlay")
		}
		p, pg, ok := c.containerOf("StatefulSet", "lakehouse", "postgres", "postgres")
		if !ok {
			t.Fatal("no container postgres in StatefulSet postgres")
		}
		initdb := false
		for _, m := range pg.VolumeMounts {
			for _, v := range p.Spec.Volumes {
				if m.MountPath == "/docker-entrypoint-initdb.d" && v.Name == m.Name && v.ConfigMap != nil && v.ConfigMap.Name == "postgres-bronze-role" {
					initdb = true
				}
			}
		}
		if !initdb {
			t.Error("postgres does not mount ConfigMap postgres-bronze-role at /docker-entrypoint-initdb.d")
		}
		if !c.secretKeys()["lakehouse/postgres-credentials"]["POSTGRES_BRONZE_PASSWORD"] {
			t.Error("postgres-credentials has no key POSTGRES_BRONZE_PASSWORD (the role's password, read by the init script)")
		}
	})
}

// TestRBACNarrow: no Role or ClusterRole grants "*" anywhere; Flink's
// JobManager role is exactly what Flink calls, bound to the JobManager's
// account only; the TaskManagers' role only reads ConfigMaps.
func TestRBACNarrow(t *testing.T) {
	type rule struct {
		Groups, Resources, Names, Verbs []string
	}
	strs := func(m any, key string) []string {
		var out []string
		for _, v := range list(m, key) {
			out = append(out, v.(string))
		}
		return out
	}
	forEachOverlay(t, func(t *testing.T, c *cluster) {
		roles := map[string][]rule{}
		for _, kind := range []string{"Role", "ClusterRole"} {
			for _, r := range c.all(kind) {
				var rules []rule
				for _, ru := range list(r.Map, "rules") {
					x := rule{strs(ru, "apiGroups"), strs(ru, "resources"), strs(ru, "resourceNames"), strs(ru, "verbs")}
					for _, v := range slices.Concat(x.Groups, x.Resources, x.Verbs) {
						if strings.Contains(v, "*") {
							t.Errorf("%s: a rule grants %q (%v)", r.id(), v, x)
						}
					}
					rules = append(rules, x)
				}
				roles[r.namespace()+"/"+r.name()] = rules
			}
		}
		want := map[string][]rule{
			"lakehouse/haade-flink": {
				{[]string{""}, []string{"pods"}, nil, []string{"create", "delete", "list", "watch"}},
				{[]string{""}, []string{"configmaps"}, nil, []string{"create", "get", "update", "patch", "list", "watch", "delete", "deletecollection"}},
				{[]string{"apps"}, []string{"deployments"}, []string{"haade-flink"}, []string{"get"}},
				{[]string{"apps"}, []string{"deployments/finalizers"}, []string{"haade-flink"}, []string{"update"}},
			},
			"lakehouse/haade-flink-taskmanager": {
				{[]string{""}, []string{"configmaps"}, nil, []string{"get", "list", "watch"}},
			},
		}
		for name, w := range want {
			if diff := cmp.Diff(w, roles[name]); diff != "" {
				t.Errorf("Role %s (-want +got):\n%s", name, diff)
			}
		}
		// Each Flink role is bound to one account, and each account is
		// used by one Flink component only.
		wantBinding := map[string]string{"haade-flink": "haade-flink", "haade-flink-taskmanager": "haade-flink-taskmanager"}
		for _, b := range c.all("RoleBinding") {
			role := str(b.Map, "roleRef", "name")
			sa, ok := wantBinding[role]
			if !ok {
				continue
			}
			var subjects []string
			for _, s := range list(b.Map, "subjects") {
				subjects = append(subjects, str(s, "kind")+" "+str(s, "namespace")+"/"+str(s, "name"))
			}
			if diff := cmp.Diff([]string{"ServiceAccount lakehouse/" + sa}, subjects); diff != "" {
				t.Errorf("%s binds Role %s to (-want +got):\n%s", b.id(), role, diff)
			}
		}
		for _, p := range c.pods {
			want := ""
			switch {
			case p.Owner.kind() == "FlinkDeployment" && p.Where == "spec.jobManager":
				want = "haade-flink"
			case p.Owner.kind() == "FlinkDeployment" && p.Where == "spec.taskManager":
				want = "haade-flink-taskmanager"
			}
			sa := p.Spec.ServiceAccountName
			if (want != "" || sa == "haade-flink" || sa == "haade-flink-taskmanager") && sa != want {
				t.Errorf("%s %s runs as ServiceAccount %q, want %q", p.Owner.id(), p.Where, sa, want)
			}
		}
	})
}

// TestServiceAccountTokens: only the Flink JobManager pod gets the
// service-account token automatically. The TaskManager gets its account's
// token in flink-main-container alone, so the Go worker pool's container,
// like every other pod's, has none.
func TestServiceAccountTokens(t *testing.T) {
	const tokenDir = "/var/run/secrets/kubernetes.io/serviceaccount"
	forEachOverlay(t, func(t *testing.T, c *cluster) {
		jm := 0
		for _, p := range c.pods {
			where := p.Owner.id() + " " + p.Where
			off := p.Spec.AutomountServiceAccountToken != nil && !*p.Spec.AutomountServiceAccountToken
			isJM := p.Owner.kind() == "FlinkDeployment" && p.Where == "spec.jobManager"
			if isJM {
				jm++
				if off {
					t.Errorf("%s: the JobManager needs its token (it creates the TaskManager pods)", where)
				}
				continue
			}
			if !off {
				t.Errorf("%s: automountServiceAccountToken is not false", where)
			}
			tokenVolumes := map[string]bool{}
			for _, v := range p.Spec.Volumes {
				if v.Projected == nil {
					continue
				}
				for _, s := range v.Projected.Sources {
					if s.ServiceAccountToken != nil {
						tokenVolumes[v.Name] = true
					}
				}
			}
			for _, ctr := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
				for _, m := range ctr.VolumeMounts {
					if !tokenVolumes[m.Name] && m.MountPath != tokenDir {
						continue
					}
					isTMFlink := p.Owner.kind() == "FlinkDeployment" && p.Where == "spec.taskManager" && ctr.Name == "flink-main-container"
					if !isTMFlink {
						t.Errorf("%s container %s mounts a service-account token (%s at %s)", where, ctr.Name, m.Name, m.MountPath)
					}
				}
			}
		}
		if jm != 1 {
			t.Errorf("%d JobManager pod templates, want 1", jm)
		}
		// The TaskManager's Flink container still reads the leader
		// ConfigMaps: its token is there, at the client's path.
		p, ctr, ok := c.containerOf("FlinkDeployment", "lakehouse", "haade-flink", "flink-main-container")
		found := false
		for _, pt := range c.pods {
			if pt.Owner.kind() == "FlinkDeployment" && pt.Where == "spec.taskManager" {
				p = pt
				for _, cc := range pt.Spec.Containers {
					if cc.Name == "flink-main-container" {
						ctr, ok = cc, true
					}
				}
			}
		}
		for _, m := range ctr.VolumeMounts {
			for _, v := range p.Spec.Volumes {
				if ok && m.MountPath == tokenDir && v.Name == m.Name && v.Projected != nil && len(v.Projected.Sources) == 3 {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("the TaskManager's flink-main-container has no projected token, CA and namespace at %s", tokenDir)
		}
	})
}

// passwordInURI finds user:password@ in a URI whose password is a literal,
// not a $(VAR) reference (or a format verb in a script).
var passwordInURI = regexp.MustCompile(`://[^/\s:@]+:([^@\s/]+)@`)

// TestNoPasswordLiterals: outside the dev overlay's generated Secrets, no
// object holds a password: no URI with one, no credential value of a dev
// Secret anywhere else.
func TestNoPasswordLiterals(t *testing.T) {
	forEachOverlay(t, func(t *testing.T, c *cluster) {
		var values []string
		secretKey := regexp.MustCompile(`(?i)password|secret`)
		for _, s := range c.all("Secret") {
			for k, v := range mapAt(s.Map, "data") {
				if !secretKey.MatchString(k) {
					continue
				}
				b, err := base64.StdEncoding.DecodeString(v.(string))
				if err != nil {
					t.Fatalf("%s: %v", s.id(), err)
				}
				if len(b) >= 8 {
					values = append(values, string(b))
				}
			}
			for k, v := range mapAt(s.Map, "stringData") {
				if secretKey.MatchString(k) {
					values = append(values, v.(string))
				}
			}
		}
		if c.environment() == "dev" && len(values) < 4 {
			t.Fatalf("dev renders %d secret values, want the generated credentials", len(values))
		}
		// A password copied into another variable ($(X_PASSWORD) inside a
		// URI) is a password in a value that logs and error messages print.
		for _, p := range c.pods {
			for _, ctr := range p.Spec.Containers {
				for _, e := range ctr.Env {
					for _, m := range varRef.FindAllStringSubmatch(e.Value, -1) {
						if regexp.MustCompile(`(?i)password|secret`).MatchString(m[1]) {
							t.Errorf("%s %s container %s: env %s expands the secret $(%s)", p.Owner.id(), p.Where, ctr.Name, e.Name, m[1])
						}
					}
				}
			}
		}
		for _, o := range c.objs {
			if o.kind() == "Secret" {
				continue
			}
			raw := string(o.Raw)
			for _, m := range passwordInURI.FindAllStringSubmatch(raw, -1) {
				if !strings.HasPrefix(m[1], "$(") && !strings.HasPrefix(m[1], "${") && m[1] != "%s" {
					t.Errorf("%s: a URI with a literal password: %s", o.id(), m[0])
				}
			}
			for _, v := range values {
				if strings.Contains(raw, v) {
					t.Errorf("%s: holds a value of a Secret", o.id())
				}
			}
		}
	})
}
