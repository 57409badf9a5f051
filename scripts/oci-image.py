#!/usr/bin/env python3
"""A container image of the static binary, built from nothing (no base image, no
registry): one layer with /nasperf, a non-root user (65532) and its home, written as
an OCI image layout inside a tar that `podman load` and `docker load` accept (it also
carries the manifest.json older Docker versions read).

    scripts/oci-image.py BINARY VERSION OUT.oci.tar
"""
import hashlib, io, json, sys, tarfile, time

UID = 65532
HOME = "/home/nasperf"


def layer_tar(binary):
    out = io.BytesIO()
    now = int(time.time())
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        def add_dir(name, mode, uid=0):
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.uid, info.gid, info.mtime = tarfile.DIRTYPE, mode, uid, uid, now
            tar.addfile(info)

        def add_file(name, data, mode):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), mode, now
            tar.addfile(info, io.BytesIO(data))

        for name, mode, uid in [("etc", 0o755, 0), ("tmp", 0o1777, 0), ("home", 0o755, 0),
                                (HOME[1:], 0o700, UID), (HOME[1:] + "/.config", 0o700, UID),
                                (HOME[1:] + "/.config/nasperf", 0o700, UID), ("data", 0o755, UID)]:
            add_dir(name, mode, uid)
        add_file("etc/passwd", f"root:x:0:0:root:/root:/sbin/nologin\nnasperf:x:{UID}:{UID}:nasperf:{HOME}:/sbin/nologin\n".encode(), 0o644)
        add_file("etc/group", f"root:x:0:\nnasperf:x:{UID}:\n".encode(), 0o644)
        with open(binary, "rb") as f:
            add_file("nasperf", f.read(), 0o755)
    return out.getvalue()


def blob(tar, data):
    digest = hashlib.sha256(data).hexdigest()
    info = tarfile.TarInfo(f"blobs/sha256/{digest}")
    info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
    tar.addfile(info, io.BytesIO(data))
    return f"sha256:{digest}", len(data)


def main(binary, version, out_path):
    layer = layer_tar(binary)
    config = {
        "architecture": "amd64", "os": "linux",
        "config": {
            "User": f"{UID}:{UID}",
            "Entrypoint": ["/nasperf"],
            "Cmd": ["--help"],
            "Env": [f"HOME={HOME}"],
            "WorkingDir": HOME,
            # The token, this host's TLS key and the pinned keys: keep them across updates.
            "Volumes": {f"{HOME}/.config/nasperf": {}},
            "ExposedPorts": {"7600/tcp": {}, "7601/tcp": {}, "7601/udp": {}},
            "Labels": {"org.opencontainers.image.title": "nasperf", "org.opencontainers.image.version": version},
        },
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]},
        "history": [{"created_by": "scripts/oci-image.py: the static nasperf binary, a user, no base image"}],
    }
    with tarfile.open(out_path, "w", format=tarfile.PAX_FORMAT) as tar:
        layer_digest, layer_size = blob(tar, layer)
        config_bytes = json.dumps(config, sort_keys=True).encode()
        config_digest, config_size = blob(tar, config_bytes)
        manifest = {
            "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": config_size},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": layer_digest, "size": layer_size}],
        }
        manifest_digest, manifest_size = blob(tar, json.dumps(manifest, sort_keys=True).encode())
        ref = f"localhost/nasperf:{version}"
        index = {"schemaVersion": 2, "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifest_digest, "size": manifest_size,
            "annotations": {"org.opencontainers.image.ref.name": version, "io.containerd.image.name": ref}}]}
        docker = [{"Config": f"blobs/sha256/{config_digest[7:]}", "RepoTags": [ref],
                   "Layers": [f"blobs/sha256/{layer_digest[7:]}"]}]
        for name, data in [("oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode()),
                           ("index.json", json.dumps(index, sort_keys=True).encode()),
                           ("manifest.json", json.dumps(docker).encode())]:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
            tar.addfile(info, io.BytesIO(data))
    print(f"oci-image: {out_path} ({ref}, {layer_size // (1 << 20)} MiB layer, user {UID}, no base image)")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
