"""The soak (`make soak`, issue 55): a mixed load through the public API on the scaled-out local stack while
processes are killed and paused, PostgreSQL and NATS restarted and the providers fail for a while, then a ledger
that proves nothing was lost or doubled.

- `history`: what the load sent and saw and which faults ran when (the ledger's input beside the stores);
- `client`: the load's HTTP client: a ready gateway for each request, each attempt recorded, transient answers
  tried again with the same Idempotency-Key;
- `load`: the actors (signups, agents and numbers, calls, texts, runs, the pipeline, webhooks, evals, pauses and
  a teardown), at rates from `SoakProfile`;
- `partner`: the webhook receiver, deduplicating on event_id, sometimes failing or slow, down for a while;
- `faults`: the fault schedule drawn from a seed, and its executor;
- `ledger`: the checks at the end, each an exact count;
- `run`: one soak on a started stack (`soaked`: the history and the ledger; `soak`: them printed and written);
- `__main__`: `python -m bench.soak` (`make soak`).
"""
