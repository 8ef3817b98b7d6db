"""Adapters for external providers (voice AI, messaging, payments).

Each provider gets a folder with an adapter protocol, a real HTTP client for the
provider's public API and a local simulator speaking that same API, so the real
client code runs in every test. The first one, `voice/`, arrives with the agents
and phone-numbers work; nothing in the platform spine calls a provider yet.
"""
