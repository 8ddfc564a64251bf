"""The package's loggers, looked up when a message is first logged: importing logging (with
traceback and string) is a share of a short command's start, and most reads log nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging


def logger(name: str = "agentread") -> logging.Logger:
    """logging.getLogger(name), logging imported on first use."""
    import logging

    return logging.getLogger(name)
