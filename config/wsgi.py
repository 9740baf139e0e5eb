import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_application = get_wsgi_application()

from apps.core.live import LiveShortcut  # noqa: E402 (needs the settings above)

# Live pages' polls that find nothing changed are answered before Django runs
# (apps/core/live.py).
application = LiveShortcut(django_application)
