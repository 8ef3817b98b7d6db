"""The soak load's actors, one flow each (bench.soak.load). Importing this package lists them in load.ACTORS;
`tenants.setup` is the setup run_load takes."""
from bench.soak.actors import calls, communication_run, evals, pipeline, reads, tenants, texts, webhooks, workspaces
from bench.soak.actors.answers import guarded
from bench.soak.load import ACTORS

ACTORS.extend([tenants.signups, calls.outbound_calls, calls.inbound_calls, texts.texting])
# The run, the pipeline, webhook subscriptions, evals, workspace pauses and teardowns, reads.
ACTORS.extend(guarded(actor) for actor in (
    communication_run.communication_run, pipeline.sales_pipeline, webhooks.subscriptions, evals.eval_runs,
    workspaces.workspaces, reads.reads))
