"""The voice-AI provider boundary: `adapter` (protocol and errors), `client` (the real HTTP
client for the provider's public REST API) and `simulator` (a local server speaking that API)."""
