"""A process that signs in to NATS (core.nats_auth) does not use a server that lets anyone in: there its
permissions would mean nothing, and anyone could publish what the services apply."""
import signal
import subprocess

from core.bus import EventBus
from core.nats_auth import Login, new_seed
from deploy.local.servers import free_port, nats_binary, stop_process, wait_for_port


async def test_a_nats_without_authentication_is_not_used(tmp_path, caplog):
    port, log = free_port(), tmp_path / "nats.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen([str(nats_binary()), "-a", "127.0.0.1", "-p", str(port)], stdout=out, stderr=out,
                                start_new_session=True)
    bus = EventBus(f"nats://127.0.0.1:{port}", "calls", login=Login.of("calls", new_seed()))
    try:
        wait_for_port(port, 30, proc, "NATS", log)
        with caplog.at_level("ERROR", logger="core.bus"):
            assert not await bus.wait_connected(2)
        assert "lets anyone connect without signing in" in caplog.text
        assert not bus.is_connected
    finally:
        await bus.close()
        stop_process(proc, signal.SIGTERM, 10)
