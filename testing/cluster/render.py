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
    (without PVC_DIR, claims and emptyDirs are tmpfs).

The containers run in one podman pod (one network namespace). With
RENDER_HOSTS=1 it prints instead the --add-host options for `podman pod
create` that resolve every Service name of the overlay to 127.0.0.1, where
each Service's port is its container's port.
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
}


def image_name(ref):
    ref = ref.split("@", 1)[0]
    head, _, tail = ref.rpartition(":")
    return head if head and "/" not in tail else ref


def main():
    kind, name, container = sys.argv[1:4]
    pvc_dir = sys.argv[4] if len(sys.argv) > 4 else ""
    docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
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

    psc, csc = pod.get("securityContext", {}), ctr.get("securityContext", {})
    user = csc.get("runAsUser", psc.get("runAsUser"))
    group = csc.get("runAsGroup", psc.get("runAsGroup", user))
    out = []
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
    for m in ctr.get("volumeMounts", []):
        v = volumes.get(m["name"], {})
        if m["name"] in claims and pvc_dir:
            path = os.path.join(pvc_dir, f"{name}-{m['name']}")
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
            path = os.path.join(pvc_dir, v["persistentVolumeClaim"]["claimName"])
            os.makedirs(path, exist_ok=True)
            if user is not None:
                os.chown(path, int(user), int(group))
            out.append(f"--volume={path}:{m['mountPath']}")
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
