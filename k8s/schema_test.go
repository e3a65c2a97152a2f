package k8s_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// crdSchema is one served version of a vendored CustomResourceDefinition,
// compiled the way kube-apiserver compiles it: the structural schema, the
// OpenAPI validator and the CEL rules (x-kubernetes-validations).
type crdSchema struct {
	file       string
	namespaced bool
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

var (
	crdOnce    sync.Once
	crdSchemas map[string][]*crdSchema // by "group/version/Kind": one per vendored CRD that serves it
	crdErr     error
)

// loadSchemas loads k8s/crds/*.yaml and k8s/operators/*/crd-*.yaml once: the
// operators' real CRDs, vendored by k8s/crds/regen.sh.
func loadSchemas() (map[string][]*crdSchema, error) {
	crdOnce.Do(func() {
		crdSchemas, crdErr = loadCRDs(filepath.Join(appRoot, "k8s", "crds", "*.yaml"),
			filepath.Join(appRoot, "k8s", "operators", "*", "crd-*.yaml"))
	})
	return crdSchemas, crdErr
}

func schemas(t testing.TB) map[string][]*crdSchema {
	t.Helper()
	s, err := loadSchemas()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// loadCRDs loads every CRD the patterns match. Two files may serve the same
// kind: the FlinkDeployment's CRD of the operator that runs here (1.7.0,
// k8s/operators/flink) and of a newer release (k8s/crds); a resource must be
// valid under each.
func loadCRDs(patterns ...string) (map[string][]*crdSchema, error) {
	var files []string
	for _, p := range patterns {
		m, err := filepath.Glob(p)
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("no CRDs match %s: run k8s/crds/regen.sh", p)
		}
		files = append(files, m...)
	}
	out := map[string][]*crdSchema{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var v1 apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(data, &v1); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(&v1)
		var crd apiextensions.CustomResourceDefinition
		if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(&v1, &crd, nil); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		// The API server's own check of a CRD on create.
		if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), &crd); len(errs) > 0 {
			return nil, fmt.Errorf("%s: the API server would reject this CRD: %v", filepath.Base(f), errs.ToAggregate())
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			props := crd.Spec.Validation
			if v.Schema != nil {
				props = v.Schema
			}
			if props == nil || props.OpenAPIV3Schema == nil {
				return nil, fmt.Errorf("%s: version %s has no schema", f, v.Name)
			}
			s, err := structuralschema.NewStructural(props.OpenAPIV3Schema)
			if err != nil {
				return nil, fmt.Errorf("%s %s: not a structural schema: %v", f, v.Name, err)
			}
			validator, _, err := apiservervalidation.NewSchemaValidator(props.OpenAPIV3Schema)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %v", f, v.Name, err)
			}
			gvk := crd.Spec.Group + "/" + v.Name + "/" + crd.Spec.Names.Kind
			out[gvk] = append(out[gvk], &crdSchema{
				file:       filepath.Base(f),
				namespaced: crd.Spec.Scope == apiextensions.NamespaceScoped,
				structural: s,
				validator:  validator,
				cel:        cel.NewValidator(s, true, celconfig.PerCallLimit),
			})
		}
	}
	return out, nil
}

// validateCustomResource runs what kube-apiserver runs when a custom
// resource is created with strict field validation (kubectl's default):
// unknown fields are errors, then defaulting, the OpenAPI schema, metadata
// and embedded resources, list types, and the CEL rules.
func validateCustomResource(o object, s *crdSchema) []string {
	data, err := yaml.YAMLToJSON(o.Raw)
	if err != nil {
		return []string{err.Error()}
	}
	// The API server's decoder: integers become int64, as in a request.
	var obj map[string]any
	if err := utiljson.Unmarshal(data, &obj); err != nil {
		return []string{err.Error()}
	}
	var errs []string
	opts := structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}
	unknown := structuralpruning.PruneWithOptions(obj, s.structural, true, opts)
	sort.Strings(unknown)
	for _, p := range unknown {
		errs = append(errs, fmt.Sprintf("unknown field %q", p))
	}
	if err := schemaobjectmeta.Coerce(nil, obj, s.structural, true, false); err != nil {
		errs = append(errs, err.Error())
	}
	structuraldefaulting.Default(obj, s.structural)
	if md, ok := obj["metadata"].(map[string]any); ok {
		if _, isNS := md["namespace"]; isNS && !s.namespaced {
			errs = append(errs, "metadata.namespace: set on a cluster-scoped resource")
		}
	}
	for _, e := range apiservervalidation.ValidateCustomResource(nil, obj, s.validator) {
		errs = append(errs, e.Error())
	}
	for _, e := range schemaobjectmeta.Validate(context.Background(), nil, obj, s.structural, true) {
		errs = append(errs, e.Error())
	}
	for _, e := range structurallisttype.ValidateListSetsAndMaps(nil, s.structural, obj) {
		errs = append(errs, e.Error())
	}
	celErrs, _ := s.cel.Validate(context.Background(), nil, s.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	for _, e := range celErrs {
		errs = append(errs, e.Error())
	}
	return errs
}

// TestCRDsVendored checks that every CRD the manifests need is vendored,
// and that each one compiles as kube-apiserver compiles it.
func TestCRDsVendored(t *testing.T) {
	s := schemas(t)
	for gvk := range crdChecks {
		if s[gvk] == nil {
			t.Errorf("%s: no CRD in k8s/crds serves it (k8s/crds/regen.sh)", gvk)
		}
	}
	var names []string
	for gvk, cs := range s {
		for _, c := range cs {
			names = append(names, gvk+" ("+c.file+")")
		}
	}
	sort.Strings(names)
	t.Logf("%d served versions: %s", len(names), strings.Join(names, ", "))
}

// TestSchemasRejectInvalid changes the rendered overlays' custom resources in
// ways their operators' schemas reject, and checks that validate fails each
// one. The first two were accepted by the hand-written checks that the
// schemas replaced.
func TestSchemasRejectInvalid(t *testing.T) {
	objs := append(kustomizeBuild(t, "overlays/dev"), kustomizeBuild(t, "overlays/prod")...)
	objs = append(objs, kustomizeBuild(t, "argocd")...)
	cases := invalidCustomResources
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var target *object
			for i := range objs {
				if objs[i].kind() == c.kind {
					target = &objs[i]
					break
				}
			}
			if target == nil {
				t.Fatalf("no overlay renders a %s", c.kind)
			}
			if errs := validate(*target); len(errs) > 0 {
				t.Fatalf("%s is invalid before the change: %v", target.id(), errs)
			}
			bad := mutate(t, *target, c.change)
			errs := validate(bad)
			if len(errs) == 0 {
				t.Fatalf("%s: validate accepted it", bad.id())
			}
			if !strings.Contains(strings.Join(errs, "\n"), c.want) {
				t.Errorf("%s: errors do not mention %q:\n%s", bad.id(), c.want, strings.Join(errs, "\n"))
			}
			t.Logf("rejected: %s", strings.Join(errs, "; "))
		})
	}
}

// invalidCustomResource is one change to a rendered custom resource that its
// operator's schema rejects. TestSchemasRejectInvalid checks that the
// in-process validator rejects each; TestAPIServer (apiserver_test.go, tag
// apiserver) that a real kube-apiserver does.
type invalidCustomResource struct {
	name, kind string
	change     func(m map[string]any)
	// want is part of the in-process validator's message.
	want string
}

var invalidCustomResources = []invalidCustomResource{
	{"PodMonitor interval in words", "PodMonitor", func(m map[string]any) {
		list(m, "spec", "podMetricsEndpoints")[0].(map[string]any)["interval"] = "15 seconds"
	}, "interval"},
	{"alert rule for in words", "PrometheusRule", func(m map[string]any) {
		rules := list(list(m, "spec", "groups")[0], "rules")
		rules[0].(map[string]any)["for"] = "1 minute"
	}, "for"},
	{"Kafka listener type", "Kafka", func(m map[string]any) {
		list(m, "spec", "kafka", "listeners")[0].(map[string]any)["type"] = "clusterip"
	}, "type"},
	{"Kafka ZooKeeper", "Kafka", func(m map[string]any) {
		mapAt(m, "spec")["zookeeper"] = map[string]any{"replicas": 3}
	}, "unknown field \"spec.zookeeper\""},
	{"KafkaNodePool role", "KafkaNodePool", func(m map[string]any) {
		mapAt(m, "spec")["roles"] = []any{"controller", "leader"}
	}, "roles"},
	{"KafkaTopic misspelt field", "KafkaTopic", func(m map[string]any) {
		mapAt(m, "spec")["partition"] = 8
	}, "unknown field \"spec.partition\""},
	{"FlinkDeployment version", "FlinkDeployment", func(m map[string]any) {
		mapAt(m, "spec")["flinkVersion"] = "v1_99"
	}, "flinkVersion"},
	{"FlinkDeployment configuration value not a string", "FlinkDeployment", func(m map[string]any) {
		mapAt(m, "spec", "flinkConfiguration")["taskmanager.numberOfTaskSlots"] = 4
	}, "flinkConfiguration"},
	{"PrometheusRule rule without expr", "PrometheusRule", func(m map[string]any) {
		delete(list(list(m, "spec", "groups")[0], "rules")[0].(map[string]any), "expr")
	}, "expr"},
	{"Kafka metrics without their ConfigMap (a CEL rule)", "Kafka", func(m map[string]any) {
		mapAt(m, "spec", "kafka")["metricsConfig"] = map[string]any{"type": "jmxPrometheusExporter"}
	}, "valueFrom property is required"},
	{"ExternalSecret store kind", "ExternalSecret", func(m map[string]any) {
		mapAt(m, "spec", "secretStoreRef")["kind"] = "Store"
	}, "secretStoreRef.kind"},
	{"Application without a project", "Application", func(m map[string]any) {
		delete(mapAt(m, "spec"), "project")
	}, "spec.project"},
	{"KafkaUser ACL operation misspelt", "KafkaUser", func(m map[string]any) {
		list(m, "spec", "authorization", "acls")[0].(map[string]any)["operations"] = []any{"Reed"}
	}, "operations"},
	{"KafkaUser authentication type", "KafkaUser", func(m map[string]any) {
		mapAt(m, "spec", "authentication")["type"] = "scram-sha-1"
	}, "authentication.type"},
	{"Kafka authorization type", "Kafka", func(m map[string]any) {
		mapAt(m, "spec", "kafka", "authorization")["type"] = "acl"
	}, "authorization.type"},
	{"PodMonitor scheme", "PodMonitor", func(m map[string]any) {
		list(m, "spec", "podMetricsEndpoints")[0].(map[string]any)["scheme"] = "tcp"
	}, "scheme"},
}

// mutate returns a deep copy of o with change applied to it.
func mutate(t *testing.T, o object, change func(map[string]any)) object {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal(o.Raw, &m); err != nil {
		t.Fatal(err)
	}
	change(m)
	raw, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return object{Source: o.Source + " (changed)", Raw: raw, Map: m}
}
