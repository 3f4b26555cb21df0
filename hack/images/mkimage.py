#!/usr/bin/env python3
"""Write a single-layer docker-archive image tarball (what `docker save` produces) from a
rootfs directory, without a registry or a Docker daemon; `ctr -n k8s.io images import` reads it.

usage: mkimage.py --name REPO:TAG --rootfs DIR --out IMG.tar [--entrypoint JSON] [--cmd JSON]
                  [--env K=V ...] [--workdir DIR] [--user UID:GID] [--port 6379/tcp ...]
                  [--label K=V ...]

The layer is written by GNU tar in name order with numeric owners (reproducible for identical
inputs); /proc, /sys and /dev contents, apt archives and lists are left out. Next to IMG.tar
it writes IMG.tar.id, "REPO:TAG sha256:CONFIG-DIGEST", which hack/local-cluster/cluster.sh
uses to import only changed images.
"""
import argparse, hashlib, io, json, os, subprocess, tarfile, tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--name", required=True)
ap.add_argument("--rootfs", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--entrypoint")
ap.add_argument("--cmd")
ap.add_argument("--env", action="append", default=[])
ap.add_argument("--workdir", default="/")
ap.add_argument("--user")
ap.add_argument("--port", action="append", default=[])
ap.add_argument("--label", action="append", default=[])
a = ap.parse_args()

with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(a.out))) as tmp:
    layer = os.path.join(tmp, "layer.tar")
    subprocess.check_call([
        "tar", "--numeric-owner", "--xattrs", "--sort=name", "-C", a.rootfs,
        # --xattrs means pax headers: without atime/ctime and the PID in their names
        "--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime",
        "--exclude=./proc/*", "--exclude=./sys/*", "--exclude=./dev/*",
        "--exclude=./var/cache/apt/archives/*.deb", "--exclude=./var/lib/apt/lists/*",
        "--exclude=./var/cache/apt/*.bin", "--exclude=./var/log/*",
        "-cf", layer, "."])
    h = hashlib.sha256()
    with open(layer, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    diff_id = "sha256:" + h.hexdigest()
    cfg = {"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"] + a.env,
           "WorkingDir": a.workdir}
    if a.entrypoint:
        cfg["Entrypoint"] = json.loads(a.entrypoint)
    if a.cmd:
        cfg["Cmd"] = json.loads(a.cmd)
    if a.user:
        cfg["User"] = a.user
    if a.port:
        cfg["ExposedPorts"] = {p: {} for p in a.port}
    if a.label:
        cfg["Labels"] = dict(kv.split("=", 1) for kv in a.label)
    config = {
        "architecture": "amd64", "os": "linux", "created": "1970-01-01T00:00:00Z",
        "config": cfg,
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "hack/images/mkimage.py"}],
    }
    cfg_bytes = json.dumps(config, sort_keys=True).encode()
    cfg_digest = hashlib.sha256(cfg_bytes).hexdigest()
    layer_name = diff_id[7:] + "/layer.tar"
    manifest = [{"Config": cfg_digest + ".json", "RepoTags": [a.name], "Layers": [layer_name]}]
    with tarfile.open(a.out + ".tmp", "w", format=tarfile.GNU_FORMAT) as out:
        def add_bytes(name, data):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            ti.mode = 0o644
            out.addfile(ti, io.BytesIO(data))
        add_bytes(cfg_digest + ".json", cfg_bytes)
        ti = out.gettarinfo(layer, arcname=layer_name)
        ti.mtime, ti.uid, ti.gid, ti.uname, ti.gname = 0, 0, 0, "", ""
        with open(layer, "rb") as f:
            out.addfile(ti, f)
        add_bytes("manifest.json", json.dumps(manifest).encode())
    os.replace(a.out + ".tmp", a.out)
with open(a.out + ".id", "w") as f:
    f.write(f"{a.name} sha256:{cfg_digest}\n")
print(f"{a.out}: {a.name} config sha256:{cfg_digest[:12]} layer {os.path.getsize(a.out) >> 20} MiB")
