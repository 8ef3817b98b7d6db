"""`python -m core.migrate`: run every service's migrations against DATABASE_URL (the owner's), then create and grant
each process's role (core.db_roles), and exit."""
from core import settings
from core.migrations import upgrade_all

if __name__ == "__main__":
    upgrade_all(settings.load("migrate").database_url.reveal())
    print("migrations applied")
