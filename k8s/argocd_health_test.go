package k8s_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/haade/haade/testing/cmdtest"
	lua "github.com/yuin/gopher-lua"
)

// luaValue converts decoded JSON into Lua values, as Argo CD hands a live
// object to a health script.
func luaValue(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(x)
	case float64:
		return lua.LNumber(x)
	case int64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case []any:
		t := L.NewTable()
		for _, e := range x {
			t.Append(luaValue(L, e))
		}
		return t
	case map[string]any:
		t := L.NewTable()
		for k, e := range x {
			t.RawSetString(k, luaValue(L, e))
		}
		return t
	}
	panic(fmt.Sprintf("no Lua value for %T", v))
}

// argoLua is a Lua state as Argo CD 3.6 makes one for a health check
// (util/lua): only the package, base and table libraries (and a safe os),
// unless the resource's useOpenLibs key opens them all.
func argoLua(openLibs bool) *lua.LState {
	L := lua.NewState(lua.Options{SkipOpenLibs: !openLibs})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.open), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			panic(err)
		}
	}
	return L
}

// TestFlinkDeploymentHealth runs k8s/operators/argocd's health check for
// FlinkDeployments, as Argo CD runs it (its libraries included), on the states a rollout passes
// through. The case it exists for: the operator has not yet seen the new
// generation, and the old one is DEPLOYED and READY (Argo CD's built-in check
// says Healthy there, and the next wave's submit Job would submit into the
// cluster being replaced).
func TestFlinkDeploymentHealth(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(cmdtest.MustRepoRoot(t), "k8s/operators/argocd/config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := splitDocs("k8s/operators/argocd/config.yaml", b)
	if err != nil {
		t.Fatal(err)
	}
	var script string
	openLibs := false
	for _, o := range objs {
		if o.kind() == "ConfigMap" && o.name() == "argocd-cm" {
			script = str(o.Map, "data", "resource.customizations.health.flink.apache.org_FlinkDeployment")
			openLibs = str(o.Map, "data", "resource.customizations.useOpenLibs.flink.apache.org_FlinkDeployment") == "true"
		}
	}
	if script == "" {
		t.Fatal("argocd-cm has no health check for flink.apache.org/FlinkDeployment")
	}
	// The last reconciled spec as the operator 1.7.0 records it on the node
	// (abridged): the spec, then the generation it reconciled.
	reconciled := func(gen int) string {
		return fmt.Sprintf(`{"spec":{"job":null,"flinkConfiguration":{"execution.checkpointing.interval":"30s"}},"resource_metadata":{"apiVersion":"flink.apache.org/v1beta1","metadata":{"generation":%d},"firstDeployment":false}}`, gen)
	}
	obj := func(gen int, status map[string]any) map[string]any {
		o := map[string]any{"metadata": map[string]any{"name": "haade-flink", "generation": float64(gen)}, "spec": map[string]any{}}
		if status != nil {
			o["status"] = status
		}
		return o
	}
	for _, c := range []struct {
		name string
		obj  map[string]any
		want string
	}{
		{"no status yet", obj(1, nil), "Progressing"},
		{"the first deployment, JobManager deploying", obj(1, map[string]any{"jobManagerDeploymentStatus": "DEPLOYING", "lifecycleState": "DEPLOYED",
			"reconciliationStatus": map[string]any{"state": "DEPLOYED", "lastReconciledSpec": reconciled(1)}}), "Progressing"},
		{"ready", obj(1, map[string]any{"jobManagerDeploymentStatus": "READY", "lifecycleState": "STABLE",
			"reconciliationStatus": map[string]any{"state": "DEPLOYED", "lastReconciledSpec": reconciled(1)}}), "Healthy"},
		{"a new generation the operator has not seen", obj(2, map[string]any{"jobManagerDeploymentStatus": "READY", "lifecycleState": "STABLE",
			"reconciliationStatus": map[string]any{"state": "DEPLOYED", "lastReconciledSpec": reconciled(1)}}), "Progressing"},
		{"generation 12 is not generation 1", obj(12, map[string]any{"jobManagerDeploymentStatus": "READY", "lifecycleState": "STABLE",
			"reconciliationStatus": map[string]any{"state": "DEPLOYED", "lastReconciledSpec": reconciled(1)}}), "Progressing"},
		{"the new generation upgrading", obj(2, map[string]any{"jobManagerDeploymentStatus": "DEPLOYING", "lifecycleState": "UPGRADING",
			"reconciliationStatus": map[string]any{"state": "UPGRADING", "lastReconciledSpec": reconciled(2)}}), "Progressing"},
		{"the new generation ready", obj(2, map[string]any{"jobManagerDeploymentStatus": "READY", "lifecycleState": "STABLE",
			"reconciliationStatus": map[string]any{"state": "DEPLOYED", "lastReconciledSpec": reconciled(2)}}), "Healthy"},
		{"the JobManager's deployment failed", obj(2, map[string]any{"jobManagerDeploymentStatus": "ERROR", "error": "image not found",
			"reconciliationStatus": map[string]any{"state": "DEPLOYED", "lastReconciledSpec": reconciled(2)}}), "Degraded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			L := argoLua(openLibs)
			defer L.Close()
			L.SetGlobal("obj", luaValue(L, c.obj))
			fn, err := L.LoadString(script)
			if err != nil {
				t.Fatalf("the health check does not compile: %v", err)
			}
			L.Push(fn)
			if err := L.PCall(0, 1, nil); err != nil {
				t.Fatalf("the health check failed: %v", err)
			}
			hs, ok := L.Get(-1).(*lua.LTable)
			if !ok {
				t.Fatalf("the health check returned %v, not a table", L.Get(-1))
			}
			if got := hs.RawGetString("status").String(); got != c.want {
				t.Errorf("status %s (%s), want %s", got, hs.RawGetString("message"), c.want)
			}
		})
	}
}
