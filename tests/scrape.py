"""A process's metrics as Prometheus scrapes them (core.metrics: METRICS_PORT, on loopback on the local stack)."""
import re

import aiohttp


async def scrape(port: int) -> str:
    async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}/metrics") as r:
        assert r.status == 200
        return await r.text()


def value(text: str, metric: str, **labels: str) -> float:
    """The sample of `metric` whose labels include `labels` (0 when there is none)."""
    found = 0.0
    for line in text.splitlines():
        name, _, rest = line.partition("{")
        if name != metric:
            continue
        sample_labels = dict(re.findall(r'(\w+)="([^"]*)"', rest.rpartition("}")[0]))
        if labels.items() <= sample_labels.items():
            found += float(rest.rpartition("} ")[2])
    return found
