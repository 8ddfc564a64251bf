"""Everything that serves reads to a client: the read service both servers call (service.py),
the worker processes it reads native formats in (workers.py), the unchanged-read stub
(session.py), and the two protocols, JSON-RPC for the VS Code extension (jsonrpc.py) and MCP for
any other agent (mcp.py)."""
