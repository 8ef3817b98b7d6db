"""The chain the local facilitator settles on: one EIP-3009 token (USDC) kept in memory, behind the package's
`FacilitatorEvmSigner` protocol, so the package's own `exact` EVM facilitator scheme runs unchanged on it.

The scheme verifies (signature recovery, recipient, amount, validity window) and then simulates
`transferWithAuthorization` with `read_contract`; it settles with `write_contract` and confirms with the receipt's
`Transfer` event. Here those calls run the token contract's own rules, in its order and with its revert strings
(FiatTokenV2): not yet valid, expired, authorization used, invalid signature (recovered again, over the token's own
EIP-712 domain), balance. The package maps those reverts to its reasons (`invalid_exact_evm_nonce_already_used`,
`invalid_exact_evm_insufficient_balance`, ...).

Every address starts with `start_balance` atomic units; a settlement debits the payer, credits the payee, marks
the (from, nonce) pair used and returns a transaction hash (keccak of chain, token, payer and nonce: well-formed
and unique, since a pair settles once). Every payer is an EOA (no code), only the token has code. Callers run
it from one thread (the facilitator's event loop); a lock keeps a settlement atomic all the same."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from eth_account import Account
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak
from x402.mechanisms.evm.eip712 import hash_eip3009_authorization
from x402.mechanisms.evm.exact.eip3009_utils import ERC20_TRANSFER_EVENT_TOPIC
from x402.mechanisms.evm.types import ExactEIP3009Authorization, TransactionReceipt, TypedDataDomain, TypedDataField
from x402.mechanisms.evm.utils import get_evm_chain_id
from x402.mechanisms.evm.verify import verify_eoa_signature, verify_typed_data_strict

from providers.x402 import USDC_DECIMALS

TOKEN_CODE = bytes.fromhex("6080604052")  # any non-empty bytecode: the token is a contract, payers are not
ZERO_ADDRESS = "0x" + "00" * 20
# The facilitator's own (gas-paying) account in `GET /supported`'s signers; it never signs anything here.
FACILITATOR_ADDRESS = Account.from_key(keccak(text="switchboard local x402 facilitator")).address


class Revert(Exception):
    """A contract call reverted; the text reads like a node's ("execution reverted: <reason>")."""

    def __init__(self, reason: str):
        super().__init__(f"execution reverted: {reason}")
        self.reason = reason


@dataclass
class Settlement:
    transaction: str
    block_number: int
    network: str
    asset: str
    payer: str
    pay_to: str
    amount: str
    nonce: str
    valid_after: str
    valid_before: str
    settled_at: str

    def public(self) -> dict[str, Any]:
        d = asdict(self)
        return {"transaction": d["transaction"], "blockNumber": d["block_number"], "network": d["network"],
                "asset": d["asset"], "payer": d["payer"], "payTo": d["pay_to"], "amount": d["amount"],
                "nonce": d["nonce"], "validAfter": d["valid_after"], "validBefore": d["valid_before"],
                "settledAt": d["settled_at"]}


def _key(address: str) -> str:
    return address.lower()


def _uint(value: Any) -> int:
    return value if isinstance(value, int) else int(value)


class Ledger:
    """One token on one chain, in memory; implements `x402.mechanisms.evm.signer.FacilitatorEvmSigner`."""

    def __init__(self, *, network: str, asset: str, asset_name: str, asset_version: str, start_balance: int,
                 clock: Callable[[], float] = time.time):
        if start_balance < 0:
            raise ValueError("the start balance must not be negative")
        self.network = network
        self.chain_id = get_evm_chain_id(network)
        self.asset = to_checksum_address(asset)
        self.asset_name = asset_name
        self.asset_version = asset_version
        self.start_balance = start_balance
        self.clock = clock
        self._lock = threading.RLock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.balances: dict[str, int] = {}
            self.used: dict[tuple[str, str], str] = {}  # (from, nonce) -> transaction
            self.settlements: list[Settlement] = []
            self.receipts: dict[str, TransactionReceipt] = {}
            self.block_number = 1

    # -- the token's state --------------------------------------------------------------------------------

    def balance_of(self, address: str) -> int:
        return self.balances.get(_key(address), self.start_balance)

    def set_balance(self, address: str, balance: int) -> None:
        if balance < 0:
            raise ValueError("a balance must not be negative")
        with self._lock:
            self.balances[_key(address)] = balance

    def authorization_state(self, authorizer: str, nonce: bytes) -> bool:
        return (_key(authorizer), "0x" + nonce.hex()) in self.used

    def _check(self, from_: str, to: str, value: int, valid_after: int, valid_before: int, nonce: bytes,
               signature: bytes) -> None:
        """FiatTokenV2's `_transferWithAuthorization` checks, in its order; raises `Revert`."""
        now = self.clock()
        if not now > valid_after:
            raise Revert("FiatTokenV2: authorization is not yet valid")
        if not now < valid_before:
            raise Revert("FiatTokenV2: authorization is expired")
        if self.authorization_state(from_, nonce):
            raise Revert("FiatTokenV2: authorization is used or canceled")
        authorization = ExactEIP3009Authorization(
            from_address=from_, to=to, value=str(value), valid_after=str(valid_after),
            valid_before=str(valid_before), nonce="0x" + nonce.hex())
        digest = hash_eip3009_authorization(authorization, self.chain_id, self.asset, self.asset_name,
                                            self.asset_version)
        try:
            signed = verify_eoa_signature(digest, signature, from_)
        except ValueError:
            signed = False
        if not signed:
            raise Revert("FiatTokenV2: invalid signature")
        if _key(from_) == _key(ZERO_ADDRESS):
            raise Revert("ERC20: transfer from the zero address")
        if _key(to) == _key(ZERO_ADDRESS):
            raise Revert("ERC20: transfer to the zero address")
        if value > self.balance_of(from_):
            raise Revert("ERC20: transfer amount exceeds balance")

    @staticmethod
    def _transfer_args(args: tuple[Any, ...]) -> tuple[str, str, int, int, int, bytes, bytes]:
        """`transferWithAuthorization`'s arguments, both overloads ((v, r, s) or a `bytes` signature)."""
        if len(args) == 9:
            from_, to, value, valid_after, valid_before, nonce, v, r, s = args
            signature = bytes(r) + bytes(s) + bytes([_uint(v)])
        elif len(args) == 7:
            from_, to, value, valid_after, valid_before, nonce, signature = args
            signature = bytes(signature)
        else:
            raise Revert("transferWithAuthorization: wrong number of arguments")
        return (str(from_), str(to), _uint(value), _uint(valid_after), _uint(valid_before), bytes(nonce),
                signature)

    def transfer_with_authorization(self, *args: Any) -> str:
        from_, to, value, valid_after, valid_before, nonce, signature = self._transfer_args(args)
        with self._lock:
            self._check(from_, to, value, valid_after, valid_before, nonce, signature)
            nonce_hex = "0x" + nonce.hex()
            tx_hash = "0x" + keccak(self.chain_id.to_bytes(32, "big") + bytes.fromhex(self.asset[2:])
                                    + bytes.fromhex(from_[2:]) + nonce).hex()
            self.balances[_key(from_)] = self.balance_of(from_) - value
            self.balances[_key(to)] = self.balance_of(to) + value
            self.used[(_key(from_), nonce_hex)] = tx_hash
            self.block_number += 1
            log = {"address": self.asset, "topics": [ERC20_TRANSFER_EVENT_TOPIC, "0x" + from_[2:].lower().rjust(64, "0"),
                                                      "0x" + to[2:].lower().rjust(64, "0")],
                   "data": "0x" + value.to_bytes(32, "big").hex()}
            self.receipts[tx_hash] = TransactionReceipt(status=1, block_number=self.block_number, tx_hash=tx_hash,
                                                        logs=[log])
            self.settlements.append(Settlement(
                transaction=tx_hash, block_number=self.block_number, network=self.network, asset=self.asset,
                payer=to_checksum_address(from_), pay_to=to_checksum_address(to), amount=str(value),
                nonce=nonce_hex, valid_after=str(valid_after), valid_before=str(valid_before),
                settled_at=datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")))
            return tx_hash

    def public(self) -> dict[str, Any]:
        """The control plane's view: settlements oldest first and the balances that moved from the start."""
        with self._lock:
            return {"network": self.network, "asset": self.asset, "startBalance": str(self.start_balance),
                    "settlements": [s.public() for s in self.settlements],
                    "balances": {to_checksum_address(a): str(b) for a, b in self.balances.items()},
                    "usedNonces": len(self.used)}

    # -- FacilitatorEvmSigner -----------------------------------------------------------------------------

    def get_addresses(self) -> list[str]:
        return [FACILITATOR_ADDRESS]

    def get_chain_id(self) -> int:
        return self.chain_id

    def get_code(self, address: str) -> bytes:
        return TOKEN_CODE if _key(address) == _key(self.asset) else b""

    def get_balance(self, address: str, token_address: str) -> int:
        return self.balance_of(address) if _key(token_address) == _key(self.asset) else 0

    def read_contract(self, address: str, abi: list[dict[str, Any]], function_name: str, *args: Any) -> Any:
        """An `eth_call`: the token's views, and `transferWithAuthorization` simulated (checked, not applied)."""
        if _key(address) != _key(self.asset):
            # No other contract exists here (no Multicall3, no smart wallets): the caller's decode fails.
            raise RuntimeError(f"eth_call to {address}: no contract code at this address on the local ledger")
        if function_name == "transferWithAuthorization":
            with self._lock:
                self._check(*self._transfer_args(args))
            return None
        if function_name == "balanceOf":
            return self.balance_of(str(args[0]))
        if function_name == "authorizationState":
            return self.authorization_state(str(args[0]), bytes(args[1]))
        if function_name == "name":
            return self.asset_name
        if function_name == "version":
            return self.asset_version
        if function_name == "decimals":
            return USDC_DECIMALS
        raise Revert(f"{function_name}: not implemented by the local token")

    def write_contract(self, address: str, abi: list[dict[str, Any]], function_name: str, *args: Any,
                       data_suffix: str | None = None) -> str:
        """A transaction: only the token's `transferWithAuthorization`; a revert raises as a node's would."""
        if _key(address) != _key(self.asset) or function_name != "transferWithAuthorization":
            raise Revert(f"{function_name} on {address}: not supported by the local ledger")
        return self.transfer_with_authorization(*args)

    def send_transaction(self, to: str, data: bytes) -> str:
        raise RuntimeError("raw transactions (smart-wallet deployment) are not supported by the local ledger")

    def wait_for_transaction_receipt(self, tx_hash: str) -> TransactionReceipt:
        receipt = self.receipts.get(tx_hash)
        if receipt is None:
            raise RuntimeError(f"transaction {tx_hash} not found")
        return receipt

    def verify_typed_data(self, address: str, domain: TypedDataDomain, types: dict[str, list[TypedDataField]],
                          primary_type: str, message: dict[str, Any], signature: bytes) -> bool:
        # the check takes its fields' lists wider (a field or a dict): a copy of each, typed so (lists are invariant)
        fields = {name: list[TypedDataField | dict[str, Any]](listed) for name, listed in types.items()}
        return verify_typed_data_strict(self, address, domain, fields, primary_type, message, signature)
