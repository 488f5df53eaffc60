"""Who may act on which workspace: access tokens, stored hashed, and the agent they bind.

Used by the interfaces (the HTTP server checks tokens, the CLI manages them);
depends on ``workspace/`` for agent ids only.
"""

from memdir.access.binding import GLOBAL, bind_agent, bind_path_agent, require_admin
from memdir.access.tokens import (
    API_TOKEN_FILE,
    API_TOKEN_ID,
    TOKENS_FILE,
    AccessTokens,
    Principal,
    TokenRecord,
)

__all__ = [
    "API_TOKEN_FILE",
    "API_TOKEN_ID",
    "GLOBAL",
    "TOKENS_FILE",
    "AccessTokens",
    "Principal",
    "TokenRecord",
    "bind_agent",
    "bind_path_agent",
    "require_admin",
]
