"""`python -m core.migrate`: run every service's migrations against DATABASE_URL (the owner's), then create and grant
each process's role (core.db_roles), and exit. Two runs at once take turns (core.migrations.upgrade_all's advisory
lock, which needs DATABASE_URL straight to PostgreSQL: never through a transaction pooler)."""
from core import settings
from core.migrations import upgrade_all

if __name__ == "__main__":
    upgrade_all(settings.load("migrate").database_url.reveal())
    print("migrations applied")
