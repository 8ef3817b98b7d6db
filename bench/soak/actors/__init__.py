"""The soak load's actors, one flow each (bench.soak.load). Importing this package lists them in load.ACTORS;
`tenants.setup` is the setup run_load takes."""
from bench.soak.actors import calls, tenants, texts
from bench.soak.load import ACTORS

ACTORS.extend([tenants.signups, calls.outbound_calls, calls.inbound_calls, texts.texting])
