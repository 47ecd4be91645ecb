"""The admin console at /admin: HTML pages and forms over the same actions as the JSON admin
routes (`services/web/admin_actions.py`), behind a login with an admin token."""
