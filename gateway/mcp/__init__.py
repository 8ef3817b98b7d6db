"""The assistant connector: MCP over Streamable HTTP (protocol) and its tools (tools); routes in gateway.routes.mcp."""
