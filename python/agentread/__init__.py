"""agentread: the file reader AI agents call."""

__version__ = "0.1.0"
