#!/usr/bin/env python3
"""A stand-in for the Ray dashboard's job API, for the local cluster's KubeRay operator.

kwok's pods never run, so no Ray head serves the dashboard that the KubeRay operator asks
whether a RayJob's Ray job finished (ray-operator controllers/ray/rayjob_controller.go: a RayJob
is Complete only once GetJobInfo reports a terminal status). deploy/local/up.sh starts the
operator with HTTP_PROXY pointing here: its dashboard client is a plain net/http client, so every
http:// request it makes (GET http://<head-svc>.<ns>.svc.cluster.local:8265/api/jobs/<id>) comes
to this proxy port, and this process answers it as the dashboard would. HTTPS (the apiserver)
is not proxied.

What a Ray job does is set by annotations on its RayJob, as kwok's pod-complete stage is set by
a pod annotation:
  fake-ray-dashboard.muster.e2e/duration: "20s"      RUNNING for that long (s, m, ms or h), then
  fake-ray-dashboard.muster.e2e/result: SUCCEEDED    ... this status (SUCCEEDED, the default, or
                                                     FAILED). Without a duration it runs until
                                                     stopped or its cluster goes.
The clock starts when the job is submitted: the operator's POST in HTTPMode; in K8sJobMode and
SidecarMode, where the submitter pod that would submit it never runs, the first status query.
State is kept per head service and job id, so a RayCluster created anew (after a suspension)
has a fresh dashboard, as a real one would.

Standard library only. Python is used for this test fixture alone; muster itself is C.
"""
import argparse
import json
import re
import ssl
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ANNOTATION = "fake-ray-dashboard.muster.e2e/"
TERMINAL = ("SUCCEEDED", "FAILED", "STOPPED")

args = None
ssl_ctx = None
jobs = {}  # (head host, job id) -> {"start": s, "end": s|None, "status": str, ...}
lock = threading.Lock()


def log(msg):
    print(time.strftime("%Y-%m-%dT%H:%M:%S ") + msg, file=sys.stderr, flush=True)


def parse_duration(s):
    """Seconds in a Go-style duration ("1m30s", "500ms", "20s") or a bare number of seconds."""
    s = s.strip()
    if re.fullmatch(r"\d+(\.\d+)?", s):
        return float(s)
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", s)
    if not parts or "".join(n + u for n, u in parts) != s:
        raise ValueError(s)
    unit = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    return sum(float(n) * unit[u] for n, u in parts)


def rayjob_of(namespace, job_id):
    """The RayJob in NAMESPACE whose status.jobId is JOB_ID, or None."""
    url = "%s/apis/ray.io/v1/namespaces/%s/rayjobs" % (args.server, urllib.parse.quote(namespace))
    with urllib.request.urlopen(url, context=ssl_ctx, timeout=5) as r:
        items = json.load(r).get("items", [])
    for rj in items:
        if (rj.get("status") or {}).get("jobId") == job_id:
            return rj
    return None


def new_job(job_id, rayjob, entrypoint="", metadata=None):
    ann = (rayjob["metadata"].get("annotations") or {}) if rayjob else {}
    job = {"start": time.time(), "end": None, "status": "RUNNING", "entrypoint": entrypoint,
           "metadata": metadata or {}, "duration": None, "result": "SUCCEEDED", "message": ""}
    if ANNOTATION + "duration" in ann:
        try:
            job["duration"] = parse_duration(ann[ANNOTATION + "duration"])
        except ValueError:
            job["message"] = "fake dashboard: cannot parse %sduration" % ANNOTATION
    result = ann.get(ANNOTATION + "result", "SUCCEEDED").upper()
    job["result"] = result if result in ("SUCCEEDED", "FAILED") else "SUCCEEDED"
    return job


def advance(job):
    if job["status"] == "RUNNING" and job["duration"] is not None and \
            time.time() >= job["start"] + job["duration"]:
        job["status"] = job["result"]
        job["end"] = job["start"] + job["duration"]
        job["message"] = "Job finished successfully." if job["result"] == "SUCCEEDED" \
            else "Job failed (fake dashboard: %sresult)." % ANNOTATION


def info(job_id, job):
    out = {"job_id": job_id, "submission_id": job_id, "status": job["status"],
           "entrypoint": job["entrypoint"], "message": job["message"], "metadata": job["metadata"],
           "start_time": int(job["start"] * 1000)}
    if job["end"] is not None:
        out["end_time"] = int(job["end"] * 1000)
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):  # one line per request is too much; state changes are logged
        pass

    def reply(self, code, body):
        data = json.dumps(body).encode() if not isinstance(body, bytes) else body
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def target(self):
        """(host, namespace, path) of a proxied request; host is the head service's name:port."""
        u = urllib.parse.urlsplit(self.path)
        host = u.netloc or self.headers.get("Host", "")
        # <head-svc>.<namespace>.svc.<cluster domain>:<port>
        labels = host.split(":")[0].split(".")
        ns = labels[1] if len(labels) > 2 and labels[2] == "svc" else None
        return host, ns, u.path

    def handle_one(self, method):
        host, ns, path = self.target()
        if path == "/healthz" and method == "GET":
            return self.reply(200, b"ok")
        m = re.fullmatch(r"/api/jobs/?([^/]*)(/stop|/logs)?/?", path)
        if not m or ns is None:
            return self.reply(404, {"error": "fake dashboard: no route for %s %s" % (method, self.path)})
        job_id, sub = m.group(1), m.group(2)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}") if length else {}
        try:
            self.route(method, host, ns, job_id, sub, body)
        except urllib.error.URLError as e:
            log("apiserver: %s" % e)
            self.reply(503, {"error": "fake dashboard: apiserver: %s" % e})

    def route(self, method, host, ns, job_id, sub, body):
        with lock:
            if method == "POST" and not job_id:  # submit (HTTPMode)
                job_id = body.get("submission_id") or "raysubmit_fake%d" % int(time.time() * 1000)
                if (host, job_id) in jobs:
                    return self.reply(500, {"error": "Job with submission_id %s already exists. "
                                            "Please use a different submission_id." % job_id})
                jobs[(host, job_id)] = new_job(job_id, rayjob_of(ns, job_id),
                                               body.get("entrypoint", ""), body.get("metadata"))
                log("%s %s: submitted" % (host, job_id))
                return self.reply(200, {"job_id": job_id, "submission_id": job_id})
            if method == "GET" and not job_id:
                for j in jobs.values():
                    advance(j)
                return self.reply(200, [info(i, j) for (h, i), j in jobs.items() if h == host])
            job = jobs.get((host, job_id))
            if job is None and method == "GET" and not sub:
                rayjob = rayjob_of(ns, job_id)
                # HTTPMode: the operator submits when the job is not found. Elsewhere the submitter
                # pod would have submitted it (it never runs under kwok): take the query as that.
                if rayjob is None or rayjob["spec"].get("submissionMode") == "HTTPMode":
                    return self.reply(404, {"error": "Job %s does not exist" % job_id})
                job = jobs[(host, job_id)] = new_job(job_id, rayjob, rayjob["spec"].get("entrypoint", ""),
                                                     rayjob["spec"].get("metadata"))
                log("%s %s: submitted (%s; first query)" % (
                    host, job_id, rayjob["spec"].get("submissionMode", "K8sJobMode")))
            if job is None:
                return self.reply(404, {"error": "Job %s does not exist" % job_id})
            before = job["status"]
            advance(job)
            if method == "GET" and sub == "/logs":
                return self.reply(200, {"logs": ""})
            if method == "GET":
                if job["status"] != before:
                    log("%s %s: %s" % (host, job_id, job["status"]))
                return self.reply(200, info(job_id, job))
            if method == "POST" and sub == "/stop":
                stopped = job["status"] not in TERMINAL
                if stopped:
                    job["status"], job["end"], job["message"] = "STOPPED", time.time(), "Job was stopped."
                    log("%s %s: STOPPED" % (host, job_id))
                return self.reply(200, {"stopped": stopped})
            if method == "DELETE" and not sub:
                del jobs[(host, job_id)]
                log("%s %s: deleted" % (host, job_id))
                return self.reply(200, {"deleted": True})
            return self.reply(405, {"error": "fake dashboard: %s not allowed here" % method})

    def do_GET(self):
        self.handle_one("GET")

    def do_POST(self):
        self.handle_one("POST")

    def do_DELETE(self):
        self.handle_one("DELETE")


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # The operator's client drops idle keep-alive connections: not worth a traceback.
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def main():
    global args, ssl_ctx
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--port", type=int, required=True, help="listen on 127.0.0.1:PORT")
    p.add_argument("--server", required=True, help="the apiserver's URL (https://127.0.0.1:PORT)")
    p.add_argument("--ca", required=True, help="CA of the apiserver's serving certificate")
    p.add_argument("--cert", required=True, help="client certificate that may read rayjobs")
    p.add_argument("--key", required=True, help="its key")
    args = p.parse_args()
    ssl_ctx = ssl.create_default_context(cafile=args.ca)
    ssl_ctx.load_cert_chain(args.cert, args.key)
    srv = Server(("127.0.0.1", args.port), Handler)
    log("fake Ray dashboard on 127.0.0.1:%d (HTTP proxy for the KubeRay operator)" % args.port)
    srv.serve_forever()


if __name__ == "__main__":
    main()
