#!/usr/bin/python3
"""The deployment files hold together with the binary, without a cluster.

Every manifest under deploy/kubernetes/ parses; selectors, Service ports, probes, volumes
and ConfigMap keys point at things that exist; every flag and RATELIMITD_* variable is one
the binary knows; the config each ConfigMap carries passes `ratelimitd --check-config`;
each probe path is served by the real binary with 200; ratelimitd runs non-root with a
read-only root, no privilege escalation and resource limits. The sidecar's nginx serves
ratelimitd's /metrics (and nothing else of it) on the port the pod's scrape annotations name.
deploy/kubernetes/envoy/: the --grpc-listen port is a containerPort reached by a Service port
with appProtocol: grpc, and Envoy's bootstrap sends a domain that ratelimitd's config defines
to that Service port over HTTP/2. docker/docker-compose.yml is held to the same rules.
Usage: manifests_test.py PATH_TO_RATELIMITD SOURCE_DIR
"""
import os
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

import yaml

binary, root = sys.argv[1], sys.argv[2]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


help_text = subprocess.run([binary, "--help"], capture_output=True, text=True, check=True).stdout
flags = set(re.findall(r"--([a-z][a-z-]+)", help_text)) - {"help", "version"}
known_env = {"RATELIMITD_" + f.upper().replace("-", "_") for f in flags} | {
    "RATELIMITD_REDIS_URL", "RATELIMITD_HASH_SECRET", "RATELIMITD_ADMIN_TOKEN"}
version = re.search(r"project\(ratelimitd VERSION ([0-9.]+)", open(f"{root}/CMakeLists.txt").read()).group(1)
image_user = re.search(r"^USER (\d+):(\d+)", open(f"{root}/docker/Dockerfile").read(), re.M)


def check_config_text(text, where):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
    r = subprocess.run([binary, "--check-config", f.name], capture_output=True, text=True)
    os.unlink(f.name)
    check(r.returncode == 0, f"{where}: --check-config fails: {r.stderr.strip()}")


def served_status(config_text, paths):
    """Starts the binary with this config (embedded store) and GETs each path."""
    with tempfile.TemporaryDirectory() as d:
        cfg = f"{d}/config.yaml"
        open(cfg, "w").write(config_text)
        p = subprocess.Popen([binary, "--config", cfg, "--listen", "127.0.0.1:0", "--threads", "1"],
                             stderr=subprocess.PIPE, text=True)
        try:
            port = None
            for line in p.stderr:
                m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
                if m:
                    port = m.group(1)
                    break
            statuses = {}
            for path in paths:
                try:
                    statuses[path] = urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5).status
                except urllib.error.HTTPError as e:
                    statuses[path] = e.code
            return statuses
        finally:
            p.terminate()
            p.wait(timeout=10)


def port_of(container, ref):
    for p in container.get("ports", []):
        if ref in (p.get("name"), p.get("containerPort")):
            return p["containerPort"]
    return None


def probe_target(container, probe, where):
    """(path, port) a probe asks, from httpGet or an exec'd curl URL."""
    if "httpGet" in probe:
        port = port_of(container, probe["httpGet"]["port"])
        check(port is not None, f"{where}: probe port {probe['httpGet']['port']} is not a containerPort")
        return probe["httpGet"]["path"], port
    urls = [a for a in probe.get("exec", {}).get("command", []) if a.startswith("http://")]
    if not check(len(urls) == 1, f"{where}: probe neither httpGet nor curl of one URL"):
        return None, None
    m = re.match(r"http://127\.0\.0\.1:(\d+)(/.*)", urls[0])
    return (m.group(2), int(m.group(1))) if m else (None, None)


def listen_port(container, flag="--listen"):
    args = container.get("args", [])
    if flag in args:
        return int(args[args.index(flag) + 1].rsplit(":", 1)[1])
    return None


def check_ratelimitd(container, pod_spec, configmaps, volumes, where, readiness_path):
    check(container["image"] == f"ratelimitd:{version}", f"{where}: image {container['image']}, expected ratelimitd:{version}")
    args = container.get("args", [])
    for a in args:
        if a.startswith("--"):
            check(a[2:].split("=")[0] in flags, f"{where}: the binary has no flag {a}")
    for e in container.get("env", []):
        check(e["name"] in known_env, f"{where}: the binary reads no {e['name']}")
    port = listen_port(container)
    check(port is not None and port_of(container, port) == port, f"{where}: --listen port is not a containerPort")
    grpc_port = listen_port(container, "--grpc-listen")
    if grpc_port is not None:
        check(port_of(container, grpc_port) == grpc_port, f"{where}: --grpc-listen port is not a containerPort")
    sc = {**pod_spec.get("securityContext", {}), **container.get("securityContext", {})}
    check(sc.get("runAsNonRoot") is True, f"{where}: runAsNonRoot")
    check(image_user and sc.get("runAsUser") == int(image_user.group(1)), f"{where}: runAsUser is not the image's USER")
    check(sc.get("readOnlyRootFilesystem") is True, f"{where}: readOnlyRootFilesystem")
    check(sc.get("allowPrivilegeEscalation") is False, f"{where}: allowPrivilegeEscalation")
    check("ALL" in sc.get("capabilities", {}).get("drop", []), f"{where}: capabilities drop ALL")
    res = container.get("resources", {})
    for kind in ("requests", "limits"):
        check({"cpu", "memory"} <= set(res.get(kind, {})), f"{where}: resources.{kind} cpu and memory")
    # --config names a key of a mounted ConfigMap, and that config validates.
    config_path = args[args.index("--config") + 1] if "--config" in args else None
    config_text = None
    for m in container.get("volumeMounts", []):
        if config_path and os.path.dirname(config_path) == m["mountPath"]:
            cm_name = volumes.get(m["name"], {}).get("configMap", {}).get("name")
            data = configmaps.get(cm_name, {}).get("data", {})
            config_text = data.get(os.path.basename(config_path))
    if check(config_text is not None, f"{where}: --config {config_path} is not a key of a mounted ConfigMap"):
        check_config_text(config_text, where)
    probes = {k: container.get(k) for k in ("readinessProbe", "livenessProbe")}
    check(all(probes.values()), f"{where}: readiness and liveness probes")
    paths = []
    for kind, probe in probes.items():
        if probe:
            path, pport = probe_target(container, probe, f"{where} {kind}")
            check(pport == port, f"{where} {kind}: port {pport} is not the listen port {port}")
            paths.append(path)
    check(probes["readinessProbe"] and paths[0] == readiness_path, f"{where}: readiness should be {readiness_path}")
    if config_text and None not in paths:
        for path, status in served_status(config_text, paths).items():
            check(status == 200, f"{where}: the binary answers {path} with {status}, expected 200")
    return port, grpc_port, config_text


def service_ports_to(services, labels, container, container_port):
    """(Service, its port entry) of every Service port that reaches `container_port` of a pod with `labels`."""
    for svc in services:
        if svc["spec"]["selector"].items() <= labels.items():
            for sp in svc["spec"]["ports"]:
                if port_of(container, sp["targetPort"]) == container_port:
                    yield svc, sp


def check_grpc_service(services, labels, container, grpc_port, where):
    """The gRPC port is in a Service that tells meshes it is gRPC (HTTP/2)."""
    reached = list(service_ports_to(services, labels, container, grpc_port))
    check(reached, f"{where}: no Service port reaches --grpc-listen port {grpc_port}")
    for svc, sp in reached:
        check(sp.get("appProtocol") == "grpc" or sp.get("name", "").startswith("grpc"),
              f"{svc['_file']}: port {sp['port']} is gRPC but has no appProtocol: grpc")


def rate_limit_filters(bootstrap):
    """Every envoy.filters.http.ratelimit config in an Envoy bootstrap."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("name") == "envoy.filters.http.ratelimit":
                found.append(node.get("typed_config", {}))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(bootstrap)
    return found


def check_envoy(dep, container, configmaps, volumes, grpc_services, where):
    """Envoy's bootstrap (a mounted ConfigMap) sends ratelimitd's domains to its gRPC Service over HTTP/2."""
    args = container.get("args", [])
    path = args[args.index("-c") + 1] if "-c" in args else None
    text = None
    for m in container.get("volumeMounts", []):
        if path and os.path.dirname(path) == m["mountPath"]:
            cm = configmaps.get(volumes.get(m["name"], {}).get("configMap", {}).get("name"), {})
            text = cm.get("data", {}).get(os.path.basename(path))
    if not check(text is not None, f"{where}: -c {path} is not a key of a mounted ConfigMap"):
        return
    bootstrap = yaml.safe_load(text)
    filters = rate_limit_filters(bootstrap)
    check(filters, f"{where}: the bootstrap has no envoy.filters.http.ratelimit")
    clusters = {c["name"]: c for c in bootstrap.get("static_resources", {}).get("clusters", [])}
    for f in filters:
        check(f.get("domain") in grpc_services["domains"],
              f"{where}: domain {f.get('domain')!r} is in no ratelimitd config's domains: {sorted(grpc_services['domains'])}")
        name = f.get("rate_limit_service", {}).get("grpc_service", {}).get("envoy_grpc", {}).get("cluster_name")
        cluster = clusters.get(name)
        if not check(cluster is not None, f"{where}: rate limit cluster {name!r} is not defined"):
            continue
        options = str(cluster.get("typed_extension_protocol_options", {}))
        check("http2_protocol_options" in options, f"{where}: cluster {name} does not speak HTTP/2 (gRPC)")
        for ep in cluster["load_assignment"]["endpoints"][0]["lb_endpoints"]:
            sa = ep["endpoint"]["address"]["socket_address"]
            check((sa["address"].split(".")[0], sa["port_value"]) in grpc_services["ports"],
                  f"{where}: cluster {name} points at {sa['address']}:{sa['port_value']}, no Service's gRPC port of ratelimitd")


def check_directory(name, readiness_path):
    folder = f"{root}/deploy/kubernetes/{name}"
    docs = []
    for f in sorted(os.listdir(folder)):
        if f.endswith(".yaml"):
            with open(f"{folder}/{f}") as fh:
                for d in yaml.safe_load_all(fh):
                    if check(isinstance(d, dict) and {"apiVersion", "kind", "metadata"} <= set(d), f"{name}/{f}: a document without apiVersion/kind/metadata"):
                        d["_file"] = f"{name}/{f}"
                        docs.append(d)
    configmaps = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
    deployments = [d for d in docs if d["kind"] == "Deployment"]
    services = [d for d in docs if d["kind"] == "Service"]
    check(deployments and services, f"{name}: a Deployment and a Service")
    grpc_services = {"domains": set(), "ports": set()}
    envoys = []
    for dep in deployments:
        where = f"{dep['_file']} {dep['metadata']['name']}"
        pod = dep["spec"]["template"]
        labels = pod["metadata"]["labels"]
        check(dep["spec"]["selector"]["matchLabels"].items() <= labels.items(), f"{where}: selector does not match the pod")
        spec = pod["spec"]
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        for v in volumes.values():
            if "configMap" in v:
                check(v["configMap"]["name"] in configmaps, f"{where}: ConfigMap {v['configMap']['name']} is not in {name}/")
        containers = {c["name"]: c for c in spec["containers"]}
        for c in containers.values():
            for m in c.get("volumeMounts", []):
                check(m["name"] in volumes, f"{where}: {c['name']} mounts unknown volume {m['name']}")
        rl = [c for c in containers.values() if c["image"].startswith("ratelimitd:")]
        envoy = [c for c in containers.values() if c["image"].startswith("envoyproxy/envoy:")]
        if not rl and len(envoy) == 1:  # Envoy asking ratelimitd over gRPC: checked once all are read
            envoys.append((dep, envoy[0], volumes, where))
            continue
        if not check(len(rl) == 1, f"{where}: one ratelimitd container"):
            continue
        port, grpc_port, config_text = check_ratelimitd(rl[0], spec, configmaps, volumes, f"{where} ratelimitd",
                                                        readiness_path)
        if grpc_port is not None:
            check_grpc_service(services, labels, rl[0], grpc_port, where)
            for svc, sp in service_ports_to(services, labels, rl[0], grpc_port):
                grpc_services["ports"].add((svc["metadata"]["name"], sp["port"]))
            for d in (yaml.safe_load(config_text or "") or {}).get("domains", []):
                grpc_services["domains"].add(d.get("domain"))
        for svc in services:
            if svc["spec"]["selector"].items() <= labels.items():
                for sp in svc["spec"]["ports"]:
                    check(any(port_of(c, sp["targetPort"]) for c in containers.values()),
                          f"{svc['_file']}: targetPort {sp['targetPort']} is no containerPort of {where}")
        if "nginx" in containers:  # the sidecar's front door: the tested nginx file, verbatim
            nginx = containers["nginx"]
            env = {e["name"]: e.get("value") for e in nginx.get("env", [])}
            check(env.get("RATELIMITD_ADDR") == f"127.0.0.1:{port}", f"{where}: nginx does not call ratelimitd on localhost:{port}")
            upstream = int(env.get("UPSTREAM_ADDR", ":0").rsplit(":", 1)[1])
            check(any(port_of(c, upstream) for c in containers.values()), f"{where}: UPSTREAM_ADDR is no container's port")
            check(port_of(nginx, int(env.get("LISTEN", 0))) is not None, f"{where}: nginx LISTEN is not its containerPort")
            templates = configmaps.get("web-nginx", {}).get("data", {})
            check(templates.get("default.conf.template") == open(f"{root}/config/nginx/ratelimitd.conf").read(),
                  f"{where}: web-nginx is not config/nginx/ratelimitd.conf verbatim")
            # Prometheus reaches ratelimitd's /metrics through nginx, on the annotated port.
            metrics_conf = templates.get("metrics.conf.template")
            check(metrics_conf == open(f"{root}/config/nginx/metrics.conf").read(),
                  f"{where}: web-nginx metrics.conf.template is not config/nginx/metrics.conf verbatim")
            annotations = pod["metadata"].get("annotations", {})
            scrape_port = int(annotations.get("prometheus.io/port", 0))
            check(annotations.get("prometheus.io/scrape") == "true" and annotations.get("prometheus.io/path") == "/metrics",
                  f"{where}: no prometheus.io scrape annotations for /metrics")
            check(port_of(nginx, scrape_port) is not None, f"{where}: prometheus.io/port {scrape_port} is not nginx's containerPort")
            check(metrics_conf is not None and re.search(rf"^\s*listen {scrape_port};", metrics_conf, re.M),
                  f"{where}: metrics.conf does not listen on prometheus.io/port {scrape_port}")
    for dep, container, volumes, where in envoys:
        check_envoy(dep, container, configmaps, volumes, grpc_services, where)
    for svc in services:
        check(any(svc["spec"]["selector"].items() <= d["spec"]["template"]["metadata"]["labels"].items() for d in deployments),
              f"{svc['_file']}: selector matches no Deployment")


def check_compose():
    compose = yaml.safe_load(open(f"{root}/docker/docker-compose.yml"))
    rl = compose["services"]["ratelimitd"]
    check(os.path.exists(f"{root}/{rl['build']['dockerfile']}"), "compose: dockerfile missing")
    env = rl.get("environment", {})
    for k in env:
        check(k in known_env, f"compose: the binary reads no {k}")
    check(rl.get("read_only") is True, "compose: ratelimitd read_only")
    port = env.get("RATELIMITD_LISTEN", "").rsplit(":", 1)[-1]
    test = " ".join(rl.get("healthcheck", {}).get("test", []))
    check(f"127.0.0.1:{port}/healthz" in test, "compose: healthcheck does not ask /healthz on the listen port")
    check(compose["services"]["nginx"]["environment"]["RATELIMITD_ADDR"] == f"ratelimitd:{port}", "compose: nginx does not call ratelimitd's port")
    for v in rl.get("volumes", []):
        host, target = v.split(":")[:2]
        check(os.path.exists(f"{root}/docker/{host}"), f"compose: {host} missing")
        if target == env.get("RATELIMITD_CONFIG"):
            check_config_text(open(f"{root}/docker/{host}").read(), "compose config")


def served_erl(env, config_files, probe_paths):
    """Starts the binary as `ratelimit` with only `env` (ports moved to free ones, RUNTIME_ROOT to a
    scratch copy of the mounted files), and GETs each probe path on PORT."""
    import shutil
    import socket
    with tempfile.TemporaryDirectory() as d:
        os.symlink(os.path.abspath(binary), f"{d}/ratelimit")
        root_dir = f"{d}/runtime"
        config_dir = f"{root_dir}/{env.get('RUNTIME_SUBDIRECTORY', '')}/{env.get('RUNTIME_APPDIRECTORY', 'config')}"
        os.makedirs(config_dir)
        for name, text in config_files.items():
            open(f"{config_dir}/{name}", "w").write(text)
        ports = []
        for _ in range(3):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            ports.append(sock.getsockname()[1])
            sock.close()
        run_env = {**env, "RUNTIME_ROOT": root_dir, "HOST": "127.0.0.1", "PORT": str(ports[0]),
                   "GRPC_HOST": "127.0.0.1", "GRPC_PORT": str(ports[1]), "DEBUG_HOST": "127.0.0.1",
                   "DEBUG_PORT": str(ports[2])}
        p = subprocess.Popen([f"{d}/ratelimit"], env=run_env, stderr=subprocess.PIPE, text=True)
        try:
            for line in p.stderr:
                if f"listening on 127.0.0.1:{ports[0]}" in line:
                    break
            statuses = {}
            for path in probe_paths:
                try:
                    statuses[path] = urllib.request.urlopen(f"http://127.0.0.1:{ports[0]}{path}", timeout=5).status
                except (urllib.error.HTTPError, urllib.error.URLError) as e:
                    statuses[path] = getattr(e, "code", str(e))
            return statuses, p
        finally:
            p.terminate()
            p.wait(timeout=10)
            shutil.rmtree(root_dir, ignore_errors=True)


def check_erl_directory(name):
    """envoyproxy/ratelimit's Deployment with only the image changed: started as /bin/ratelimit with
    envoyproxy/ratelimit's variables only, its YAML in the runtime directory, probes served."""
    folder = f"{root}/deploy/kubernetes/{name}"
    docs = [d for f in sorted(os.listdir(folder)) if f.endswith(".yaml")
            for d in yaml.safe_load_all(open(f"{folder}/{f}"))]
    configmaps = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
    erl_variables = {line.strip() for line in open(f"{root}/tests/data/erl_settings.txt")
                     if line.strip() and not line.startswith("#")}
    deployments = [d for d in docs if d["kind"] == "Deployment"]
    check(deployments, f"{name}: a Deployment")
    for dep in deployments:
        where = f"{name} {dep['metadata']['name']}"
        spec = dep["spec"]["template"]["spec"]
        (c,) = spec["containers"]
        check(c["image"] == f"ratelimitd:{version}", f"{where}: image {c['image']}, expected ratelimitd:{version}")
        check(c.get("command") == ["/bin/ratelimit"], f"{where}: command is not /bin/ratelimit")
        check("args" not in c, f"{where}: ERL mode takes no arguments")
        env = {e["name"]: e["value"] for e in c.get("env", [])}
        for k in env:
            check(k in erl_variables, f"{where}: {k} is none of envoyproxy/ratelimit's variables")
        mount = f"{env.get('RUNTIME_ROOT')}/{env.get('RUNTIME_SUBDIRECTORY')}/{env.get('RUNTIME_APPDIRECTORY', 'config')}"
        volumes = {v["name"]: v for v in spec.get("volumes", [])}
        files = None
        for m in c.get("volumeMounts", []):
            if m["mountPath"] == mount:
                files = configmaps.get(volumes[m["name"]]["configMap"]["name"], {}).get("data")
        if not check(files, f"{where}: no ConfigMap mounted at the runtime directory {mount}"):
            continue
        paths = []
        for kind in ("readinessProbe", "livenessProbe"):
            probe = c.get(kind, {}).get("httpGet")
            if check(probe, f"{where}: {kind} is no httpGet"):
                check(probe["port"] == int(env.get("PORT", 8080)), f"{where}: {kind} is not on PORT")
                paths.append(probe["path"])
        statuses, _ = served_erl(env, files, paths)
        for path, status in statuses.items():
            check(status == 200, f"{where}: /bin/ratelimit answers {path} with {status}, expected 200")


check_directory("sidecar", "/readyz?mode=sidecar")
check_erl_directory("erl")
check_directory("shared", "/readyz")
check_directory("envoy", "/readyz")
check_compose()
for f in failures:
    print("FAIL:", f)
print(f"manifests: {len(failures)} problems")
sys.exit(1 if failures else 0)
