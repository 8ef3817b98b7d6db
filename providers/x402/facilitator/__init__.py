"""A local x402 facilitator: a real HTTP server speaking the facilitator API of the x402 v2 specification as the
`x402` package's `HTTPFacilitatorClient` calls it, so the real `X402Gate` (and any x402 resource server) runs
against it in every test and in `make run`. It checks payments for real, with the package's own `exact` EVM
facilitator scheme (EIP-712 signature recovery of the EIP-3009 `transferWithAuthorization`, recipient, exact
amount, validity window, network, asset), and settles them on an in-memory ledger instead of a chain.

`python -m providers.x402.facilitator [--port N] [--network eip155:84532] [--asset 0x...] [--asset-name USDC]
[--asset-version 2] [--start-balance 1000000000]`, each falling back to an environment variable
(X402_FACILITATOR_PORT, default 8795; X402_FACILITATOR_NETWORK, default `eip155:84532`, Base Sepolia;
X402_FACILITATOR_ASSET, default Base Sepolia's USDC `0x036CbD53842c5426634e7929541eC2318f3dCF7e`;
X402_FACILITATOR_ASSET_NAME and X402_FACILITATOR_ASSET_VERSION, the token's EIP-712 domain, default `USDC` and
`2`; X402_FACILITATOR_START_BALANCE, default 1000000000 atomic units = 1000 USDC). Serves on 127.0.0.1 until
SIGTERM or SIGINT; state is in memory, a restart starts empty. Modules: `app` (`build_app(...)`, routes,
the control plane, whose faults are the simulators' shared `providers.simulator_control`), `ledger` (the token,
behind the package's `FacilitatorEvmSigner` protocol).

The API (JSON, camelCase, the package's models):

- `GET /supported` → `{"kinds": [{"x402Version": 2, "scheme": "exact", "network": "eip155:84532"}],
  "extensions": [], "signers": {"eip155:*": ["0x<the facilitator's address>"]}}`.
- `POST /verify` `{"x402Version": 2, "paymentPayload": {...}, "paymentRequirements": {...}}` → 200
  `{"isValid": true, "payer": "0x..."}` or `{"isValid": false, "invalidReason": ..., "payer": ...}` with the
  package's reasons: `invalid_exact_evm_payload_signature` (the signature does not recover to
  `authorization.from`), `invalid_exact_evm_payload_recipient_mismatch` (`to` is not `payTo`),
  `invalid_exact_evm_payload_authorization_value_mismatch` (`value` is not exactly `amount`),
  `invalid_exact_evm_payload_authorization_valid_before` (expired, or less than 6 s left),
  `invalid_exact_evm_payload_authorization_valid_after` (not yet valid), `network_mismatch`,
  `invalid_exact_evm_nonce_already_used` (replayed), `invalid_exact_evm_insufficient_balance`,
  `missing_eip712_domain`, `asset_not_deployed_contract` (not this ledger's token); the spec's
  `invalid_network` or `unsupported_scheme` for what is not served. A request that is not a well-formed v2
  payment → 400 with `invalidReason` `invalid_payload`, `invalid_payment_requirements` or
  `invalid_x402_version`; an unexpected failure → 500 `unexpected_verify_error`.
- `POST /settle` (same body) → 200 `{"success": true, "transaction": "0x<64 hex>", "network": ..., "payer": ...}`
  after checking everything `/verify` checks and running the transfer on the ledger (payer debited, payee
  credited, (from, nonce) marked used), or `{"success": false, "errorReason": ..., "transaction": "", ...}`
  with the same reasons (a replay: `invalid_exact_evm_nonce_already_used`). 400 and 500 as for `/verify`, with
  `errorReason`.

Test control plane (not part of the facilitator API; under `/_facilitator`, no authentication, errors
`{"error": "..."}` with 400):

- `GET /_facilitator/health` → `{"status": "ok"}`.
- `GET /_facilitator/settlements` → `{"network", "asset", "startBalance", "settlements": [{"transaction",
  "blockNumber", "network", "asset", "payer", "payTo", "amount", "nonce", "validAfter", "validBefore",
  "settledAt"}], "balances": {address: atomic units, for the addresses that moved}, "usedNonces": n}`.
- `POST /_facilitator/faults` `{"status": 500, "times": 1, "path": "/", "delay_seconds": 0, "hold": null}` → 201:
  the next `times` API requests whose path starts with `path` wait `delay_seconds` then answer `status` (400-599;
  0 serves them normally after the delay, for timeouts; with `hold` "answer", status 0 serves the request at once
  and holds back its answer: a settlement that moved the money though the caller stopped waiting); `GET` lists
  them, `DELETE` clears them.
- `POST /_facilitator/balances` `{"address": "0x...", "balance": "0"}` sets one balance (atomic units).
- `POST /_facilitator/reset` empties the ledger (balances, used nonces, settlements) and the faults.
"""
