"""Database engine factory. Nothing connects at import time."""
from __future__ import annotations

from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine


def async_url(database_url: str) -> str:
    """`postgresql://...` as given by users, with the asyncpg driver SQLAlchemy needs."""
    url = make_url(database_url)
    return url.set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


def create_engine(database_url: str, *, pool_size: int = 10, application_name: str = "switchboard") -> AsyncEngine:
    return create_async_engine(
        async_url(database_url),
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=False,
        connect_args={"server_settings": {"application_name": application_name}},
    )
