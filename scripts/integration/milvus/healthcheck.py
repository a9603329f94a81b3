"""Waits until a Milvus server answers list_collections.

Usage: healthcheck.py ADDRESS TIMEOUT_SECONDS PID
Exits 0 when the server answers, 1 on timeout or when process PID exits.
"""

import os
import sys
import time


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main() -> int:
    addr, timeout, pid = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    from pymilvus import MilvusClient  # imported late: it is slow to import

    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if not alive(pid):
            print(f"healthcheck: server process {pid} exited", file=sys.stderr)
            return 1
        try:
            client = MilvusClient(uri=f"http://{addr}", timeout=2)
            client.list_collections()
            client.close()
            return 0
        except Exception as e:  # the server is still starting
            last = e
            time.sleep(0.2)
    print(f"healthcheck: no answer from {addr} within {timeout:.0f} s: {last}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
