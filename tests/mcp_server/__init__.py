"""A tiny MCP tool server for the tests (the official ``mcp`` SDK's FastMCP), over stdio or HTTP."""
