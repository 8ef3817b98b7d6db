"""Vapi behind the voice port: its request builders and message parsers, the HTTP client for its public REST API
(`client`), the server messages it sends us (`server_messages`) and a local simulator speaking that API (`simulator`)."""
