"""Statements a table is created with beyond its columns and indexes (functions, triggers), kept in the table's one
definition: `metadata.create_all` runs them after creating it (core.migrations builds a new schema that way)."""
import sqlalchemy as sa


def created_with(table: sa.Table, *statements: str) -> None:
    """Run `statements` (SQL, in order) right after `table` is created."""
    for statement in statements:
        ddl = sa.DDL(statement.replace("%", "%%"))  # type: ignore[no-untyped-call]  # SQLAlchemy leaves it untyped
        sa.event.listen(table, "after_create", ddl)
