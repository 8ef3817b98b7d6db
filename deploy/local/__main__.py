"""`make run`: start the whole embedded stack and print where it is. Ctrl-C stops it cleanly."""
from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from deploy.local.stack import (
    MAIL_CATCHALL,
    PAYMENTS_SIMULATOR,
    SMS_SIMULATOR,
    VOICE_SIMULATOR,
    X402_FACILITATOR,
    Stack,
)


def main() -> int:
    home = Path(os.environ.get("SWITCHBOARD_HOME", ".switchboard")).resolve()
    # REPLICAS=2: two of every service, worker and the gateway (README, Scaled out)
    stack = Stack(home=home, http_port=int(os.environ.get("PORT", "8080")),
                  replicas=int(os.environ.get("REPLICAS", "1")),
                  metrics=os.environ.get("STACK_METRICS", "") not in ("", "0"),
                  # as Kubernetes would, a process that exits is started again (README, Scaled out); 0: the launcher
                  # stops instead
                  restart_exited=os.environ.get("RESTART_EXITED", "1") != "0")
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        if not stopping:
            stopping = True
            raise KeyboardInterrupt

    # Installed explicitly: a launcher started in the background inherits SIGINT ignored.
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    print(f"Starting Switchboard (data in {home}) ...", flush=True)
    try:
        stack.start()
        print(f"\nSwitchboard is running at {stack.base_url}", flush=True)
        print(f"  API:      {stack.base_url}/api/v1  (OpenAPI: {stack.base_url}/api/v1/openapi.json)")
        if stack.replicas > 1:
            print(f"  Replicas: {stack.replicas} of every service, worker and the gateway; the ingress at "
                  f"{stack.base_url} sends each request to a ready gateway ({', '.join(stack.gateway_urls)})")
        print(f"  Database: {'embedded PostgreSQL' if stack.postgres else 'DATABASE_URL'}; "
              f"events: {'embedded NATS JetStream' if stack.nats else 'NATS_URL'}")
        for label, variable, simulator, what, verb in (
                ("Voice", "VOICE_API_URL", VOICE_SIMULATOR, "voice-provider", "ring"),
                ("SMS", "SMS_API_URL", SMS_SIMULATOR, "messaging-provider", "text")):
            if os.environ.get(variable):
                print(f"  {label + ':':<9} {variable}")
            else:
                sim = stack.process(simulator).port
                print(f"  {label + ':':<9} local {what} simulator at http://127.0.0.1:{sim} ({verb} a number: POST "
                      f"http://127.0.0.1:{sim}/_simulator/inbound, see the README)")
        if os.environ.get("SMTP_HOST"):
            print("  Email:    SMTP_HOST")
        else:
            print(f"  Email:    local catch-all SMTP server: every email lands in {stack.home / 'mail'} (list them: "
                  f"http://127.0.0.1:{stack.process(MAIL_CATCHALL).port}/messages)")
        if os.environ.get("PAYMENTS_API_URL"):
            print("  Payments: PAYMENTS_API_URL")
        else:
            print(f"  Payments: local card-checkout simulator at http://127.0.0.1:{stack.process(PAYMENTS_SIMULATOR).port}"
                  " (a signup's checkout_url opens its checkout page; the test card is prefilled)")
        if os.environ.get("X402_FACILITATOR_URL"):
            print("  x402:     X402_FACILITATOR_URL")
        else:
            print(f"  x402:     local facilitator at http://127.0.0.1:{stack.process(X402_FACILITATOR).port} "
                  "(verifies payment signatures; settles on a local ledger)")
        print("  Webhooks: receivers on this machine (loopback URLs) are allowed in this local stack only; private "
              "and metadata addresses are always refused")
        print(f"  Logs:     {stack.logs} (JSON lines; LOG_FORMAT=text for plain ones)")
        if stack.metrics:
            print("  Metrics:  " + ", ".join(f"{p.name} http://127.0.0.1:{p.metrics_port}/metrics"
                                             for p in stack.processes if p.metrics_port))
        if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
            print(f"  Traces:   every process exports OTLP over HTTP to {os.environ['OTEL_EXPORTER_OTLP_ENDPOINT']}")
        if stack.restart_exited:
            print("  Restarts: a process that exits is started again after a backoff (RESTART_EXITED=0: stop instead)")
        print("Press Ctrl-C to stop.", flush=True)
        while True:
            for p in [] if stack.restart_exited else stack.processes:
                assert p.proc is not None  # the stack started them all
                if p.proc.poll() is not None:
                    print(f"{p.name} exited with {p.proc.returncode}; see {p.log}", file=sys.stderr)
                    return 1
            time.sleep(1.0)
    except KeyboardInterrupt:
        print("\nStopping ...", flush=True)
        return 0
    except Exception as exc:  # noqa: BLE001 - print a clear reason, not a traceback
        print(f"Switchboard failed to start: {exc}", file=sys.stderr)
        return 1
    finally:
        stack.stop()
        print("Stopped.", flush=True)


if __name__ == "__main__":
    sys.exit(main())
