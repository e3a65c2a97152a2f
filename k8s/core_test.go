package k8s_test

import (
	"errors"
	"fmt"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// coreTypes are the built-in kinds the manifests may use, each decoded
// strictly into its k8s.io/api type: an unknown or misspelt field fails.
var coreTypes = map[string]func() any{
	"v1/Namespace":                             func() any { return &corev1.Namespace{} },
	"v1/ServiceAccount":                        func() any { return &corev1.ServiceAccount{} },
	"v1/Service":                               func() any { return &corev1.Service{} },
	"v1/ConfigMap":                             func() any { return &corev1.ConfigMap{} },
	"v1/Secret":                                func() any { return &corev1.Secret{} },
	"v1/PersistentVolumeClaim":                 func() any { return &corev1.PersistentVolumeClaim{} },
	"apps/v1/Deployment":                       func() any { return &appsv1.Deployment{} },
	"apps/v1/StatefulSet":                      func() any { return &appsv1.StatefulSet{} },
	"batch/v1/Job":                             func() any { return &batchv1.Job{} },
	"batch/v1/CronJob":                         func() any { return &batchv1.CronJob{} },
	"networking.k8s.io/v1/NetworkPolicy":       func() any { return &networkingv1.NetworkPolicy{} },
	"rbac.authorization.k8s.io/v1/Role":        func() any { return &rbacv1.Role{} },
	"rbac.authorization.k8s.io/v1/RoleBinding": func() any { return &rbacv1.RoleBinding{} },
	// The Prometheus operator's and Prometheus's (k8s/operators/prometheus).
	"rbac.authorization.k8s.io/v1/ClusterRole":        func() any { return &rbacv1.ClusterRole{} },
	"rbac.authorization.k8s.io/v1/ClusterRoleBinding": func() any { return &rbacv1.ClusterRoleBinding{} },
	// The Flink operator's own CRD, which k8s/operators/flink installs.
	"apiextensions.k8s.io/v1/CustomResourceDefinition": func() any { return &apiextensionsv1.CustomResourceDefinition{} },
}

// decodeStrict decodes raw YAML into v as the API server's strict field
// validation does: case-sensitive field names, and unknown fields,
// duplicate keys and values of the wrong type (a quantity such as "2Gx"
// included) are errors.
func decodeStrict(raw []byte, v any) error {
	js, err := yaml.YAMLToJSONStrict(raw)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(js, v, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// decodeCore decodes a built-in object strictly. It returns nil, nil for a
// kind that is not built in.
func decodeCore(o object) (any, error) {
	newT, ok := coreTypes[o.gvk()]
	if !ok {
		return nil, nil
	}
	v := newT()
	if err := decodeStrict(o.Raw, v); err != nil {
		return nil, fmt.Errorf("%s: strict decode as %s: %w", o.id(), o.gvk(), err)
	}
	return v, nil
}

// decodeKustomization decodes a kustomization.yaml strictly.
func decodeKustomization(o object) (*types.Kustomization, error) {
	var k types.Kustomization
	if err := decodeStrict(o.Raw, &k); err != nil {
		return nil, fmt.Errorf("%s: strict decode as Kustomization: %w", o.Source, err)
	}
	switch {
	case k.Kind == "Kustomization" && k.APIVersion == "kustomize.config.k8s.io/v1beta1":
	case k.Kind == "Component" && k.APIVersion == "kustomize.config.k8s.io/v1alpha1":
	default:
		return nil, fmt.Errorf("%s: want kustomize.config.k8s.io/v1beta1 Kustomization or v1alpha1 Component, got %s %s", o.Source, k.APIVersion, k.Kind)
	}
	return &k, nil
}

// podTemplate is one pod's template, wherever it is in an object.
type podTemplate struct {
	// Owner is the object holding it; Where says where in it.
	Owner object
	Where string
	// Labels are the pod's labels, including the ones an operator adds.
	Labels map[string]string
	Spec   corev1.PodSpec
	// OperatorContainers are containers whose resources an operator sets
	// from elsewhere (FlinkDeployment's flink-main-container).
	OperatorContainers map[string]bool
}

// podTemplates extracts the pod templates of workloads and of the custom
// resources that carry one (FlinkDeployment), decoded strictly.
func podTemplates(o object) ([]podTemplate, error) {
	switch o.gvk() {
	case "apps/v1/Deployment", "apps/v1/StatefulSet", "batch/v1/Job", "batch/v1/CronJob":
		v, err := decodeCore(o)
		if err != nil {
			return nil, err
		}
		var t corev1.PodTemplateSpec
		switch w := v.(type) {
		case *appsv1.Deployment:
			t = w.Spec.Template
		case *appsv1.StatefulSet:
			t = w.Spec.Template
		case *batchv1.Job:
			t = w.Spec.Template
		case *batchv1.CronJob:
			t = w.Spec.JobTemplate.Spec.Template
		}
		return []podTemplate{{Owner: o, Where: "spec.template", Labels: t.Labels, Spec: t.Spec}}, nil
	case "flink.apache.org/v1beta1/FlinkDeployment":
		return flinkPodTemplates(o)
	}
	return nil, nil
}

// flinkPodTemplates merges the FlinkDeployment's shared pod template with
// the JobManager's and the TaskManager's, by container name, as the operator
// does with kubernetes.operator.pod-template.merge-arrays-by-name, and adds
// the labels the operator puts on the pods (app, component).
func flinkPodTemplates(o object) ([]podTemplate, error) {
	decode := func(path ...string) (corev1.Pod, error) {
		var p corev1.Pod
		m := get(o.Map, path...)
		if m == nil {
			return p, nil
		}
		raw, err := yaml.Marshal(m)
		if err != nil {
			return p, err
		}
		if err := decodeStrict(raw, &p); err != nil {
			return p, fmt.Errorf("%s: %v: strict decode as a Pod: %w", o.id(), path, err)
		}
		return p, nil
	}
	shared, err := decode("spec", "podTemplate")
	if err != nil {
		return nil, err
	}
	var out []podTemplate
	for _, c := range []struct{ key, component string }{{"jobManager", "jobmanager"}, {"taskManager", "taskmanager"}} {
		own, err := decode("spec", c.key, "podTemplate")
		if err != nil {
			return nil, err
		}
		labels := map[string]string{"app": o.name(), "component": c.component, "type": "flink-native-kubernetes"}
		for k, v := range shared.Labels {
			labels[k] = v
		}
		for k, v := range own.Labels {
			labels[k] = v
		}
		spec := shared.Spec
		spec.Containers = mergeContainers(shared.Spec.Containers, own.Spec.Containers)
		spec.Volumes = append(append([]corev1.Volume{}, shared.Spec.Volumes...), own.Spec.Volumes...)
		if own.Spec.SecurityContext != nil {
			spec.SecurityContext = own.Spec.SecurityContext
		}
		if own.Spec.ServiceAccountName != "" {
			spec.ServiceAccountName = own.Spec.ServiceAccountName
		}
		if own.Spec.AutomountServiceAccountToken != nil {
			spec.AutomountServiceAccountToken = own.Spec.AutomountServiceAccountToken
		}
		// Flink sets the TaskManagers' account from its configuration,
		// over the pod template's.
		if sa := str(o.Map, "spec", "flinkConfiguration", "kubernetes.taskmanager.service-account"); sa != "" && c.key == "taskManager" {
			spec.ServiceAccountName = sa
		}
		if spec.ServiceAccountName == "" {
			spec.ServiceAccountName = str(o.Map, "spec", "serviceAccount")
		}
		// The operator fills in the main container's image and resources.
		for i := range spec.Containers {
			if spec.Containers[i].Name == "flink-main-container" && spec.Containers[i].Image == "" {
				spec.Containers[i].Image = str(o.Map, "spec", "image")
			}
		}
		out = append(out, podTemplate{
			Owner: o, Where: "spec." + c.key, Labels: labels, Spec: spec,
			OperatorContainers: map[string]bool{"flink-main-container": true},
		})
	}
	return out, nil
}

// mergeContainers overlays b's containers on a's by name. Lists inside a
// container (env, ports, mounts) are concatenated, scalars of b win.
func mergeContainers(a, b []corev1.Container) []corev1.Container {
	out := append([]corev1.Container{}, a...)
	for _, c := range b {
		found := false
		for i := range out {
			if out[i].Name != c.Name {
				continue
			}
			found = true
			m := out[i]
			m.Env = append(m.Env, c.Env...)
			m.EnvFrom = append(m.EnvFrom, c.EnvFrom...)
			m.Ports = append(m.Ports, c.Ports...)
			m.VolumeMounts = append(m.VolumeMounts, c.VolumeMounts...)
			if c.Image != "" {
				m.Image = c.Image
			}
			if len(c.Command) > 0 {
				m.Command = c.Command
			}
			if len(c.Args) > 0 {
				m.Args = c.Args
			}
			if c.Resources.Limits != nil || c.Resources.Requests != nil {
				m.Resources = c.Resources
			}
			if c.SecurityContext != nil {
				m.SecurityContext = c.SecurityContext
			}
			out[i] = m
		}
		if !found {
			out = append(out, c)
		}
	}
	return out
}
