"""Helpers for start.sh: pick free loopback ports, and wait until the chat and
embeddings servers answer real requests.

Standard library only, so it runs in the install venv without extra packages.

    probe.py ports N
        prints N free TCP ports on 127.0.0.1, one per line
    probe.py wait --chat URL --chat-model M --embed URL --embed-model M \
                  --pid PID [--pid PID ...] --timeout SECONDS
        polls both servers until each answers a real request; prints the
        embedding dimension on stdout; exits 1 on timeout or when one of the
        PIDs has exited (the server crashed), with the reason on stderr.
"""
import argparse
import json
import os
import socket
import sys
import time
import urllib.error
import urllib.request


def free_ports(n):
    socks = []
    try:
        # Hold all sockets open until every port is chosen, so the N ports
        # differ; the kernel does not hand out a bound port twice.
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def post(url, body, timeout):
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode("utf-8"),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read().decode("utf-8"))


def chat_ready(base, model, timeout):
    out = post(
        base + "/chat/completions",
        {
            "model": model,
            "messages": [{"role": "user", "content": "Say hello."}],
            "max_tokens": 4,
            "temperature": 0,
        },
        timeout,
    )
    choices = out.get("choices") or []
    if not choices or "message" not in choices[0]:
        raise ValueError("chat answer has no choices: %r" % out)


def embed_dim(base, model, timeout):
    out = post(base + "/embeddings", {"model": model, "input": ["ping"]}, timeout)
    data = out.get("data") or []
    if len(data) != 1 or not data[0].get("embedding"):
        raise ValueError("embeddings answer has no vector: %r" % out)
    return len(data[0]["embedding"])


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is dead for our purpose: the server has exited.
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def wait(a):
    deadline = time.monotonic() + a.timeout
    chat_ok, dim, last = False, None, {}
    while True:
        for pid in a.pid:
            if not alive(pid):
                print("probe: server process %d exited while starting" % pid, file=sys.stderr)
                return 1
        if not chat_ok:
            try:
                chat_ready(a.chat, a.chat_model, a.request_timeout)
                chat_ok = True
            except (OSError, ValueError, urllib.error.URLError) as e:
                last["chat"] = e
        if dim is None:
            try:
                dim = embed_dim(a.embed, a.embed_model, a.request_timeout)
            except (OSError, ValueError, urllib.error.URLError) as e:
                last["embed"] = e
        if chat_ok and dim is not None:
            print(dim)
            return 0
        if time.monotonic() >= deadline:
            for k, e in last.items():
                if (k == "chat" and not chat_ok) or (k == "embed" and dim is None):
                    print("probe: %s server not ready: %s" % (k, e), file=sys.stderr)
            print("probe: gave up after %ds" % a.timeout, file=sys.stderr)
            return 1
        time.sleep(0.5)


def main(argv):
    ap = argparse.ArgumentParser(prog="probe.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("ports")
    p.add_argument("n", type=int)
    w = sub.add_parser("wait")
    w.add_argument("--chat", required=True)
    w.add_argument("--chat-model", required=True)
    w.add_argument("--embed", required=True)
    w.add_argument("--embed-model", required=True)
    w.add_argument("--pid", type=int, action="append", default=[])
    w.add_argument("--timeout", type=int, default=120)
    w.add_argument("--request-timeout", type=float, default=30)
    a = ap.parse_args(argv)
    if a.cmd == "ports":
        for port in free_ports(a.n):
            print(port)
        return 0
    return wait(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
