"""The voice-AI provider boundary: `port` (what the services need from a voice provider, in our types, and its
error) and one package per provider behind it: `vapi` (its builders and parsers, HTTP client and local simulator)."""
