"""What the gateway and the services both know of the public API: its limits, enumerations and defaults.

Pure values and plain functions, no I/O. A service's domain takes its own from here (one definition), and the
gateway builds its request schemas, its OpenAPI document and its pages from them, so the gateway imports no service
code (import-linter: pyproject's [tool.importlinter]). What a provider defines (the x402 headers, the voice
provider's vocabulary) is read from providers/ instead.
"""
