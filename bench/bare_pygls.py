"""The cold-start reference: a pygls server with one trivial request handler and nothing
else imported."""

from pygls.lsp.server import LanguageServer

server = LanguageServer("bare", "0")


@server.feature("agentread/read")
def read(ls, params):
    return {"kind": "text", "content": [], "isError": False}


if __name__ == "__main__":
    server.start_io()
