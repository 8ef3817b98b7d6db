"""The soak load's actors, one flow each (bench.soak.load). Importing this package lists them in load.ACTORS."""
from bench.soak import load
from bench.soak.actors import communication_run, evals, pipeline, reads, webhooks, workspaces
from bench.soak.actors.answers import guarded

# The run, the pipeline, webhook subscriptions, evals, workspace pauses and teardowns, reads.
load.ACTORS += [guarded(actor) for actor in (
    communication_run.communication_run, pipeline.sales_pipeline, webhooks.subscriptions, evals.eval_runs,
    workspaces.workspaces, reads.reads)]
