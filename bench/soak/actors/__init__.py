"""The soak load's actors, one flow each (bench.soak.load). Importing this package lists them in load.ACTORS, each
guarded (an exception stops that actor with a note, not the load); `tenants.setup` is the setup run_load takes."""
from bench.soak.actors import calls, communication_run, evals, pipeline, reads, tenants, texts, webhooks, workspaces
from bench.soak.actors.answers import guarded
from bench.soak.load import ACTORS

ACTORS.extend(guarded(actor) for actor in (
    tenants.signups, calls.outbound_calls, calls.inbound_calls, texts.texting, communication_run.communication_run,
    pipeline.sales_pipeline, webhooks.subscriptions, evals.eval_runs, workspaces.workspaces, reads.reads))
