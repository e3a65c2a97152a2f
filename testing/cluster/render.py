#!/usr/bin/env python3
"""Turns one container of a rendered overlay into `podman run` arguments.

    kubectl kustomize k8s/overlays/dev | render.py KIND NAME CONTAINER [PVC_DIR]

prints, one per line, the podman run options and then the image and its
command line, as the kubelet would run that container:

  - the image, mapped to the locally built one (IMAGES below);
  - command and args, with $(VAR) expanded from the container's environment;
  - env, envFrom, secretKeyRef and configMapKeyRef, read from the rendered
    Secrets and ConfigMaps (not copies);
  - the pod's and the container's user, group, read-only root file system,
    dropped capabilities and no-new-privileges;
  - PVC mounts (volumeClaimTemplates, claims), emptyDirs and ConfigMap
    volumes as directories under PVC_DIR, owned by the container's user
    (without PVC_DIR, claims and emptyDirs are tmpfs; RENDER_CLAIMS_DIR puts
    the claims in a directory of their own).

The containers run in one podman pod (one network namespace). With
RENDER_HOSTS=1 it prints instead the --add-host options for `podman pod
create` that resolve every Service name of the overlay to 127.0.0.1, where
each Service's port is its container's port; with RENDER_SERVICE_IPS="svc=IP
svc=IP ..." (testing/cluster/pods.sh: one pod per workload on a bridge) it
resolves each Service named there, in all its DNS forms, to that pod's IP.

For one pod per workload (testing/cluster/pods.sh):
  - KIND FlinkDeployment, NAME haade-flink/jobmanager or /taskmanager: the
    pod the Flink operator would make, its podTemplate merged with the
    component's by container and volume name; flink-main-container runs
    spec.image with the component as its argument;
  - RENDER_POD_IP fills fieldRef status.podIP; Secret volumes become
    read-only directories of their keys; a projected service-account token
    is left out (no API server here: the caller says so);
  - extra objects that operators would create (Strimzi's Secrets) may be
    appended to the rendered stream.

Two more modes, for what the operators configure:
  render.py flink-conf NAME COMPONENT POD_IP   config.yaml of that Flink pod
  render.py strimzi CLUSTER                    the Kafka's listeners, config,
      authorization, topics and users, as lines pods.sh applies
"""
import base64
import os
import re
import sys

import yaml

# The public images of the manifests, and the images testing/cluster/images.sh builds instead.
IMAGES = {
    "haade": "localhost/haade:dev",
    "quay.io/minio/minio": "localhost/haade-minio:dev",
    "postgres": "localhost/haade-postgres:dev",
    "apache/beam_flink1.20_job_server": "localhost/haade-jobserver:dev",
    "flink": "localhost/haade-flink:dev",
}


def merge_by_name(base, over):
    """Kubernetes-style merge of two lists of named objects (the operator's
    kubernetes.operator.pod-template.merge-arrays-by-name)."""
    out = [dict(x) for x in base]
    for o in over:
        for i, b in enumerate(out):
            if b.get("name") == o.get("name"):
                out[i] = merge(b, o)
                break
        else:
            out.append(o)
    return out


def merge(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = merge(a[k], v) if k in a else v
        return out
    if isinstance(a, list) and isinstance(b, list) and all(isinstance(x, dict) and "name" in x for x in a + b):
        return merge_by_name(a, b)
    return b


def dns_forms(name, ns):
    return {name, f"{name}.{ns}", f"{name}.{ns}.svc", f"{name}.{ns}.svc.cluster.local"}


def operator_services(docs):
    """The Services the operators would create: the Flink operator's <name>
    (JobManager RPC) and <name>-rest; Strimzi's <cluster>-kafka-bootstrap,
    <cluster>-kafka-brokers and each broker's <cluster>-<pool>-<i>.<cluster>-kafka-brokers."""
    out = set()
    for d in docs:
        md = d.get("metadata", {})
        ns = md.get("namespace", "default")
        if d["kind"] == "FlinkDeployment":
            out |= dns_forms(md["name"], ns) | dns_forms(md["name"] + "-rest", ns)
        elif d["kind"] == "Kafka":
            out |= dns_forms(md["name"] + "-kafka-bootstrap", ns) | dns_forms(md["name"] + "-kafka-brokers", ns)
        elif d["kind"] == "KafkaNodePool":
            c = md["labels"]["strimzi.io/cluster"]
            for i in range(d["spec"].get("replicas", 1)):
                pod = f"{c}-{md['name']}-{i}.{c}-kafka-brokers"
                out |= {f"{pod}.{ns}", f"{pod}.{ns}.svc", f"{pod}.{ns}.svc.cluster.local"}
    return out


def flink_pod(fd, component):
    """The pod spec the Flink operator makes for a component of a FlinkDeployment."""
    spec = fd["spec"]
    key = {"jobmanager": "jobManager", "taskmanager": "taskManager"}[component]
    pod = merge(spec.get("podTemplate", {}).get("spec", {}), spec[key].get("podTemplate", {}).get("spec", {}))
    ctrs = pod.get("containers", [])
    for c in ctrs:
        if c["name"] == "flink-main-container":
            c.setdefault("image", spec["image"])
            c["args"] = [component]
    return {"spec": {"template": {"spec": pod}}}


def flink_conf(fd, component, pod_ip):
    """config.yaml as the operator would write it for this pod, less what
    needs a Kubernetes API server (Kubernetes HA, the operator's own keys)."""
    spec = fd["spec"]
    name, ns = fd["metadata"]["name"], fd["metadata"].get("namespace", "default")
    conf = {k: v for k, v in spec["flinkConfiguration"].items()
            if not k.startswith(("high-availability", "kubernetes."))}
    mem = lambda c: str(spec[c]["resource"]["memory"])  # noqa: E731
    conf.update({
        # The operator's Services: <name> (RPC) and <name>-rest.
        "jobmanager.rpc.address": f"{name}.{ns}", "jobmanager.rpc.port": "6123",
        "rest.address": f"{name}-rest.{ns}", "rest.port": "8081", "rest.bind-address": "0.0.0.0",
        "jobmanager.bind-host": "0.0.0.0", "blob.server.port": "6124",
        "jobmanager.memory.process.size": mem("jobManager"),
        "taskmanager.memory.process.size": mem("taskManager"),
        # taskmanager.rpc.port stays Flink's default, a free port: a TaskManager
        # pod restarted in place keeps its IP, and the JobManager's Pekko
        # refuses a new incarnation at the old host:port ("read-only
        # association"). Kubernetes replaces a deleted pod with a new IP instead.
        "taskmanager.bind-host": "0.0.0.0",
    })
    if component == "taskmanager":
        conf["taskmanager.host"] = pod_ip
    else:
        conf["jobmanager.rpc.address"] = f"{name}.{ns}"
    return "".join(f"{k}: {v}\n" for k, v in sorted(conf.items()))


def strimzi(docs, cluster):
    """What Strimzi makes of the Kafka CLUSTER, its topics and users, as lines:
    listener NAME PORT PROTOCOL MECHANISM / config KEY VALUE / authorization TYPE
    / topic NAME PARTITIONS REPLICAS [KEY=VALUE...] / user NAME MECHANISM
    / acl USER RESOURCE_TYPE NAME PATTERN OPERATION,..."""
    out = []
    kafka = next((d for d in docs if d["kind"] == "Kafka" and d["metadata"]["name"] == cluster), None)
    if kafka is None:
        sys.exit(f"render.py: no Kafka {cluster} in the rendered overlay")
    k = kafka["spec"]["kafka"]
    for lst in k.get("listeners", []):
        auth = (lst.get("authentication") or {}).get("type", "")
        mech = {"scram-sha-512": "SCRAM-SHA-512", "": "-"}.get(auth)
        if mech is None:
            sys.exit(f"render.py: listener {lst['name']}: authentication {auth} is not supported here")
        proto = ("SASL_SSL" if lst.get("tls") else "SASL_PLAINTEXT") if auth else ("SSL" if lst.get("tls") else "PLAINTEXT")
        out.append(f"listener {lst['name'].upper()}-{lst['port']} {lst['port']} {proto} {mech}")
    for key, v in sorted((k.get("config") or {}).items()):
        out.append(f"config {key} {str(v).lower() if isinstance(v, bool) else v}")
    out.append(f"authorization {(k.get('authorization') or {}).get('type', 'none')}")
    for d in docs:
        if d.get("metadata", {}).get("labels", {}).get("strimzi.io/cluster") != cluster:
            continue
        if d["kind"] == "KafkaTopic":
            sp = d["spec"]
            cfg = " ".join(f"{a}={b}" for a, b in sorted((sp.get("config") or {}).items()))
            out.append(f"topic {sp.get('topicName', d['metadata']['name'])} {sp['partitions']} {sp['replicas']} {cfg}".rstrip())
        elif d["kind"] == "KafkaUser":
            sp, user = d["spec"], d["metadata"]["name"]
            out.append(f"user {user} {sp['authentication']['type'].upper()} {d['metadata'].get('namespace', '')}")
            for acl in (sp.get("authorization") or {}).get("acls", []):
                r = acl["resource"]
                out.append(f"acl {user} {r['type']} {r['name']} {r.get('patternType', 'literal')} {','.join(acl['operations'])}")
    return "\n".join(out)


def image_name(ref):
    ref = ref.split("@", 1)[0]
    head, _, tail = ref.rpartition(":")
    return head if head and "/" not in tail else ref


def main():
    docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
    if sys.argv[1] == "flink-conf":
        name, component, pod_ip = sys.argv[2:5]
        fd = next(d for d in docs if d["kind"] == "FlinkDeployment" and d["metadata"]["name"] == name)
        sys.stdout.write(flink_conf(fd, component, pod_ip))
        return
    if sys.argv[1] == "strimzi":
        print(strimzi(docs, sys.argv[2]))
        return
    kind, name, container = sys.argv[1:4]
    pvc_dir = sys.argv[4] if len(sys.argv) > 4 else ""
    component = ""
    if kind == "FlinkDeployment":
        name, _, component = name.partition("/")
    secrets, configmaps, services = {}, {}, set()
    obj = None
    for d in docs:
        md = d.get("metadata", {})
        ns = md.get("namespace", "")
        if d["kind"] == "Secret":
            data = {k: base64.b64decode(v).decode() for k, v in (d.get("data") or {}).items()}
            data.update(d.get("stringData") or {})
            secrets[md["name"]] = data
        elif d["kind"] == "ConfigMap":
            configmaps[md["name"]] = d.get("data") or {}
        elif d["kind"] == "Service":
            for host in (md["name"], f"{md['name']}.{ns}", f"{md['name']}.{ns}.svc", f"{md['name']}.{ns}.svc.cluster.local"):
                services.add(host)
        if d["kind"] == kind and md.get("name") == name:
            obj = d
    if obj is not None and component:
        obj = flink_pod(obj, component)
    if obj is None:
        sys.exit(f"render.py: no {kind} {name} in the rendered overlay")
    spec = obj["spec"]
    if kind == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    pod = spec["template"]["spec"]
    claims = {c["metadata"]["name"] for c in spec.get("volumeClaimTemplates", [])}
    ctr = next((c for c in pod.get("containers", []) + pod.get("initContainers", []) if c["name"] == container), None)
    if ctr is None:
        sys.exit(f"render.py: {kind} {name} has no container {container}")

    env = {}

    def expand(s):
        return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), s)

    for ef in ctr.get("envFrom", []):
        if "secretRef" in ef:
            env.update(secrets[ef["secretRef"]["name"]])
        if "configMapRef" in ef:
            env.update(configmaps[ef["configMapRef"]["name"]])
    for e in ctr.get("env", []):
        if "value" in e:
            env[e["name"]] = expand(e["value"])
        elif "secretKeyRef" in e.get("valueFrom", {}):
            r = e["valueFrom"]["secretKeyRef"]
            env[e["name"]] = secrets[r["name"]][r["key"]]
        elif "configMapKeyRef" in e.get("valueFrom", {}):
            r = e["valueFrom"]["configMapKeyRef"]
            env[e["name"]] = configmaps[r["name"]][r["key"]]
        elif "fieldRef" in e.get("valueFrom", {}):
            path = e["valueFrom"]["fieldRef"]["fieldPath"]
            fields = {"status.podIP": os.environ.get("RENDER_POD_IP", ""), "metadata.name": name,
                      "metadata.namespace": obj["metadata"].get("namespace", "") if "metadata" in obj else ""}
            if not fields.get(path):
                sys.exit(f"render.py: {kind} {name}: env {e['name']}: fieldRef {path} needs RENDER_POD_IP")
            env[e["name"]] = fields[path]

    psc, csc = pod.get("securityContext", {}), ctr.get("securityContext", {})
    user = csc.get("runAsUser", psc.get("runAsUser"))
    group = csc.get("runAsGroup", psc.get("runAsGroup", user))
    out = []
    if os.environ.get("RENDER_SERVICE_IPS"):
        # For `podman pod create` on a bridge: each Service to its pod's IP.
        ips = dict(x.split("=", 1) for x in os.environ["RENDER_SERVICE_IPS"].split())
        print("\n".join(f"--add-host={h}:{ips[h.split('.')[0]]}" for h in sorted(services | operator_services(docs))
                        if h.split(".")[0] in ips))
        return
    if os.environ.get("RENDER_HOSTS"):
        # For `podman pod create`: a pod's containers take its hosts.
        print("\n".join(f"--add-host={h}:127.0.0.1" for h in sorted(services)))
        return
    if user is not None:
        out.append(f"--user={user}:{group}")
    if psc.get("fsGroup") is not None:
        out.append(f"--group-add={psc['fsGroup']}")
    if csc.get("readOnlyRootFilesystem"):
        out.append("--read-only")
    for cap in csc.get("capabilities", {}).get("drop", []):
        out.append(f"--cap-drop={cap}")
    if csc.get("allowPrivilegeEscalation") is False:
        out.append("--security-opt=no-new-privileges")
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    # Claims may live apart from the pod's own directories (RENDER_CLAIMS_DIR),
    # so that pods that mount one claim share it while emptyDirs stay per pod.
    claims_dir = os.environ.get("RENDER_CLAIMS_DIR", pvc_dir)
    for m in ctr.get("volumeMounts", []):
        v = volumes.get(m["name"], {})
        if m["name"] in claims and pvc_dir:
            path = os.path.join(claims_dir, f"{name}-{m['name']}")
            os.makedirs(path, exist_ok=True)
            if user is not None:
                os.chown(path, int(user), int(group))
            out.append(f"--volume={path}:{m['mountPath']}")
        elif "configMap" in v:
            # A ConfigMap volume: its keys as read-only files.
            d = os.path.join(pvc_dir or "/tmp", f"{name}-{m['name']}")
            os.makedirs(d, exist_ok=True)
            for k, val in configmaps[v["configMap"]["name"]].items():
                with open(os.path.join(d, k), "w") as f:
                    f.write(val)
            os.chmod(d, 0o755)
            out.append(f"--volume={d}:{m['mountPath']}:ro")
        elif "persistentVolumeClaim" in v and pvc_dir:
            path = os.path.join(claims_dir, v["persistentVolumeClaim"]["claimName"])
            os.makedirs(path, exist_ok=True)
            if user is not None:
                os.chown(path, int(user), int(group))
            out.append(f"--volume={path}:{m['mountPath']}")
        elif "secret" in v and pvc_dir:
            # A Secret volume: its keys (or the items asked) as read-only files.
            sname = v["secret"]["secretName"]
            if sname not in secrets:
                sys.exit(f"render.py: {kind} {name}: volume {m['name']}: no Secret {sname} (an operator makes it: append it to the stream)")
            d = os.path.join(pvc_dir, f"{name}-{ctr['name']}-{m['name']}")
            os.makedirs(d, exist_ok=True)
            items = v["secret"].get("items") or [{"key": k, "path": k} for k in secrets[sname]]
            for it in items:
                with open(os.path.join(d, it["path"]), "w") as f:
                    f.write(secrets[sname][it["key"]])
                os.chmod(os.path.join(d, it["path"]), 0o644)
            os.chmod(d, 0o755)
            out.append(f"--volume={d}:{m['mountPath']}:ro")
        elif "projected" in v and any("serviceAccountToken" in x for x in v["projected"].get("sources", [])):
            # A service-account token: there is no API server here.
            print(f"render.py: {kind} {name}: {ctr['name']}: leaving out {m['name']} (a service-account token; no API server)", file=sys.stderr)
        elif "emptyDir" in v and pvc_dir:
            # podman gives a tmpfs over a directory the image has the image
            # directory's owner and mode, not the pod's user: a directory
            # owned by the container's user stands in for the emptyDir.
            path = os.path.join(pvc_dir, f"{name}-{ctr['name']}-{m['name']}")
            os.makedirs(path, exist_ok=True)
            if user is not None:
                os.chown(path, int(user), int(group))
            os.chmod(path, 0o770 if user is not None else 0o1777)
            out.append(f"--volume={path}:{m['mountPath']}")
        elif "emptyDir" in v or "persistentVolumeClaim" in v or m["name"] in claims:
            # A Kubernetes quantity (64Mi) as tmpfs takes it (64m).
            size = re.sub(r"([KMG])i$", lambda m: m.group(1).lower(), str(v.get("emptyDir", {}).get("sizeLimit", "")))
            # The kubelet gives an emptyDir to the pod's fsGroup; this
            # kernel refuses tmpfs uid=/gid=, so it is world-writable (sticky).
            opts = ",".join(x for x in ("rw", "mode=1777", f"size={size}" if size else "") if x)
            out.append(f"--tmpfs={m['mountPath']}:{opts}")
        else:
            sys.exit(f"render.py: {kind} {name}: volume {m['name']} is neither an emptyDir nor a claim")
    for k, v in sorted(env.items()):
        out.append(f"--env={k}={v}")
    if ctr.get("command"):
        out.append(f"--entrypoint={ctr['command'][0]}")
    name_only = image_name(ctr["image"])
    if name_only not in IMAGES:
        sys.exit(f"render.py: no local image for {ctr['image']}")
    out.append(IMAGES[name_only])
    out += [expand(a) for a in ctr.get("command", [])[1:]]
    out += [expand(a) for a in ctr.get("args", [])]
    print("\n".join(out))


if __name__ == "__main__":
    main()
