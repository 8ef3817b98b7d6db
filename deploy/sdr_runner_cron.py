"""`python -m deploy.sdr_runner_cron`: the Kubernetes CronJob `sdr-runner-cron` (deploy/k8s/base/sdr-runner-cronjob.yaml).

It calls `POST /api/sdr/runner` on the gateway (GATEWAY_URL, default http://gateway:8080) with the server secret
(SDR_RUNNER_SECRET), once, and exits 0 when the gateway answered 200. SDR_RUNNER_BUSINESS_ID, when set, limits it
to that business (an operator's one-off Job: `kubectl create job --from=cronjob/sdr-runner-cron`, then its env). The sdr-runner worker already runs each
two-hour window; this is the schedule's backstop (a window runs once per business however many runners ask, so
the two never do the work twice), and the way to run the pipeline on a schedule with the worker scaled to 0.

Standard library only: it starts in a fraction of a second and reads no other setting or secret. What it prints
is the window and each business's status, never the secret.
"""
from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any

PATH = "/api/sdr/runner"
TIMEOUT_SECONDS = 90.0  # the RunScheduled deadline (60 s) and the gateway's own work


def trigger(gateway_url: str, secret: str, business_id: str = "") -> dict[str, Any]:
    """POST the runner once; the gateway's reply, or urllib.error.HTTPError for any status but 200."""
    body = json.dumps({"businessId": business_id} if business_id else {}).encode()
    request = urllib.request.Request(gateway_url.rstrip("/") + PATH, data=body, method="POST", headers={
        "Authorization": f"Bearer {secret}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
        reply: dict[str, Any] = json.load(response)
    return reply


def main() -> int:
    secret = os.environ.get("SDR_RUNNER_SECRET", "")
    if not secret:
        print("SDR_RUNNER_SECRET: must be set", file=sys.stderr)
        return 1
    try:
        reply = trigger(os.environ.get("GATEWAY_URL", "http://gateway:8080"), secret,
                        os.environ.get("SDR_RUNNER_BUSINESS_ID", ""))
    except (urllib.error.URLError, TimeoutError) as exc:  # HTTPError is a URLError: the status and reason
        print(f"POST {PATH} failed: {exc}", file=sys.stderr)
        return 1
    statuses = [run["status"] for run in reply["runs"]]
    print(f"window {reply['window_start']}: {len(statuses)} run(s) "
          + ", ".join(f"{status} {statuses.count(status)}" for status in sorted(set(statuses))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
